import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { rampingArrivalTime } from '../../load-tests/node/engine/executors';
import { CounterSink, RateSink, Registry, TrendSink } from '../../load-tests/node/engine/metrics';
import { compileThresholds, evaluate, parseThreshold } from '../../load-tests/node/engine/thresholds';
import { validateOptions } from '../../load-tests/node/engine/validate';
import { textSummary } from '../../load-tests/lib/summary';
import { ROOT } from '../support/process';

/**
 * Keeping the Node runner honest: its scheduler, metrics and thresholds against a stub server with
 * a known latency and error rate, where the right numbers are known in advance; thresholds must
 * pass or fail accordingly, with k6's exit code 99 on failure.
 */

interface Stub {
  url: string;
  /** ms after the first request at which each request arrived. */
  arrivals: number[];
  /** When the runner started each request's iteration, in ms from its scenario's start (as the request says). */
  started: number[];
  close(): Promise<void>;
}

const stubs: Stub[] = [];
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'quire-load-test-'));
afterAll(async () => {
  await Promise.all(stubs.map((s) => s.close()));
  fs.rmSync(dir, { recursive: true, force: true });
});

/** Answers every request after `latencyMs`; every `failEvery`-th one with `failStatus`. */
async function stub(latencyMs: number, failEvery = 0, failStatus = 500): Promise<Stub> {
  const arrivals: number[] = [];
  const started: number[] = [];
  let first = 0;
  const server = http.createServer((req, res) => {
    const now = performance.now();
    if (!arrivals.length) first = now;
    arrivals.push(now - first);
    started.push(Number(new URL(req.url ?? '/', 'http://x').searchParams.get('t')));
    const n = arrivals.length;
    req.resume();
    setTimeout(() => {
      const failed = failEvery > 0 && n % failEvery === 0;
      res.writeHead(failed ? failStatus : 200, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ n }));
    }, latencyMs);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const s: Stub = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    arrivals,
    started,
    close: () => new Promise((r) => server.close(() => r())),
  };
  stubs.push(s);
  return s;
}

interface Run {
  code: number | null;
  summary: any;
  stderr: string;
  ms: number;
}

let runs = 0;
/** `npm run load`'s runner on the fixture script against `base`, with these k6 options. */
function runner(base: string, options: unknown): Promise<Run> {
  const summaryFile = path.join(dir, `summary-${++runs}.json`);
  const started = Date.now();
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      'load-tests/node/run.ts',
      'tests/load-tests/fixtures/stub-load.ts',
      '--base',
      base,
      '--quiet',
      '-e',
      `OPTIONS=${JSON.stringify(options)}`,
      '-e',
      `SUMMARY_JSON=${summaryFile}`,
    ],
    { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let stderr = '';
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  child.stdout.resume();
  return new Promise((resolve) => {
    child.once('exit', (code) => {
      const summary = fs.existsSync(summaryFile) ? JSON.parse(fs.readFileSync(summaryFile, 'utf8')) : undefined;
      resolve({ code, summary, stderr, ms: Date.now() - started });
    });
  });
}

const constant = (rate: number, seconds: number, vus: { pre: number; max: number }) => ({
  executor: 'constant-arrival-rate',
  exec: 'hit',
  rate,
  timeUnit: '1s',
  duration: `${seconds}s`,
  preAllocatedVUs: vus.pre,
  maxVUs: vus.max,
});

describe('threshold expressions and sinks (k6 semantics)', () => {
  it('parses every aggregation and operator k6 does, and refuses the rest', () => {
    expect(parseThreshold('p(95)<50')).toEqual({ aggregation: 'p', percentile: 95, operator: '<', value: 50 });
    expect(parseThreshold('p(99.9) <= 1.5')).toEqual({ aggregation: 'p', percentile: 99.9, operator: '<=', value: 1.5 });
    expect(parseThreshold('count==0')).toMatchObject({ aggregation: 'count', operator: '==', value: 0 });
    expect(parseThreshold('rate>=0.95')).toMatchObject({ aggregation: 'rate', operator: '>=' });
    expect(parseThreshold('value!=3')).toMatchObject({ aggregation: 'value', operator: '!=' });
    expect(parseThreshold('avg===10')).toMatchObject({ aggregation: 'avg', operator: '===' });
    for (const bad of ['p(101)<5', 'p95<5', 'mean<5', 'p(95)<', 'p(95)', 'rate<abc']) expect(() => parseThreshold(bad), bad).toThrow();
  });

  it('computes percentiles as k6 does (linear interpolation between ranks)', () => {
    const t = new TrendSink();
    for (const v of [10, 1, 4, 7, 2, 9, 3, 8, 6, 5]) t.add(v);
    expect(t.p(0.5)).toBeCloseTo(5.5);
    expect(t.p(0.95)).toBeCloseTo(9.55);
    expect(t.p(0.9)).toBeCloseTo(9.1);
    expect([t.min, t.max, t.avg(), t.count]).toEqual([1, 10, 5.5, 10]);
    for (let i = 0; i < 5000; i++) t.add(100); // grows past its first buffer
    expect(t.p(0.99)).toBe(100);
  });

  it('passes a Rate or Trend threshold with no samples (as k6) but not a count guard; submetrics filter by tag', () => {
    const registry = new Registry();
    const thresholds = compileThresholds(
      {
        http_req_failed: ['rate<0.01'],
        'http_req_duration{scenario:a}': ['p(95)<50'],
        'http_reqs{scenario:a}': ['count>0'],
        'http_req_duration{ scenario: "b" }': ['max<100'],
      },
      registry,
    );
    evaluate(thresholds, 1000);
    expect(thresholds.map((t) => t.ok)).toEqual([true, true, false, true]);
    registry.add('http_req_duration', 500, { scenario: 'b' });
    registry.add('http_reqs', 1, { scenario: 'b' });
    registry.add('http_req_failed', 1, { scenario: 'b' });
    evaluate(thresholds, 1000);
    expect(thresholds.map((t) => t.ok)).toEqual([false, true, false, false]);
    expect(() => compileThresholds({ nope: ['count>0'] }, new Registry())).toThrow(/no metric/);
    expect(() => compileThresholds({ http_reqs: ['p(95)<1'] }, new Registry())).toThrow(/counter supports count, rate/);
    const count = registry.resolve('http_reqs').sink;
    expect(count instanceof CounterSink && count.count).toBe(1);
    // The same filter written another way is the same submetric.
    const sub = registry.resolve('http_req_duration{scenario:b}').sink;
    expect(sub instanceof TrendSink && sub.count).toBe(1);
    const failed = registry.resolve('http_req_failed').sink;
    expect(failed instanceof RateSink && failed.trues).toBe(1);
  });

  it('marks abortOnFail thresholds only after delayAbortEval', () => {
    const registry = new Registry();
    const [t] = compileThresholds({ http_req_failed: [{ threshold: 'rate<0.1', abortOnFail: true, delayAbortEval: '2s' }] }, registry);
    registry.add('http_req_failed', 1, {});
    expect(evaluate([t!], 1000)).toEqual([]);
    expect(evaluate([t!], 2500)).toEqual([t]);
  });

  it('schedules a ramping arrival rate by the area under its curve, as k6', () => {
    // 0 → 10/s over 10 s: iteration k starts at sqrt(2k) s; then 10/s flat for 1 s.
    const stages = [
      { durationMs: 10_000, targetPerMs: 0.01 },
      { durationMs: 1000, targetPerMs: 0.01 },
    ];
    expect(rampingArrivalTime(0, stages, 1)).toBeCloseTo(Math.sqrt(2) * 1000, 6);
    expect(rampingArrivalTime(0, stages, 50)).toBeCloseTo(10_000, 6);
    expect(rampingArrivalTime(0, stages, 51)).toBeCloseTo(10_100, 6);
    expect(rampingArrivalTime(0, stages, 60)).toBeCloseTo(11_000, 6);
    expect(rampingArrivalTime(0, stages, 61)).toBeUndefined();
    // Ramping down 10/s → 0 over 10 s: half the iterations in the first 2.93 s.
    expect(rampingArrivalTime(0.01, [{ durationMs: 10_000, targetPerMs: 0 }], 25)).toBeCloseTo(10_000 * (1 - Math.SQRT1_2), 6);
  });

  it('validates options the way k6 refuses them', () => {
    const errors = validateOptions(
      {
        scenarios: {
          a: { executor: 'constant-arrival-rate', exec: 'hit', rate: 1.5, duration: '10x', preAllocatedVUs: 5, maxVUs: 2 },
          b: { executor: 'ramping-arrival-rate', exec: 'missing', preAllocatedVUs: 1, stages: [] },
          c: { executor: 'externally-controlled' },
        },
        thresholds: { 'http_req_duration{scenario:z}': ['p95<3'], nope: ['count>1'], 'http_reqs{scenario}': ['count>1'] },
      },
      { metricType: (n) => (n === 'http_req_duration' ? 'trend' : n === 'http_reqs' ? 'counter' : undefined), functions: new Set(['hit']) },
    );
    expect(errors.join('\n')).toMatchInlineSnapshot(`
      "scenario a.duration: invalid duration "10x"
      scenario a.rate: a whole number of iterations per timeUnit, at least 1 (got 1.5)
      scenario a.maxVUs: a whole number, at least preAllocatedVUs (got 2)
      scenario b: exec missing is not a function the script exports
      scenario b.stages: at least one stage
      scenario c: unknown executor "externally-controlled"
      threshold on http_req_duration{scenario:z}: no scenario z
      threshold on http_req_duration{scenario:z}: threshold "p95<3": unknown aggregation "p95"
      threshold on nope: no metric nope (built in, or declared by the script in its init context)
      threshold on http_reqs{scenario}: malformed tag expression "scenario" in http_reqs{scenario}"
    `);
  });

  it('prints a k6-like text summary with each threshold and its value', () => {
    const text = textSummary({
      root_group: { name: '', path: '', id: '', groups: [], checks: [{ name: 'ok', path: '::ok', id: 'x', passes: 9, fails: 1 }] },
      options: { summaryTrendStats: ['avg', 'p(95)'], summaryTimeUnit: '', noColor: true },
      state: { isStdOutTTY: false, isStdErrTTY: false, testRunDurationMs: 2000 },
      metrics: {
        http_req_duration: { type: 'trend', contains: 'time', values: { avg: 12.5, 'p(95)': 0.25 } },
        'http_req_duration{scenario:a}': { type: 'trend', contains: 'time', values: { avg: 1500, 'p(95)': 2000 }, thresholds: { 'p(95)<100': { ok: false } } },
        http_reqs: { type: 'counter', contains: 'default', values: { count: 10, rate: 5 } },
        http_req_failed: { type: 'rate', contains: 'default', values: { rate: 0.1, passes: 1, fails: 9 }, thresholds: { 'rate<0.5': { ok: true } } },
      },
    });
    expect(text).toContain("✗ 'p(95)<100' p(95)=2s");
    expect(text).toContain("✓ 'rate<0.5' rate=10.00%");
    expect(text).toMatch(/http_req_duration\.+: avg=12\.5ms p\(95\)=250µs/);
    expect(text).toMatch(/ {6}\{ scenario:a \}\.+: avg=1\.5s p\(95\)=2s/);
    expect(text).toMatch(/http_req_failed\.+: 10\.00% +1 out of 10/);
    expect(text).toMatch(/checks_succeeded\.+: 90\.00% +9 out of 10/);
    expect(text).toContain('✗ 1 threshold(s) failed: http_req_duration{scenario:a}: p(95)<100');
  });
});

describe('the runner against stub servers with known latency and errors', () => {
  it('measures, counts and judges what the stubs really did; exits 99 when a threshold fails', { timeout: 80_000 }, async () => {
    const [fast, ramp, loops, stuck, failing, slow, saturated, broken] = await Promise.all([
      stub(20),
      stub(5),
      stub(20),
      stub(3000),
      stub(20, 10),
      stub(30),
      stub(100),
      stub(5, 1),
    ]);
    const [passing, failed, aborted, invalid] = await Promise.all([
      runner(fast.url, {
        scenarios: {
          // 40/s for 2 s: exactly 80 iterations of 20 ms (a VU for each: a busy machine may stall the
          // runner for half a second, and dropping is the saturated scenario's subject, not this one's).
          ok: { ...constant(40, 2, { pre: 80, max: 80 }), env: { TARGET: fast.url } },
          // 0 → 40/s over 2 s, then 40/s for 1 s: 40 + 40 iterations.
          ramp: {
            executor: 'ramping-arrival-rate',
            exec: 'hit',
            startRate: 0,
            timeUnit: '1s',
            stages: [
              { duration: '2s', target: 40 },
              { duration: '1s', target: 40 },
            ],
            preAllocatedVUs: 80,
            maxVUs: 80,
            env: { TARGET: ramp.url },
          },
          // The closed-model executors, on another stub.
          loop: { executor: 'constant-vus', exec: 'hit', vus: 2, duration: '1s', env: { TARGET: loops.url } },
          each: { executor: 'per-vu-iterations', exec: 'hit', vus: 3, iterations: 4, env: { TARGET: loops.url } },
          shared: { executor: 'shared-iterations', exec: 'hit', vus: 3, iterations: 10, startTime: '1s', env: { TARGET: loops.url } },
          // Iterations still running 200 ms after the scenario's end are interrupted: not counted, nor their requests.
          cut: { ...constant(10, 1, { pre: 10, max: 10 }), gracefulStop: '200ms', env: { TARGET: stuck.url } },
          rampvus: {
            executor: 'ramping-vus',
            exec: 'hit',
            startVUs: 0,
            stages: [
              { duration: '1s', target: 3 },
              { duration: '1s', target: 0 },
            ],
            env: { TARGET: loops.url },
          },
        },
        thresholds: {
          // (A timer may fire up to a millisecond early: hence 19, not 20.)
          'http_req_duration{scenario:ok}': ['med>=19', 'p(95)<2000'],
          'http_req_failed{scenario:ok}': ['rate==0'],
          'iterations{scenario:ok}': ['count==80'],
          'dropped_iterations{scenario:ok}': ['count==0'],
          'iterations{scenario:ramp}': ['count>=79', 'count<=80'],
          // Two VUs looping 20 ms iterations for 1 s: at most 100.
          'iterations{scenario:loop}': ['count>=2', 'count<=100'],
          'iterations{scenario:each}': ['count==12'],
          // exec.scenario.iterationInTest numbers a scenario's iterations 0…11 across its VUs.
          'iteration_numbers{scenario:each}': ['min==0', 'max==11'],
          'iterations{scenario:shared}': ['count==10'],
          'iterations{scenario:rampvus}': ['count>0'],
          'iterations{scenario:cut}': ['count==0'],
          'http_reqs{scenario:cut}': ['count==0'],
          vus_max: ['value>=30'],
          checks: ['rate==1'],
        },
      }),
      runner(failing.url, {
        scenarios: {
          // One answer in ten is a 500: 10% failed.
          errors: { ...constant(40, 2, { pre: 80, max: 80 }), env: { TARGET: failing.url } },
          // 30 ms answers.
          slow: { ...constant(20, 2, { pre: 10, max: 20 }), env: { TARGET: slow.url } },
          // 50/s of 100 ms iterations on at most 2 VUs: most iterations are dropped.
          saturated: { ...constant(50, 2, { pre: 1, max: 2 }), env: { TARGET: saturated.url } },
        },
        thresholds: {
          'http_req_failed{scenario:errors}': ['rate<0.05', 'rate<0.2'],
          'http_reqs{scenario:errors}': ['count==80'],
          'http_req_duration{scenario:slow}': ['p(95)<10', 'min>=29'],
          'http_req_failed{scenario:slow}': ['rate==0'],
          'dropped_iterations{scenario:saturated}': ['count==0'],
          'iterations{scenario:saturated}': ['count>0'],
        },
      }),
      // Every answer fails: abortOnFail stops a 30 s run after 1 s.
      runner(broken.url, {
        scenarios: { s: constant(20, 30, { pre: 2, max: 5 }) },
        thresholds: { http_req_failed: [{ threshold: 'rate<0.5', abortOnFail: true, delayAbortEval: '1s' }] },
      }),
      runner(fast.url, { scenarios: { s: constant(1, 1, { pre: 1, max: 1 }) }, thresholds: { no_such_metric: ['count==0'] } }),
    ]);

    const values = (run: Run, name: string) => run.summary?.metrics?.[name]?.values;
    const verdicts = (run: Run, name: string) => run.summary?.metrics?.[name]?.thresholds;

    expect(passing.code, passing.stderr).toBe(0);
    expect(values(passing, 'iterations{scenario:ok}').count).toBe(80);
    expect(fast.arrivals).toHaveLength(80); // the server saw what the runner counted (the invalid run sent nothing)
    expect(values(passing, 'http_req_duration{scenario:ok}').med).toBeGreaterThanOrEqual(19);
    expect(ramp.arrivals.length).toBe(values(passing, 'iterations{scenario:ramp}').count);
    const closed = ['loop', 'each', 'shared', 'rampvus'].reduce((n, sc) => n + (values(passing, `iterations{scenario:${sc}}`).count as number), 0);
    expect(loops.arrivals).toHaveLength(closed);
    expect(stuck.arrivals).toHaveLength(10);
    expect(passing.stderr).not.toContain('iteration error');
    // Iterations start when the area under the rate reaches their number: the rate is 20·t per
    // second, so N(t) = 10·t², i.e. 10 by 1 s, 22.5 by 1.5 s, 40 by 2 s, then 40/s. Never early;
    // late only by the runner's own stalls (a busy machine), hence the looser lower bounds.
    const by = (s: number) => ramp.started.filter((t) => t < s * 1000).length;
    for (const [s, n] of [
      [1, 10],
      [1.5, 22.5],
      [2, 40],
      [2.5, 60],
    ] as const) {
      expect(by(s), `started by ${s} s (expected ${n})`).toBeLessThanOrEqual(Math.ceil(n) + 1);
      expect(by(s), `started by ${s} s (expected ${n})`).toBeGreaterThanOrEqual(Math.floor(n) - 10);
    }
    // A constant rate starts iteration k at k / rate: 40/s → one every 25 ms.
    expect(Math.max(...fast.started)).toBeGreaterThanOrEqual(1970); // (1975, give or take the clocks' rounding)
    expect(fast.started.filter((t) => t < 1000).length).toBeLessThanOrEqual(41);

    expect(failed.code, failed.stderr).toBe(99);
    expect(verdicts(failed, 'http_req_failed{scenario:errors}')).toEqual({ 'rate<0.05': { ok: false }, 'rate<0.2': { ok: true } });
    expect(values(failed, 'http_req_failed{scenario:errors}')).toMatchObject({ rate: 0.1, passes: 8, fails: 72 });
    expect(verdicts(failed, 'http_reqs{scenario:errors}')).toEqual({ 'count==80': { ok: true } });
    expect(failing.arrivals).toHaveLength(80);
    expect(verdicts(failed, 'http_req_duration{scenario:slow}')).toEqual({ 'p(95)<10': { ok: false }, 'min>=29': { ok: true } });
    expect(verdicts(failed, 'http_req_failed{scenario:slow}')).toEqual({ 'rate==0': { ok: true } });
    expect(verdicts(failed, 'dropped_iterations{scenario:saturated}')).toEqual({ 'count==0': { ok: false } });
    const done = values(failed, 'iterations{scenario:saturated}').count as number;
    const lost = values(failed, 'dropped_iterations{scenario:saturated}').count as number;
    expect(done + lost).toBe(100); // every scheduled iteration either ran or was dropped
    expect(saturated.arrivals).toHaveLength(done);
    expect(done).toBeLessThan(50); // 2 VUs × under 10 iterations/s × 2 s, not 100
    expect(failed.stderr).toContain('insufficient VUs, reached 2 active VUs');
    expect(failed.stderr).toMatch(/exit 99 — failed: .*http_req_duration\{scenario:slow\}: p\(95\)<10/);

    expect(aborted.code, aborted.stderr).toBe(99);
    expect(aborted.stderr).toMatch(/run stopped: threshold http_req_failed: 'rate<0.5' failed \(abortOnFail\)/);
    expect(aborted.ms).toBeLessThan(20_000);
    expect(values(aborted, 'http_req_failed').rate).toBe(1);

    expect(invalid.code).toBe(104);
    expect(invalid.stderr).toContain('no metric no_such_metric');
  });
});

describe('expected statuses', () => {
  it('does not count a 429 as failed when the request expects it beside a range (the fairness flood)', { timeout: 30_000 }, async () => {
    // Every other answer is a 429: failed under the default callback (200–399), expected under the other.
    const [plainStub, floodStub] = await Promise.all([stub(5, 2, 429), stub(5, 2, 429)]);
    const run = await runner(plainStub.url, {
      scenarios: {
        plain: { ...constant(20, 1, { pre: 5, max: 5 }), env: { TARGET: plainStub.url } },
        flood: { ...constant(20, 1, { pre: 5, max: 5 }), env: { TARGET: floodStub.url, EXPECT_429: '1' } },
      },
      thresholds: { 'http_req_failed{scenario:plain}': ['rate==0.5'], 'http_req_failed{scenario:flood}': ['rate==0'] },
    });
    expect(run.code, run.stderr).toBe(0);
    expect([plainStub.arrivals.length, floodStub.arrivals.length]).toEqual([20, 20]);
    const failed = (scenario: string) => run.summary.metrics[`http_req_failed{scenario:${scenario}}`].values;
    expect(failed('plain')).toMatchObject({ passes: 10, fails: 10 });
    expect(failed('flood')).toMatchObject({ passes: 0, fails: 20 });
  });
});
