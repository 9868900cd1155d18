import { insertDoc } from '@quire/documents';
import { makePrincipal } from '@quire/permissions';
import { compareSides, type Side } from './compare';
import { recreateDatabase, startProcess } from './support';
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
  // BENCH_PROFILE_DIR=<dir>: each side's V8 CPU profile of the whole run (node --cpu-prof), written on exit.
  const profile = process.env.BENCH_PROFILE_DIR ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROFILE_DIR}`] : [];
  const bare = await startProcess([...profile, '--import', 'tsx', 'bench/floor-server.ts'], { ...floorEnv, FLOOR: 'bare' });
  const express = await startProcess([...profile, '--import', 'tsx', 'bench/floor-server.ts'], { ...floorEnv, FLOOR: 'express' });
  const quire = await startProcess([...profile, 'bin/quire.mjs', 'serve', 'api'], { ...env, PORT: '0' });
  const json = { 'Content-Type': 'application/json' };
  const sides: Side[] = [
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
    await compareSides({ sides, requests, baseline: 'bare node:http + pg', seconds, connections, rounds, about: { rows: ROWS } });
  } finally {
    for (const s of [bare, express, quire]) s.child.kill('SIGTERM');
  }
}

await main();
