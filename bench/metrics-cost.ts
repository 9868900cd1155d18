import { readFileSync } from 'node:fs';
import autocannon from 'autocannon';
import { insertDoc } from '@quire/documents';
import { makePrincipal } from '@quire/permissions';
import { createRuntime, loadRuntimeConfig } from '@quire/runtime';
import { createTenant } from '@quire/tenancy';
import { recreateDatabase, startProcess as start } from './support';

/**
 * `npm run bench -- metrics`: what metrics cost. `GET /api/resource/ToDo?limit=20` on the API as
 * `quire serve api` composes it (operations port, health, request metrics) beside the same API
 * without them (bench/api-server.ts), in one run, alternating rounds, same load generator. The
 * goal: within 5 %.
 */
const seconds = Number(process.env.BENCH_SECONDS ?? 10);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 32);
const rounds = Number(process.env.BENCH_ROUNDS ?? 4);
const database = 'quire_bench_metrics';

/** CPU time (user + system) a process has used, in µs, from /proc (Linux): clock ticks of 10 ms. */
function cpuMicros(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  return (Number(fields[11]) + Number(fields[12])) * 10_000;
}

/**
 * Throughput is noisy on a shared 2-core machine (an A/A run of two identical servers differs by a
 * few %); the server's own CPU time per request is the steadier measure of what metrics cost.
 */
async function load(url: string, headers: Record<string, string>, pid: number): Promise<{ rps: number; p99: number; errors: number; cpu_us_per_req: number }> {
  const cpuBefore = cpuMicros(pid);
  const result = await autocannon({ url, connections, duration: seconds, headers });
  const cpu = cpuMicros(pid) - cpuBefore;
  return {
    rps: result.requests.average,
    p99: result.latency.p99,
    errors: result.errors + result.non2xx,
    cpu_us_per_req: Math.round(cpu / result.requests.total),
  };
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
  // Warm both (JIT, prepared statements, caches) long enough that the first measured round is not still warming.
  for (const side of [on, off]) await autocannon({ url: url(side.port), connections, duration: 6, headers });
  const results: Array<{ round: number; side: string; rps: number; p99: number; errors: number; cpu_us_per_req: number }> = [];
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
    for (const [side, proc] of order) results.push({ round, side, ...(await load(url(proc.port), headers, proc.child.pid ?? 0)) });
  }
  const avg = (side: string, key: 'rps' | 'cpu_us_per_req') => {
    const rows = results.filter((r) => r.side === side);
    return rows.reduce((sum, r) => sum + r[key], 0) / rows.length;
  };
  console.table(results.map((r) => ({ ...r, rps: Math.round(r.rps) })));
  console.log(
    JSON.stringify({
      connections,
      seconds,
      rounds,
      off_rps: Math.round(avg('metrics off', 'rps')),
      on_rps: Math.round(avg('metrics on', 'rps')),
      rps_ratio: Number((avg('metrics on', 'rps') / avg('metrics off', 'rps')).toFixed(3)),
      off_cpu_us_per_req: Math.round(avg('metrics off', 'cpu_us_per_req')),
      on_cpu_us_per_req: Math.round(avg('metrics on', 'cpu_us_per_req')),
      cpu_ratio: Number((avg('metrics on', 'cpu_us_per_req') / avg('metrics off', 'cpu_us_per_req')).toFixed(3)),
    }),
  );
} finally {
  for (const side of [on, off]) side.child.kill('SIGTERM');
}
