// A k6 test run, the k6 way: validate options (exit 104), setup() (its result, as JSON, to every
// iteration), every scenario at its startTime, thresholds evaluated each second (abortOnFail
// stops the run), teardown(), the summary (handleSummary's outputs, or the text summary), and
// k6's exit code: 0, 99 when a threshold failed, 105 interrupted, 107 a script error in
// setup/teardown, 108 exec.test.abort(), 110 exec.test.fail().
import { setMaxListeners } from 'node:events';
import fs from 'node:fs';
import path from 'node:path';
import { isatty } from 'node:tty';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { failedThresholds, textSummary, type SummaryData, type SummaryMetric } from '../../lib/summary';
import { checkCounts } from '../k6/k6';
import { iterationStore, testState, type IterationContext } from './context';
import { clock, durationMs } from './duration';
import { ScenarioRun, type ScenarioConfig } from './executors';
import { CounterSink, Registry, sinkValues, type Tags } from './metrics';
import { compileThresholds, evaluate, type Threshold } from './thresholds';
import { validateOptions, type OptionsShape } from './validate';
import { keepWindow, takeWindow } from './window';

export const EXIT = { ok: 0, thresholds: 99, invalidConfig: 104, interrupted: 105, scriptException: 107, aborted: 108, markedFailed: 110 } as const;

export type ScriptFunction = (data?: unknown) => unknown;

/** The script's module namespace, as imported. */
export type ScriptModule = Record<string, unknown>;

export interface RunOptions {
  registry: Registry;
  /** `__ENV` of the test. */
  env: Record<string, string>;
  /** Aborting it stops the test as Ctrl-C stops k6 (teardown and summary still run). */
  interrupt?: AbortSignal;
  /** A progress line every this many ms (0: none). */
  progressEveryMs?: number;
  /** Where progress and warnings go. */
  log?: (line: string) => void;
  /** Writes handleSummary's outputs (stdout, stderr, files); default: the real ones. */
  write?: (target: string, content: string) => void;
}

export interface RunResult {
  exitCode: number;
  summary: SummaryData;
  failedThresholds: string[];
  /** The reason the run stopped early, if it did. */
  stopped?: string;
  /** The load generator's event-loop delay during the scenarios (ms): high values inflate latencies. */
  eventLoopDelay: { p50: number; p99: number; max: number };
}

export class ConfigError extends Error {}

function fn(mod: ScriptModule, name: string): ScriptFunction | undefined {
  const f = mod[name];
  return typeof f === 'function' ? (f as ScriptFunction) : undefined;
}

/** k6's shortcuts (`vus` + `duration`, `iterations`, `stages`) as one `default` scenario. */
export function normalizeScenarios(options: Record<string, unknown>): Record<string, ScenarioConfig> {
  const given = options.scenarios as Record<string, ScenarioConfig> | undefined;
  if (given && Object.keys(given).length) return given;
  const vus = typeof options.vus === 'number' ? options.vus : 1;
  if (Array.isArray(options.stages)) return { default: { executor: 'ramping-vus', startVUs: vus, stages: options.stages as ScenarioConfig['stages'] } };
  if (typeof options.duration === 'string') return { default: { executor: 'constant-vus', vus, duration: options.duration } };
  if (typeof options.iterations === 'number') return { default: { executor: 'shared-iterations', vus, iterations: options.iterations } };
  return { default: { executor: 'per-vu-iterations', vus: 1, iterations: 1 } };
}

async function withTimeout<T>(what: string, ms: number, work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not finish within ${ms / 1000}s`)), ms);
  });
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

function lifecycleContext(group: string, env: Record<string, string>): IterationContext {
  return {
    vu: { idInTest: 0, iterationInInstance: 0, iterationInScenario: 0 },
    scenario: undefined,
    iterationInTest: 0,
    tags: { group: `::${group}` },
    env,
    signal: new AbortController().signal,
    interrupted: false,
  };
}

function message(e: unknown): string {
  return e instanceof Error ? (e.stack ?? e.message) : String(e);
}

/** handleSummary's data: every metric with at least one sample, or with a threshold. */
export function summaryData(registry: Registry, thresholds: Threshold[], trendStats: string[], elapsedMs: number, setupData: unknown): SummaryData {
  const seconds = elapsedMs / 1000;
  const metrics: Record<string, SummaryMetric> = {};
  const byName = new Map<string, Threshold[]>();
  for (const t of thresholds) byName.set(t.metricName, [...(byName.get(t.metricName) ?? []), t]);
  for (const m of registry.metrics.values()) {
    const sinks = [{ name: m.name, sink: m.sink }, ...m.submetrics.map((s) => ({ name: s.name, sink: s.sink }))];
    for (const { name, sink } of sinks) {
      const ts = byName.get(name);
      // k6 lists a metric once it has a sample, or when a threshold names it.
      const sampled = sink instanceof CounterSink ? sink.count !== 0 : !Registry.empty(sink);
      if (!sampled && !ts) continue;
      metrics[name] = {
        type: m.type,
        contains: m.contains,
        values: sinkValues(sink, trendStats, seconds),
        ...(ts ? { thresholds: Object.fromEntries(ts.map((t) => [t.source, { ok: t.ok }])) } : {}),
      };
    }
  }
  return {
    root_group: {
      name: '',
      path: '',
      id: 'd41d8cd98f00b204e9800998ecf8427e',
      groups: [],
      checks: [...checkCounts.values()].map((c) => ({ name: c.name, path: `::${c.name}`, id: c.name, passes: c.passes, fails: c.fails })),
    },
    options: { summaryTrendStats: trendStats, summaryTimeUnit: '', noColor: true },
    state: { isStdOutTTY: isatty(1), isStdErrTTY: isatty(2), testRunDurationMs: elapsedMs },
    metrics,
    setup_data: setupData,
  };
}

function defaultWrite(target: string, content: string): void {
  if (target === 'stdout') process.stdout.write(content);
  else if (target === 'stderr') process.stderr.write(content);
  else {
    fs.mkdirSync(path.dirname(path.resolve(target)), { recursive: true });
    fs.writeFileSync(target, content);
  }
}

/** Runs the imported script `mod` to the end and reports. Throws ConfigError for invalid options. */
export async function runTest(mod: ScriptModule, o: RunOptions): Promise<RunResult> {
  const log = o.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const write = o.write ?? defaultWrite;
  const rawOptions = (mod.options ?? {}) as Record<string, unknown>;
  const scenarios = normalizeScenarios(rawOptions);
  const options: OptionsShape & Record<string, unknown> = { ...rawOptions, scenarios };
  testState.options = options;
  testState.env = o.env;
  const functions = new Set(Object.keys(mod).filter((k) => typeof mod[k] === 'function'));
  const errors = validateOptions(options, { metricType: (n) => o.registry.metrics.get(n)?.type, functions });
  if (errors.length) throw new ConfigError(`invalid options:\n  ${errors.join('\n  ')}`);
  const thresholds = compileThresholds(options.thresholds ?? {}, o.registry);
  const trendStats = options.summaryTrendStats ?? ['avg', 'min', 'med', 'max', 'p(90)', 'p(95)'];

  // setup()
  let setupData: unknown = undefined;
  const setup = fn(mod, 'setup');
  if (setup) {
    try {
      const ctx = lifecycleContext('setup', o.env);
      const result = await withTimeout(
        'setup()',
        durationMs(options.setupTimeout, 60_000),
        iterationStore.run(ctx, () => Promise.resolve(setup())),
      );
      setupData = result === undefined ? undefined : (JSON.parse(JSON.stringify(result)) as unknown);
    } catch (e) {
      log(`setup() failed: ${message(e)}`);
      return {
        exitCode: EXIT.scriptException,
        summary: summaryData(o.registry, thresholds, trendStats, 0, undefined),
        failedThresholds: [],
        stopped: 'setup() failed',
        eventLoopDelay: { p50: 0, p99: 0, max: 0 },
      };
    }
  }

  // The scenarios.
  const stopController = new AbortController();
  // Every waiting scenario and VU loop listens on it.
  setMaxListeners(0, stopController.signal);
  let stopped: string | undefined;
  let stopCode: number = EXIT.ok;
  const stopRun = (reason: string, code: number): void => {
    if (stopController.signal.aborted) return;
    stopped = reason;
    stopCode = code;
    stopController.abort();
  };
  testState.onAbort = (reason) => stopRun(`exec.test.abort(): ${reason}`, EXIT.aborted);
  const onInterrupt = (): void => stopRun('interrupted', EXIT.interrupted);
  if (o.interrupt?.aborted) onInterrupt();
  o.interrupt?.addEventListener('abort', onInterrupt, { once: true });

  let nextVu = 1;
  const errorCounts = new Map<string, number>();
  const testTags: Tags = (options.tags as Tags | undefined) ?? {};
  const runs = Object.entries(scenarios).map(
    ([name, config]) =>
      new ScenarioRun(name, config, {
        registry: o.registry,
        env: o.env,
        testTags,
        stop: stopController.signal,
        nextVuId: () => nextVu++,
        iterate: async (exec) => {
          const f = fn(mod, exec);
          if (!f) throw new Error(`no exported function ${exec}`);
          await f(setupData);
        },
        onError: (scenario, e) => {
          const text = `${scenario}: ${e instanceof Error ? e.message : String(e)}`;
          const n = (errorCounts.get(text) ?? 0) + 1;
          errorCounts.set(text, n);
          if (n <= 3) log(`iteration error (${text})${n === 3 ? ' — further ones counted, not printed' : ''}`);
        },
        warn: (m) => log(`warning: ${m}`),
      }),
  );

  // Its samples include the timer's own period: RESOLUTION is taken off below.
  const RESOLUTION = 2;
  const loopDelay = monitorEventLoopDelay({ resolution: RESOLUTION });
  loopDelay.enable();
  const started = performance.now();
  testState.startedAt = Date.now();
  const elapsed = (): number => performance.now() - started;
  const sampleVus = (): void => {
    o.registry.add(
      'vus',
      runs.reduce((s, r) => s + r.activeVUs, 0),
      testTags,
    );
    o.registry.add(
      'vus_max',
      runs.reduce((s, r) => s + r.allocatedVUs, 0),
      testTags,
    );
  };
  const progress = (): string => {
    const done = runs.reduce((s, r) => s + r.completed, 0);
    const interrupted = runs.reduce((s, r) => s + r.interrupted, 0);
    const busy = runs.reduce((s, r) => s + r.busyVUs, 0);
    const max = runs.reduce((s, r) => s + r.allocatedVUs, 0);
    const per = runs.map((r) => `${r.name} ${Math.round(r.progress * 100)}%${r.dropped ? ` (${r.dropped} dropped)` : ''}`).join(', ');
    const window = takeWindow(elapsed() - lastProgress);
    return `running (${clock(elapsed())}), ${busy}/${max} VUs busy, ${done} complete and ${interrupted} interrupted iterations; ${per}; ${window}`;
  };
  let lastProgress = 0;
  keepWindow(Boolean(o.progressEveryMs));
  const ticker = setInterval(() => {
    sampleVus();
    const abort = evaluate(thresholds, elapsed());
    const first = abort[0];
    if (first) stopRun(`threshold ${first.metricName}: '${first.source}' failed (abortOnFail)`, EXIT.thresholds);
    if (o.progressEveryMs && elapsed() - lastProgress >= o.progressEveryMs) {
      log(progress());
      lastProgress = elapsed();
    }
  }, 1000);
  try {
    await Promise.all(runs.map((r) => r.run()));
  } finally {
    clearInterval(ticker);
    loopDelay.disable();
    o.interrupt?.removeEventListener('abort', onInterrupt);
  }
  sampleVus();
  const runMs = elapsed();
  if (o.progressEveryMs && runMs - lastProgress > 1000) log(progress());
  keepWindow(false);
  if (stopped) log(`run stopped: ${stopped}`);
  for (const [text, n] of errorCounts) if (n > 3) log(`iteration error ×${n}: ${text}`);

  // teardown()
  let teardownFailed = false;
  const teardown = fn(mod, 'teardown');
  if (teardown) {
    try {
      const ctx = lifecycleContext('teardown', o.env);
      await withTimeout(
        'teardown()',
        durationMs(options.teardownTimeout, 60_000),
        iterationStore.run(ctx, () => Promise.resolve(teardown(setupData))),
      );
    } catch (e) {
      teardownFailed = true;
      log(`teardown() failed: ${message(e)}`);
    }
  }

  evaluate(thresholds, runMs);
  const data = summaryData(o.registry, thresholds, trendStats, runMs, setupData);
  const handleSummary = fn(mod, 'handleSummary');
  if (handleSummary) {
    try {
      const ctx = lifecycleContext('handleSummary', o.env);
      const outputs = (await iterationStore.run(ctx, () => Promise.resolve(handleSummary(data)))) as Record<string, string> | undefined;
      for (const [target, content] of Object.entries(outputs ?? {})) write(target, content);
    } catch (e) {
      log(`handleSummary() failed: ${message(e)}; the default summary follows`);
      write('stdout', textSummary(data));
    }
  } else write('stdout', textSummary(data));

  const failed = failedThresholds(data);
  let exitCode: number = EXIT.ok;
  if (stopCode !== EXIT.ok) exitCode = stopCode;
  else if (failed.length) exitCode = EXIT.thresholds;
  else if (teardownFailed) exitCode = EXIT.scriptException;
  else if (testState.markedFailed) exitCode = EXIT.markedFailed;
  const ms = (n: number) => Math.max(0, Math.round((n / 1e6 - RESOLUTION) * 10) / 10);
  return {
    exitCode,
    summary: data,
    failedThresholds: failed,
    ...(stopped ? { stopped } : {}),
    eventLoopDelay: { p50: ms(loopDelay.percentile(50)), p99: ms(loopDelay.percentile(99)), max: ms(loopDelay.max) },
  };
}
