import { setTimeout as sleep } from 'node:timers/promises';
import { loadGenerator, measure, type LoadOptions, type LoadResult } from './load';
import { recreateDatabase, startProcess } from './support';
import { LIST_PATH, seedTodos } from './todo-seed';

/**
 * `npm run bench -- fairness` (issue 27): one `quire serve api` on Postgres (pool of 10), two
 * tenants. `quiet` reads a 20-row list over 4 connections; `flood` sends heavy lists (every field,
 * a `like` filter, ordered on an unindexed column, 500 rows, over 30,000 ToDos) over 48. The quiet
 * tenant is measured alone, then while the flood runs, in one run on one server.
 */

const seconds = Number(process.env.BENCH_SECONDS ?? 8);
const FLOOD_ROWS = Number(process.env.BENCH_ROWS ?? 30_000);
const database = 'quire_bench_fairness';

const HEAVY_PATH = `/api/resource/ToDo?${new URLSearchParams({
  fields: JSON.stringify(['*']),
  filters: JSON.stringify([['description', 'like', '%1%']]),
  order_by: 'description desc',
  limit_page_length: '500',
}).toString()}`;

function row(what: string, r: LoadResult, s: number): string {
  const answers = Math.round(r.rps * s);
  return `${what.padEnd(34)} ${String(answers).padStart(7)} answers  ${r.rps.toFixed(0).padStart(6)} rps  p50 ${r.p50.toFixed(2).padStart(8)} ms  p99 ${r.p99.toFixed(2).padStart(9)} ms  non-2xx/errors ${r.errors}`;
}

async function main(): Promise<void> {
  const env = { DATABASE_URL: await recreateDatabase(database), LOG_LEVEL: 'warn', NODE_ENV: 'production', DB_POOL_SIZE: '10' };
  const flood = await seedTodos(env, FLOOD_ROWS, 'flood');
  await flood.close();
  const quiet = await seedTodos(env, 1_000, 'quiet');
  await quiet.close();
  const server = await startProcess(['bin/quire.mjs', 'serve', 'api'], { ...env, PORT: '0' });
  const origin = `http://127.0.0.1:${server.port}`;
  const quietLoad: LoadOptions = {
    origin,
    paths: [LIST_PATH],
    headers: { 'X-Frappe-Site-Name': 'quiet', Authorization: quiet.tokens.admin },
    seconds,
    connections: 4,
    threads: 1,
  };
  const floodLoad: LoadOptions = {
    origin,
    paths: [HEAVY_PATH],
    headers: { 'X-Frappe-Site-Name': 'flood', Authorization: flood.tokens.admin },
    // Starts a second before the quiet tenant's measurement and ends a second after it.
    seconds: seconds + 2,
    connections: 48,
    threads: 1,
  };
  try {
    console.log(`fairness: ${loadGenerator()}, ${seconds} s per measurement, pool of 10, ${FLOOD_ROWS} ToDos in flood`);
    await measure({ ...quietLoad, seconds: 2 });
    await measure({ ...floodLoad, seconds: 2, connections: 4 });
    const alone = await measure(quietLoad);
    console.log(row('quiet alone', alone, seconds));
    const flooding = measure(floodLoad);
    await sleep(1000);
    const underFlood = await measure(quietLoad);
    const floodResult = await flooding;
    console.log(row('quiet while flood floods', underFlood, seconds));
    console.log(row('flood (heavy lists, 48 connections)', floodResult, seconds + 2));
    console.log(`quiet p99 under the flood: ${(underFlood.p99 / alone.p99).toFixed(1)}x alone`);
  } finally {
    server.child.kill('SIGTERM');
  }
}

await main();
