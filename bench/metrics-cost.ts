import autocannon from 'autocannon';
import { insertDoc } from '@quire/documents';
import { makePrincipal } from '@quire/permissions';
import { createRuntime, loadRuntimeConfig } from '@quire/runtime';
import { createTenant } from '@quire/tenancy';
import { recreateDatabase, startProcess as start } from './support';

/**
 * `npm run bench:metrics`: what metrics cost. `GET /api/resource/ToDo?limit=20` on the API as
 * `quire serve api` composes it (operations port, health, request metrics) beside the same API
 * without them (bench/api-server.ts), in one run, alternating rounds, same load generator. The
 * goal: within 5 %.
 */
const seconds = Number(process.env.BENCH_SECONDS ?? 10);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 32);
const rounds = Number(process.env.BENCH_ROUNDS ?? 4);
const database = 'quire_bench_metrics';

async function load(url: string, headers: Record<string, string>): Promise<{ rps: number; p99: number; errors: number }> {
  const result = await autocannon({ url, connections, duration: seconds, headers });
  return { rps: result.requests.average, p99: result.latency.p99, errors: result.errors + result.non2xx };
}

const env = { DATABASE_URL: await recreateDatabase(database), LOG_LEVEL: 'warn', NODE_ENV: 'production' };
const rt = await createRuntime({ config: loadRuntimeConfig({ ...process.env, ...env }), name: 'quire-bench' });
const tenant = await createTenant(rt.platform, { name: 'bench' });
const registered = rt.platform.tenants.get('bench');
if (!registered) throw new Error('tenant bench was not registered after createTenant');
const ctx = await rt.platform.context(registered, makePrincipal('Administrator', ['Administrator', 'System Manager']));
for (let i = 0; i < 100; i++) await insertDoc(ctx, 'ToDo', { description: `todo ${i}` });
await rt.close();

const on = await start(['--import', 'tsx', 'bench/api-server.ts', 'on'], { ...env, PORT: '0', DB_POOL_SIZE: '10' });
const off = await start(['--import', 'tsx', 'bench/api-server.ts', 'off'], { ...env, PORT: '0', DB_POOL_SIZE: '10' });
try {
  const headers = { Authorization: `token ${tenant.api_key}:${tenant.api_secret}`, 'X-Frappe-Site-Name': 'bench' };
  const url = (port: number) => `http://127.0.0.1:${port}/api/resource/ToDo?limit=20`;
  for (const side of [on, off]) await autocannon({ url: url(side.port), connections, duration: 2, headers });
  const results: Array<{ round: number; side: string; rps: number; p99: number; errors: number }> = [];
  for (let round = 1; round <= rounds; round++) {
    // Each side goes first every other round, so drift on this shared machine falls on both.
    const order =
      round % 2 === 1
        ? ([
            ['metrics off', off],
            ['metrics on', on],
          ] as const)
        : ([
            ['metrics on', on],
            ['metrics off', off],
          ] as const);
    for (const [side, proc] of order) results.push({ round, side, ...(await load(url(proc.port), headers)) });
  }
  const avg = (side: string) => {
    const rows = results.filter((r) => r.side === side);
    return rows.reduce((s, r) => s + r.rps, 0) / rows.length;
  };
  console.table(results.map((r) => ({ ...r, rps: Math.round(r.rps) })));
  const ratio = avg('metrics on') / avg('metrics off');
  console.log(
    JSON.stringify({
      connections,
      seconds,
      rounds,
      off_rps: Math.round(avg('metrics off')),
      on_rps: Math.round(avg('metrics on')),
      ratio: Number(ratio.toFixed(3)),
    }),
  );
} finally {
  for (const side of [on, off]) side.child.kill('SIGTERM');
}
