import autocannon from 'autocannon';
import { insertDoc } from '@quire/documents';
import { makePrincipal } from '@quire/permissions';
import { listStatement } from '@quire/query';
import { createTenant } from '@quire/tenancy';
import { createRuntime, loadRuntimeConfig } from '@quire/runtime';
import { recreateDatabase, startProcess as start } from './support';

/**
 * `npm run bench`: requests per second for `GET /api/resource/ToDo?limit=20` on Quire's API
 * (a child process, token auth, 100 ToDos) beside a bare node:http + pg handler running the same
 * SQL (another child process), measured in one run with the same Node load generator (autocannon).
 * Needs a Postgres server: BENCH_ADMIN_URL (default postgres://postgres@127.0.0.1:5432/postgres).
 */
const seconds = Number(process.env.BENCH_SECONDS ?? 10);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 32);
const rounds = Number(process.env.BENCH_ROUNDS ?? 2);
const database = 'quire_bench';

async function load(url: string, headers: Record<string, string>): Promise<{ rps: number; p99: number; errors: number }> {
  const result = await autocannon({ url, connections, duration: seconds, headers });
  return { rps: result.requests.average, p99: result.latency.p99, errors: result.errors + result.non2xx };
}

async function main(): Promise<void> {
  const env = { DATABASE_URL: await recreateDatabase(database), LOG_LEVEL: 'warn', NODE_ENV: 'production' };
  // Seed: one tenant, 100 ToDos; and the exact SQL the list compiler emits for the request.
  const rt = await createRuntime({ config: loadRuntimeConfig({ ...process.env, ...env }), name: 'quire-bench' });
  const tenant = await createTenant(rt.platform, { name: 'bench' });
  const admin = makePrincipal('Administrator', ['Administrator', 'System Manager']);
  const registered = rt.platform.tenants.get('bench');
  if (!registered) throw new Error('tenant bench was not registered after createTenant');
  const ctx = await rt.platform.context(registered, admin);
  for (let i = 0; i < 100; i++) await insertDoc(ctx, 'ToDo', { description: `todo ${i}`, priority: ['High', 'Medium', 'Low'][i % 3] });
  const compiled = listStatement({ limit: '20' }, { meta: ctx.meta.require('ToDo'), tenant: ctx.meta, principal: admin, maxPageLength: 100_000 });
  await rt.close();

  const quire = await start(['bin/quire.mjs', 'serve', 'api'], { ...env, PORT: '0', DB_POOL_SIZE: '10' });
  const sqlEnv = { ...env, PORT: '0', SQL_TEXT: compiled.text, SQL_VALUES: JSON.stringify(compiled.values) };
  const bare = await start(['--import', 'tsx', 'bench/bare-list-server.ts'], sqlEnv);
  const plainExpress = await start(['--import', 'tsx', 'bench/express-list-server.ts'], sqlEnv);
  try {
    const quireUrl = `http://127.0.0.1:${quire.port}/api/resource/ToDo?limit=20`;
    const quireHeaders = { Authorization: `token ${tenant.api_key}:${tenant.api_secret}`, 'X-Frappe-Site-Name': 'bench' };
    const bareUrl = `http://127.0.0.1:${bare.port}/api/resource/ToDo?limit=20`;
    const expressUrl = `http://127.0.0.1:${plainExpress.port}/api/resource/ToDo?limit=20`;
    // Warm every side (JIT, prepared statements, caches), then alternate rounds so drift hits all sides.
    await autocannon({ url: quireUrl, connections, duration: 2, headers: quireHeaders });
    await autocannon({ url: bareUrl, connections, duration: 2 });
    await autocannon({ url: expressUrl, connections, duration: 2 });
    const results: Array<{ round: number; side: string; rps: number; p99: number; errors: number }> = [];
    for (let round = 1; round <= rounds; round++) {
      results.push({ round, side: 'bare node:http + pg', ...(await load(bareUrl, {})) });
      results.push({ round, side: 'express 5 + pg', ...(await load(expressUrl, {})) });
      results.push({ round, side: 'quire api', ...(await load(quireUrl, quireHeaders)) });
    }
    const avg = (side: string) => {
      const rows = results.filter((r) => r.side === side);
      return rows.reduce((s, r) => s + r.rps, 0) / rows.length;
    };
    const bareRps = avg('bare node:http + pg');
    const quireRps = avg('quire api');
    const expressRps = avg('express 5 + pg');
    console.table(results.map((r) => ({ ...r, rps: Math.round(r.rps) })));
    console.log(`SQL: ${compiled.text}`);
    console.log(
      JSON.stringify({
        connections,
        seconds,
        rounds,
        bare_rps: Math.round(bareRps),
        express_rps: Math.round(expressRps),
        quire_rps: Math.round(quireRps),
        express_ratio: Number((expressRps / bareRps).toFixed(3)),
        quire_ratio: Number((quireRps / bareRps).toFixed(3)),
      }),
    );
  } finally {
    for (const side of [quire, bare, plainExpress]) side.child.kill('SIGTERM');
  }
}

await main();
