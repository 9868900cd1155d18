import { cpuSeconds, loadGenerator, measure } from './load';
import { recreateDatabase, startProcess, type Started } from './support';
import { LIST_PATH, seedTodos } from './todo-seed';

/**
 * `npm run bench -- reads`: Quire's two hot reads beside the floor, in one run.
 *
 *   get   GET /api/resource/ToDo/<name>, a random one of 1,000 names per request
 *   list  GET /api/resource/ToDo?fields=[5 fields]&filters=[status = Open, date >= 2025-06-01]
 *         &order_by=modified desc&limit_page_length=20
 *
 * over 100,000 ToDo rows. Sides: a bare node:http + pg handler running exactly Quire's SQL as
 * prepared statements (the floor), express 5 doing the same, and `quire serve api` (metrics on)
 * called with `token key:secret` as a System Manager user (access from DocPerm) and as Administrator.
 * Each measurement: BENCH_SECONDS (15) with BENCH_CONNECTIONS (32) keep-alive connections; rounds
 * alternate the sides so drift hits all of them. Reported: requests/s, p50, p99, server CPU per
 * request, and Quire's ratio to the floor.
 */
const seconds = Number(process.env.BENCH_SECONDS ?? 15);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 32);
const rounds = Number(process.env.BENCH_ROUNDS ?? 2);
interface Row {
  round: number;
  request: string;
  side: string;
  rps: number;
  p50: number;
  p99: number;
  cpu_us: number;
  errors: number;
}

const ROWS = Number(process.env.BENCH_ROWS ?? 100_000);
const database = 'quire_bench_reads';

async function main(): Promise<void> {
  const env = { DATABASE_URL: await recreateDatabase(database), LOG_LEVEL: 'warn', NODE_ENV: 'production', DB_POOL_SIZE: '10' };
  const seeded = await seedTodos(env, ROWS);
  await seeded.close();
  const floorEnv = { ...env, PORT: '0', GET_SQL: seeded.getSql, LIST_SQL: seeded.list.text, LIST_VALUES: JSON.stringify(seeded.list.values) };
  const bare = await startProcess(['--import', 'tsx', 'bench/floor-server.ts'], { ...floorEnv, FLOOR: 'bare' });
  const express = await startProcess(['--import', 'tsx', 'bench/floor-server.ts'], { ...floorEnv, FLOOR: 'express' });
  const quire = await startProcess(['bin/quire.mjs', 'serve', 'api'], { ...env, PORT: '0' });
  const requests = {
    get: seeded.names.map((n) => `/api/resource/ToDo/${n}`),
    list: [LIST_PATH],
  };
  const site = { 'X-Frappe-Site-Name': 'bench' };
  const sides: { side: string; server: Started; headers: Record<string, string> }[] = [
    { side: 'bare node:http + pg', server: bare, headers: {} },
    { side: 'express 5 + pg', server: express, headers: {} },
    { side: 'quire (System Manager)', server: quire, headers: { ...site, Authorization: seeded.tokens.clerk } },
    { side: 'quire (Administrator)', server: quire, headers: { ...site, Authorization: seeded.tokens.admin } },
  ];
  try {
    const results: Row[] = [];
    for (const [request, paths] of Object.entries(requests)) {
      // Warm every side (JIT, prepared statements, caches).
      for (const s of sides) await measure({ origin: `http://127.0.0.1:${s.server.port}`, paths, headers: s.headers, seconds: 3, connections });
      for (let round = 1; round <= rounds; round++) {
        for (const s of sides) {
          const pid = s.server.child.pid ?? 0;
          const cpuBefore = cpuSeconds(pid);
          const r = await measure({ origin: `http://127.0.0.1:${s.server.port}`, paths, headers: s.headers, seconds, connections });
          const cpu = cpuSeconds(pid) - cpuBefore;
          results.push({ round, request, side: s.side, ...r, cpu_us: Math.round((cpu / (r.rps * seconds)) * 1e6) });
        }
      }
    }
    console.table(results.map((r) => ({ ...r, rps: Math.round(r.rps), p50: r.p50.toFixed(2), p99: r.p99.toFixed(2) })));
    const summary: Record<string, unknown> = { generator: loadGenerator(), connections, seconds, rounds, rows: ROWS };
    for (const request of Object.keys(requests)) {
      const avg = (side: string, key: 'rps' | 'p50' | 'p99' | 'cpu_us') => {
        const rows = results.filter((r) => r.request === request && r.side === side);
        return rows.reduce((s, r) => s + r[key], 0) / rows.length;
      };
      const floor = avg('bare node:http + pg', 'rps');
      summary[request] = Object.fromEntries(
        sides.map((s) => [
          s.side,
          {
            rps: Math.round(avg(s.side, 'rps')),
            ratio: Number((avg(s.side, 'rps') / floor).toFixed(3)),
            p50_ms: Number(avg(s.side, 'p50').toFixed(2)),
            p99_ms: Number(avg(s.side, 'p99').toFixed(2)),
            cpu_us_per_request: Math.round(avg(s.side, 'cpu_us')),
          },
        ]),
      );
    }
    console.log(JSON.stringify(summary, null, 2));
    if (results.some((r) => r.errors > 0)) throw new Error('some requests failed: see the errors column');
  } finally {
    for (const s of [bare, express, quire]) s.child.kill('SIGTERM');
  }
}

await main();
