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
 * limit on its tenant, in one run on one server, three rounds of the three in turn.
 */

const seconds = Number(process.env.BENCH_SECONDS ?? 8);
/** Each condition is measured this many times, in turn. */
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
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
async function probeRefusals(origin: string, headers: Record<string, string>, n: number): Promise<{ times: number[] }> {
  const times: number[] = [];
  for (let i = 0; i < n; i++) {
    const started = performance.now();
    const res = await fetch(`${origin}/api/method/ping`, { headers });
    await res.arrayBuffer();
    if (res.status === 429) times.push(performance.now() - started);
  }
  return { times };
}

/** The median of `values` (the middle one; the upper of the two middle ones for an even count). */
function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? NaN;
}

function setRateLimit(env: NodeJS.ProcessEnv, value: string): void {
  execFileSync(process.execPath, ['bin/quire.mjs', 'tenant', 'set', 'flood', '--rate-limit', value], { env: { ...process.env, ...env }, stdio: 'ignore' });
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
  /** The quiet tenant measured while the flood runs (from a second before to a second after). */
  const whileFlooding = async (): Promise<{ quiet: LoadResult; flood: LoadResult }> => {
    const flooding = measure(floodLoad);
    await sleep(1000);
    const measured = await measure(quietLoad);
    return { quiet: measured, flood: await flooding };
  };
  const alone: LoadResult[] = [];
  const flooded: LoadResult[] = [];
  const limited: LoadResult[] = [];
  const probes: number[] = [];
  try {
    console.log(`fairness: ${loadGenerator()}, ${ROUNDS} rounds of ${seconds} s per measurement, pool of 10, ${FLOOD_ROWS} ToDos in flood`);
    await measure({ ...quietLoad, seconds: 2 });
    await measure({ ...floodLoad, seconds: 2, connections: 4 });
    // The three conditions in turn, ROUNDS times: the machine's drift over a run (another process
    // waking, the page cache) falls on all three alike, and each figure is the median of its rounds.
    for (let round = 1; round <= ROUNDS; round++) {
      console.log(`round ${round}`);
      const quietAlone = await measure(quietLoad);
      alone.push(quietAlone);
      console.log(row('  quiet alone', quietAlone, seconds));

      const unlimited = await whileFlooding();
      flooded.push(unlimited.quiet);
      console.log(row('  quiet while flood floods', unlimited.quiet, seconds));
      console.log(row('  flood (heavy lists, 48 connections)', unlimited.flood, seconds + 2));

      // The flooding tenant limited (Frappe's site rate limit): nearly all of its requests are refused.
      setRateLimit(env, RATE_LIMIT);
      await sleep(1500);
      const flooding = measure(floodLoad);
      await sleep(1000);
      const [underLimit, refusals] = await Promise.all([measure(quietLoad), probeRefusals(origin, floodLoad.headers ?? {}, 200)]);
      const limitedFlood = await flooding;
      limited.push(underLimit);
      probes.push(...refusals.times);
      console.log(row(`  quiet while flood floods, limited ${RATE_LIMIT}`, underLimit, seconds));
      console.log(row('  flood, limited (nearly all 429)', limitedFlood, seconds + 2));
      setRateLimit(env, '0/10');
      await sleep(1500);
    }
    const soloP99 = median(alone.map((r) => r.p99));
    const summary = (what: string, results: LoadResult[]) =>
      `${what.padEnd(34)} p50 ${median(results.map((r) => r.p50))
        .toFixed(2)
        .padStart(6)} ms  p99 ${median(results.map((r) => r.p99))
        .toFixed(2)
        .padStart(7)} ms` +
      `  (${(median(results.map((r) => r.p99)) / soloP99).toFixed(1)}x alone; rounds ${results.map((r) => `${(r.p99 / soloP99).toFixed(1)}x`).join(' ')})` +
      `  non-2xx/errors ${results.reduce((n, r) => n + r.errors, 0)}`;
    probes.sort((a, b) => a - b);
    const at = (q: number) => probes[Math.min(probes.length - 1, Math.floor(q * probes.length))] ?? NaN;
    console.log(`medians of ${ROUNDS} rounds`);
    console.log(summary('  quiet alone', alone));
    console.log(summary('  quiet while flood floods', flooded));
    console.log(summary(`  quiet, flood limited ${RATE_LIMIT}`, limited));
    console.log(
      `  the limited flood's 429s, probed one at a time meanwhile: ${probes.length} answered, p50 ${at(0.5).toFixed(1)} ms, p99 ${at(0.99).toFixed(1)} ms`,
    );
  } finally {
    server.child.kill('SIGTERM');
  }
}

await main();
