import { compareSides, type Side } from './compare';
import { recreateDatabase, startProcess } from './support';
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
    get: { paths: seeded.names.map((n) => `/api/resource/ToDo/${n}`) },
    list: { paths: [LIST_PATH] },
  };
  const site = { 'X-Frappe-Site-Name': 'bench' };
  const sides: Side[] = [
    { side: 'bare node:http + pg', server: bare, headers: {} },
    { side: 'express 5 + pg', server: express, headers: {} },
    { side: 'quire (System Manager)', server: quire, headers: { ...site, Authorization: seeded.tokens.clerk } },
    { side: 'quire (Administrator)', server: quire, headers: { ...site, Authorization: seeded.tokens.admin } },
  ];
  try {
    await compareSides({ sides, requests, baseline: 'bare node:http + pg', seconds, connections, rounds, about: { rows: ROWS } });
  } finally {
    for (const s of [bare, express, quire]) s.child.kill('SIGTERM');
  }
}

await main();
