import { insertDoc } from '@quire/documents';
import { makePrincipal } from '@quire/permissions';
import { cpuSeconds, loadGenerator, measure } from './load';
import { recreateDatabase, startProcess, type Started } from './support';
import { CLERK, seedTodos } from './todo-seed';

/**
 * `npm run bench -- writes`: creating and updating a ToDo through Quire (validation, naming, hooks,
 * the webhook outbox row, one transaction; a Webhook on ToDo insert and update makes the outbox
 * rows real) beside a bare node:http + pg handler running one INSERT / UPDATE … RETURNING in a
 * transaction, and express 5 doing the same. One run, rounds alternating; as the System Manager user.
 *
 *   post  POST /api/resource/ToDo {"description": …, "priority": "High"}
 *   put   PUT /api/resource/ToDo/<name> {"description": …}, a random one of 1,000 names
 */
const seconds = Number(process.env.BENCH_SECONDS ?? 15);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 32);
const rounds = Number(process.env.BENCH_ROUNDS ?? 2);
const ROWS = Number(process.env.BENCH_ROWS ?? 10_000);
const database = 'quire_bench_writes';

async function main(): Promise<void> {
  const env = { DATABASE_URL: await recreateDatabase(database), LOG_LEVEL: 'warn', NODE_ENV: 'production', DB_POOL_SIZE: '10' };
  const seeded = await seedTodos(env, ROWS);
  const tenant = seeded.platform.tenants.get('bench');
  if (!tenant) throw new Error('tenant bench missing');
  const ctx = await seeded.platform.context(tenant, makePrincipal('Administrator', ['Administrator', 'System Manager']));
  for (const event of ['after_insert', 'on_update']) {
    await insertDoc(ctx, 'Webhook', {
      name: `bench-${event}`,
      webhook_doctype: 'ToDo',
      webhook_docevent: event,
      request_url: 'http://127.0.0.1:9/hook',
      request_structure: 'Form URL-Encoded',
    });
  }
  await seeded.close();

  const returning = `RETURNING ${seeded.columns.join(', ')}`;
  const now = `(now() at time zone 'utc')`;
  const floorEnv = {
    ...env,
    PORT: '0',
    INSERT_SQL: `INSERT INTO ${seeded.table} ("name", "creation", "modified", "modified_by", "owner", "docstatus", "idx", "status", "priority", "description")
                 VALUES ($1, ${now}, ${now}, '${CLERK.email}', '${CLERK.email}', 0, 0, 'Open', $3, $2) ${returning}`,
    UPDATE_SQL: `UPDATE ${seeded.table} SET "description" = $2, "modified" = ${now}, "modified_by" = '${CLERK.email}' WHERE "name" = $1 ${returning}`,
  };
  const bare = await startProcess(['--import', 'tsx', 'bench/floor-server.ts'], { ...floorEnv, FLOOR: 'bare' });
  const express = await startProcess(['--import', 'tsx', 'bench/floor-server.ts'], { ...floorEnv, FLOOR: 'express' });
  const quire = await startProcess(['bin/quire.mjs', 'serve', 'api'], { ...env, PORT: '0' });
  const json = { 'Content-Type': 'application/json' };
  const sides: { side: string; server: Started; headers: Record<string, string> }[] = [
    { side: 'bare node:http + pg', server: bare, headers: json },
    { side: 'express 5 + pg', server: express, headers: json },
    { side: 'quire (System Manager)', server: quire, headers: { ...json, 'X-Frappe-Site-Name': 'bench', Authorization: seeded.tokens.clerk } },
  ];
  const requests = {
    post: { method: 'POST' as const, paths: ['/api/resource/ToDo'], body: JSON.stringify({ description: 'written by the benchmark', priority: 'High' }) },
    put: {
      method: 'PUT' as const,
      paths: seeded.names.map((n) => `/api/resource/ToDo/${n}`),
      body: JSON.stringify({ description: 'changed by the benchmark' }),
    },
  };
  try {
    const results: { round: number; request: string; side: string; rps: number; p50: number; p99: number; cpu_us: number; errors: number }[] = [];
    for (const [request, r] of Object.entries(requests)) {
      for (const s of sides) await measure({ origin: `http://127.0.0.1:${s.server.port}`, ...r, headers: s.headers, seconds: 3, connections });
      for (let round = 1; round <= rounds; round++) {
        for (const s of sides) {
          const pid = s.server.child.pid ?? 0;
          const before = cpuSeconds(pid);
          const m = await measure({ origin: `http://127.0.0.1:${s.server.port}`, ...r, headers: s.headers, seconds, connections });
          results.push({ round, request, side: s.side, ...m, cpu_us: Math.round(((cpuSeconds(pid) - before) / (m.rps * seconds)) * 1e6) });
        }
      }
    }
    console.table(results.map((r) => ({ ...r, rps: Math.round(r.rps), p50: r.p50.toFixed(2), p99: r.p99.toFixed(2) })));
    const summary: Record<string, unknown> = { generator: loadGenerator(), connections, seconds, rounds, rows: ROWS };
    for (const request of Object.keys(requests)) {
      const avg = (side: string, key: 'rps' | 'p50' | 'p99' | 'cpu_us') => {
        const rows = results.filter((r) => r.request === request && r.side === side);
        return rows.reduce((sum, r) => sum + r[key], 0) / rows.length;
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
