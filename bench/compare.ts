import { cpuSeconds, loadGenerator, measure, type LoadOptions } from './load';
import type { Started } from './support';

/** One side of a comparison: a server process and the headers its requests carry. */
export interface Side {
  side: string;
  server: Started;
  headers: Record<string, string>;
}

export type RequestSpec = Pick<LoadOptions, 'paths' | 'method' | 'body'>;

export interface Comparison {
  sides: readonly Side[];
  requests: Record<string, RequestSpec>;
  /** The side every other is a ratio of (the floor, or the reference caller). */
  baseline: string;
  seconds: number;
  connections: number;
  rounds: number;
  /** More fields for the summary (rows seeded, …). */
  about?: Record<string, unknown>;
}

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

/**
 * Measures every side on every request in one run: a 3 s warm-up each (JIT, prepared statements,
 * caches), then `rounds` rounds alternating the sides, each round starting at the next side, so
 * drift hits all of them. Prints each measurement and a summary per request (req/s, ratio to the
 * baseline, p50, p99, server CPU per request); throws when any request failed.
 */
export async function compareSides(c: Comparison): Promise<void> {
  const results: Row[] = [];
  // BENCH_ONLY=<request>[,<request>]: measure only these (e.g. while profiling one of them).
  const only = process.env.BENCH_ONLY?.split(',');
  const requests = Object.entries(c.requests).filter(([request]) => !only || only.includes(request));
  for (const [request, spec] of requests) {
    const load = (s: Side, seconds: number) =>
      measure({ origin: `http://127.0.0.1:${s.server.port}`, ...spec, headers: s.headers, seconds, connections: c.connections });
    for (const s of c.sides) await load(s, 3);
    for (let round = 1; round <= c.rounds; round++) {
      // Each round starts at the next side: no side always runs first, or right after another.
      const start = (round - 1) % c.sides.length;
      const order = [...c.sides.slice(start), ...c.sides.slice(0, start)];
      for (const s of order) {
        const pid = s.server.child.pid ?? 0;
        const before = cpuSeconds(pid);
        const m = await load(s, c.seconds);
        results.push({ round, request, side: s.side, ...m, cpu_us: Math.round(((cpuSeconds(pid) - before) / (m.rps * c.seconds)) * 1e6) });
      }
    }
  }
  console.table(results.map((r) => ({ ...r, rps: Math.round(r.rps), p50: r.p50.toFixed(2), p99: r.p99.toFixed(2) })));
  const summary: Record<string, unknown> = { generator: loadGenerator(), connections: c.connections, seconds: c.seconds, rounds: c.rounds, ...c.about };
  for (const [request] of requests) {
    const avg = (side: string, key: 'rps' | 'p50' | 'p99' | 'cpu_us') => {
      const rows = results.filter((r) => r.request === request && r.side === side);
      return rows.reduce((sum, r) => sum + r[key], 0) / rows.length;
    };
    const baseline = avg(c.baseline, 'rps');
    summary[request] = Object.fromEntries(
      c.sides.map((s) => [
        s.side,
        {
          rps: Math.round(avg(s.side, 'rps')),
          ratio: Number((avg(s.side, 'rps') / baseline).toFixed(3)),
          p50_ms: Number(avg(s.side, 'p50').toFixed(2)),
          p99_ms: Number(avg(s.side, 'p99').toFixed(2)),
          cpu_us_per_request: Math.round(avg(s.side, 'cpu_us')),
        },
      ]),
    );
  }
  console.log(JSON.stringify(summary, null, 2));
  if (results.some((r) => r.errors > 0)) throw new Error('some requests failed: see the errors column');
}
