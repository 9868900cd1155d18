import { execFileSync } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { loadGenerator, measure, type LoadOptions, type LoadResult } from './load';
import { recreateDatabase, startProcess } from './support';
import { LIST_PATH, seedTodos } from './todo-seed';

/**
 * `npm run bench -- fairness` (issue 27): one `quire serve api` on Postgres (pool of 10), two
 * tenants. `quiet` reads a 20-row list over 4 connections; `flood` sends heavy lists (every field,
 * a `like` filter, ordered on an unindexed column, 500 rows, over 30,000 ToDos) over 48. The quiet
 * tenant is measured alone, then while the flood runs, then while the flood runs with a site rate
 * limit on its tenant, in one run on one server.
 */

const seconds = Number(process.env.BENCH_SECONDS ?? 8);
const FLOOD_ROWS = Number(process.env.BENCH_ROWS ?? 30_000);
const database = 'quire_bench_fairness';
/** The flooding tenant's site rate limit in the third measurement: half a second of request time per 10 s. */
const RATE_LIMIT = process.env.BENCH_RATE_LIMIT ?? '0.5/10';

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

/** Sends `n` of the flooding tenant's requests one after another and times the ones refused (429). */
async function probeRefusals(origin: string, headers: Record<string, string>, n: number): Promise<{ sent: number; count: number; p50: number; p99: number }> {
  const times: number[] = [];
  for (let i = 0; i < n; i++) {
    const started = performance.now();
    const res = await fetch(`${origin}/api/method/ping`, { headers });
    await res.arrayBuffer();
    if (res.status === 429) times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  const at = (q: number) => times[Math.min(times.length - 1, Math.floor(q * times.length))] ?? NaN;
  return { sent: n, count: times.length, p50: at(0.5), p99: at(0.99) };
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

    // The flooding tenant limited (Frappe's site rate limit): nearly all of its requests are refused.
    execFileSync(process.execPath, ['bin/quire.mjs', 'tenant', 'set', 'flood', '--rate-limit', RATE_LIMIT], {
      env: { ...process.env, ...env },
      stdio: 'ignore',
    });
    await sleep(1500);
    const limited = measure(floodLoad);
    await sleep(1000);
    const [underLimited, refusals] = await Promise.all([measure(quietLoad), probeRefusals(origin, floodLoad.headers ?? {}, 200)]);
    const limitedResult = await limited;
    console.log(row(`quiet while flood floods, limited ${RATE_LIMIT}`, underLimited, seconds));
    console.log(row('flood, limited (nearly all 429)', limitedResult, seconds + 2));
    console.log(
      `quiet p99 under the limited flood: ${(underLimited.p99 / alone.p99).toFixed(1)}x alone; the flood's 429s, probed one at a time meanwhile: ${refusals.count} of ${refusals.sent}, p50 ${refusals.p50.toFixed(1)} ms, p99 ${refusals.p99.toFixed(1)} ms`,
    );
  } finally {
    server.child.kill('SIGTERM');
  }
}

await main();
