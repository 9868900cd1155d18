// k6's executors on one event loop. The arrival-rate ones are an open model, scheduled as k6
// schedules them (lib/executor/constant_arrival_rate.go, ramping_arrival_rate.go): iteration k of
// a constant rate starts at k·timeUnit/rate; of a ramping rate, when the area under the rate curve
// reaches k. An iteration that finds no free VU is dropped (`dropped_iterations`) and, while
// maxVUs allows, one more VU is made for the next ones. The closed-model executors (constant-vus,
// ramping-vus, per-vu-iterations, shared-iterations) loop their VUs. Every scenario ends with its
// gracefulStop: iterations still running then are interrupted (not counted in `iterations`).
import { performance } from 'node:perf_hooks';
import { iterationStore, testState, type IterationContext, type ScenarioState } from './context';
import { durationMs } from './duration';
import type { Registry, Tags } from './metrics';

export interface Stage {
  duration: string;
  target: number;
}

/** One entry of `options.scenarios` (the fields of every executor; validate.ts checks which apply). */
export interface ScenarioConfig {
  executor: string;
  exec?: string;
  startTime?: string;
  gracefulStop?: string;
  env?: Record<string, string>;
  tags?: Record<string, string>;
  rate?: number;
  timeUnit?: string;
  duration?: string;
  preAllocatedVUs?: number;
  maxVUs?: number;
  startRate?: number;
  stages?: Stage[];
  vus?: number;
  iterations?: number;
  maxDuration?: string;
  startVUs?: number;
  gracefulRampDown?: string;
}

export interface ScenarioDeps {
  registry: Registry;
  /** Runs the scenario's function once; the context is already entered. */
  iterate(exec: string, ctx: IterationContext): Promise<void>;
  /** A new VU id (unique in the test). */
  nextVuId(): number;
  /** The test's env (the scenario's `env` goes over it). */
  env: Record<string, string>;
  /** Tags every sample of the test carries (options.tags). */
  testTags: Tags;
  /** Aborted when the whole test stops at once (abortOnFail, exec.test.abort, Ctrl-C). */
  stop: AbortSignal;
  /** An iteration threw (k6 logs it and goes on). */
  onError(scenario: string, error: unknown): void;
  warn(message: string): void;
}

interface Vu {
  id: number;
  iterationInInstance: number;
  iterationInScenario: number;
}

interface Running {
  ctx: IterationContext;
  controller: AbortController;
  done: Promise<void>;
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(done, Math.max(0, ms));
    function done(): void {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}

/**
 * When iteration k starts, in ms from the scenario's start, for a rate ramping linearly through
 * `stages` from `startRate` (iterations per ms); undefined after the last stage. k counts from 1
 * (the area under the curve reaches 1 for the first iteration), as k6's ramping executor does.
 */
export function rampingArrivalTime(startRatePerMs: number, stages: { durationMs: number; targetPerMs: number }[], k: number): number | undefined {
  let from = startRatePerMs;
  let before = 0;
  let stageStart = 0;
  for (const stage of stages) {
    const to = stage.targetPerMs;
    const d = stage.durationMs;
    const area = ((from + to) / 2) * d;
    if (k <= before + area && area > 0) {
      const need = k - before;
      // Solve from·t + (to−from)/(2d)·t² = need for t in [0, d] (the numerically stable root).
      const a = (to - from) / (2 * d);
      const disc = Math.max(0, from * from + 4 * a * need);
      const t = (2 * need) / (from + Math.sqrt(disc));
      return stageStart + Math.min(d, Number.isFinite(t) ? t : d);
    }
    before += area;
    stageStart += d;
    from = to;
  }
  return undefined;
}

export class ScenarioRun {
  readonly name: string;
  readonly config: ScenarioConfig;
  private readonly deps: ScenarioDeps;
  private readonly state: ScenarioState;
  private readonly tags: Tags;
  private readonly running = new Set<Running>();
  private readonly free: Vu[] = [];
  private allocated = 0;
  /** Executors that loop VUs: how many loops run now. */
  private loops = 0;
  completed = 0;
  interrupted = 0;
  dropped = 0;
  private started = 0;
  private plannedMs = 0;
  private warnedVus = false;
  private finished = false;

  constructor(name: string, config: ScenarioConfig, deps: ScenarioDeps) {
    this.name = name;
    this.config = config;
    this.deps = deps;
    this.tags = { ...deps.testTags, ...(config.tags ?? {}), scenario: name, group: '' };
    const progress = (): number => {
      if (this.finished) return 1;
      if (!this.started) return 0;
      if (this.plannedMs > 0) return Math.min(1, (performance.now() - this.started) / this.plannedMs);
      const total = (config.iterations ?? 1) * (config.executor === 'per-vu-iterations' ? (config.vus ?? 1) : 1);
      return Math.min(1, (this.completed + this.interrupted) / total);
    };
    this.state = {
      name,
      executor: config.executor,
      startTime: 0,
      iterationsStarted: 0,
      progress,
      env: { ...deps.env, ...(config.env ?? {}) },
      tags: this.tags,
    };
  }

  /** k6's `vus`: the VUs an arrival-rate executor has activated (busy or idle), or the looping ones. */
  get activeVUs(): number {
    return this.config.executor.endsWith('arrival-rate') ? this.allocated : this.loops;
  }

  /** VUs inside an iteration right now. */
  get busyVUs(): number {
    return this.running.size;
  }

  get allocatedVUs(): number {
    return this.allocated;
  }

  get progress(): number {
    return this.state.progress();
  }

  private newVu(): Vu {
    this.allocated++;
    testState.vusInitialized++;
    return { id: this.deps.nextVuId(), iterationInInstance: 0, iterationInScenario: 0 };
  }

  /** One iteration on `vu`; resolves when it ended or was interrupted. */
  private runIteration(vu: Vu): Running {
    const controller = new AbortController();
    const ctx: IterationContext = {
      vu: { idInTest: vu.id, iterationInInstance: vu.iterationInInstance++, iterationInScenario: vu.iterationInScenario++ },
      scenario: this.state,
      iterationInTest: this.state.iterationsStarted++,
      tags: this.tags,
      env: this.state.env,
      signal: controller.signal,
      interrupted: false,
    };
    const startedAt = performance.now();
    testState.vusActive++;
    const work = iterationStore
      .run(ctx, () => this.deps.iterate(this.config.exec ?? 'default', ctx))
      .catch((e: unknown) => {
        if (!ctx.interrupted) this.deps.onError(this.name, e);
      });
    const stopped = new Promise<void>((resolve) => controller.signal.addEventListener('abort', () => resolve(), { once: true }));
    const entry: Running = {
      ctx,
      controller,
      done: Promise.race([work, stopped]).then(() => {
        testState.vusActive--;
        this.running.delete(entry);
        if (ctx.interrupted) {
          this.interrupted++;
          testState.iterationsInterrupted++;
          return;
        }
        this.completed++;
        testState.iterationsCompleted++;
        this.deps.registry.add('iterations', 1, this.tags);
        this.deps.registry.add('iteration_duration', performance.now() - startedAt, this.tags);
      }),
    };
    this.running.add(entry);
    return entry;
  }

  private interruptAll(): void {
    for (const r of this.running) {
      r.ctx.interrupted = true;
      r.controller.abort();
    }
  }

  /** The end of a scenario: running iterations get gracefulStop to finish, then are interrupted. */
  private async gracefulStop(): Promise<void> {
    if (this.running.size === 0) return;
    const grace = durationMs(this.config.gracefulStop, 30_000);
    const all = Promise.all([...this.running].map((r) => r.done));
    const timer = new AbortController();
    const stopOnAbort = (): void => timer.abort();
    this.deps.stop.addEventListener('abort', stopOnAbort, { once: true });
    await Promise.race([all, sleep(grace, timer.signal)]);
    this.deps.stop.removeEventListener('abort', stopOnAbort);
    timer.abort();
    this.interruptAll();
    await all;
  }

  /** Runs the scenario from its startTime to its end (or until the test stops). */
  async run(): Promise<void> {
    const stop = this.deps.stop;
    await sleep(durationMs(this.config.startTime, 0), stop);
    if (stop.aborted) {
      this.finished = true;
      return;
    }
    const onStop = (): void => this.interruptAll();
    stop.addEventListener('abort', onStop, { once: true });
    this.started = performance.now();
    this.state.startTime = Date.now();
    try {
      switch (this.config.executor) {
        case 'constant-arrival-rate':
        case 'ramping-arrival-rate':
          await this.arrivalRate();
          break;
        case 'constant-vus':
        case 'ramping-vus':
          await this.rampingVus();
          break;
        case 'per-vu-iterations':
        case 'shared-iterations':
          await this.iterations();
          break;
        default:
          throw new Error(`scenario ${this.name}: the Node runner has no executor ${this.config.executor}`);
      }
      await this.gracefulStop();
    } finally {
      stop.removeEventListener('abort', onStop);
      this.finished = true;
    }
  }

  private async arrivalRate(): Promise<void> {
    const c = this.config;
    const unit = durationMs(c.timeUnit, 1000);
    let timeOf: (k: number) => number | undefined;
    let first: number;
    if (c.executor === 'constant-arrival-rate') {
      const period = unit / (c.rate ?? 1);
      const total = durationMs(c.duration, 0);
      this.plannedMs = total;
      timeOf = (k) => (k * period < total ? k * period : undefined);
      first = 0;
    } else {
      const stages = (c.stages ?? []).map((s) => ({ durationMs: durationMs(s.duration, 0), targetPerMs: s.target / unit }));
      this.plannedMs = stages.reduce((s, x) => s + x.durationMs, 0);
      timeOf = (k) => rampingArrivalTime((c.startRate ?? 0) / unit, stages, k);
      first = 1;
    }
    const maxVUs = c.maxVUs ?? c.preAllocatedVUs ?? 1;
    for (let i = 0; i < (c.preAllocatedVUs ?? 1); i++) this.free.push(this.newVu());
    const stop = this.deps.stop;
    const stopped = (): boolean => stop.aborted;
    const start = this.started;
    let burst = 0;
    for (let k = first; !stopped(); k++) {
      const at = timeOf(k);
      if (at === undefined) break;
      const wait = start + at - performance.now();
      if (wait > 1) {
        burst = 0;
        await sleep(wait, stop);
        if (stopped()) break;
      } else if (++burst % 64 === 0) {
        // Far behind schedule: let the iterations started so far run their callbacks.
        await new Promise((r) => setImmediate(r));
      }
      const vu = this.free.pop();
      if (vu) {
        void this.runIteration(vu).done.then(() => this.free.push(vu));
        continue;
      }
      this.dropped++;
      this.deps.registry.add('dropped_iterations', 1, this.tags);
      if (this.allocated < maxVUs) this.free.push(this.newVu());
      else if (!this.warnedVus) {
        this.warnedVus = true;
        this.deps.warn(`scenario ${this.name}: insufficient VUs, reached ${maxVUs} active VUs and cannot initialize more`);
      }
    }
    // The scenario lasts its whole duration, even when its last iteration started earlier.
    await sleep(start + this.plannedMs - performance.now(), stop);
  }

  /** constant-vus (one flat stage) and ramping-vus: loops follow the VU target; loops over it stop after their iteration. */
  private async rampingVus(): Promise<void> {
    const c = this.config;
    const stop = this.deps.stop;
    const stages =
      c.executor === 'constant-vus'
        ? [{ durationMs: durationMs(c.duration, 0), target: c.vus ?? 1 }]
        : (c.stages ?? []).map((s) => ({ durationMs: durationMs(s.duration, 0), target: s.target }));
    const startVUs = c.executor === 'constant-vus' ? (c.vus ?? 1) : (c.startVUs ?? 1);
    this.plannedMs = stages.reduce((s, x) => s + x.durationMs, 0);
    const end = this.started + this.plannedMs;
    const rampDown = c.executor === 'ramping-vus' ? durationMs(c.gracefulRampDown, 30_000) : 0;
    const target = (elapsed: number): number => {
      let from = startVUs;
      let at = 0;
      for (const s of stages) {
        if (elapsed < at + s.durationMs) return Math.floor(from + ((s.target - from) * (elapsed - at)) / s.durationMs);
        at += s.durationMs;
        from = s.target;
      }
      return from;
    };
    const maxTarget = Math.max(startVUs, ...stages.map((s) => s.target));
    const vus: Vu[] = [];
    for (let i = 0; i < maxTarget; i++) vus.push(this.newVu());
    const loopsRunning = new Set<number>();
    const loop = async (index: number, vu: Vu): Promise<void> => {
      this.loops++;
      loopsRunning.add(index);
      try {
        while (!stop.aborted && performance.now() < end && index < target(performance.now() - this.started)) {
          const running = this.runIteration(vu);
          if (rampDown > 0) {
            // Ramped down while running: the iteration gets gracefulRampDown to finish.
            const watch = setInterval(() => {
              if (index >= target(performance.now() - this.started)) {
                clearInterval(watch);
                const t = setTimeout(() => {
                  running.ctx.interrupted = true;
                  running.controller.abort();
                }, rampDown);
                void running.done.then(() => clearTimeout(t));
              }
            }, 100);
            await running.done;
            clearInterval(watch);
          } else await running.done;
        }
      } finally {
        this.loops--;
        loopsRunning.delete(index);
      }
    };
    const loops: Promise<void>[] = [];
    while (!stop.aborted && performance.now() < end) {
      const want = target(performance.now() - this.started);
      for (let i = 0; i < want; i++) {
        const vu = vus[i];
        if (vu && !loopsRunning.has(i)) loops.push(loop(i, vu));
      }
      await sleep(Math.min(100, end - performance.now()), stop);
    }
    const grace = durationMs(c.gracefulStop, 30_000);
    const timer = new AbortController();
    await Promise.race([Promise.all(loops), sleep(grace, timer.signal)]);
    timer.abort();
    this.interruptAll();
    await Promise.all(loops);
  }

  /** per-vu-iterations and shared-iterations, within maxDuration. */
  private async iterations(): Promise<void> {
    const c = this.config;
    const stop = this.deps.stop;
    const vus = c.vus ?? 1;
    const iterations = c.iterations ?? 1;
    const maxDuration = durationMs(c.maxDuration, 600_000);
    const end = this.started + maxDuration;
    let shared = c.executor === 'shared-iterations' ? iterations : 0;
    const loop = async (vu: Vu): Promise<void> => {
      this.loops++;
      try {
        for (let i = 0; !stop.aborted && performance.now() < end; i++) {
          if (c.executor === 'shared-iterations') {
            if (shared <= 0) break;
            shared--;
          } else if (i >= iterations) break;
          await this.runIteration(vu).done;
        }
      } finally {
        this.loops--;
      }
    };
    const all = Promise.all(Array.from({ length: vus }, () => loop(this.newVu())));
    const timer = new AbortController();
    await Promise.race([all, sleep(maxDuration, timer.signal)]);
    timer.abort();
    const grace = durationMs(c.gracefulStop, 30_000);
    const graceTimer = new AbortController();
    await Promise.race([all, sleep(grace, graceTimer.signal)]);
    graceTimer.abort();
    this.interruptAll();
    await all;
  }
}
