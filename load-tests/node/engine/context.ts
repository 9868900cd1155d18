// Where a running iteration is. k6 gives every VU its own JavaScript runtime, so `__VU`, `__ENV`
// and k6/execution answer for that VU; here every VU shares one module instance, and the answer
// comes from an AsyncLocalStorage entered for each iteration (and for setup/teardown).
import { AsyncLocalStorage } from 'node:async_hooks';
import type { Tags } from './metrics';

export interface VuState {
  idInTest: number;
  iterationInInstance: number;
  iterationInScenario: number;
}

export interface ScenarioState {
  name: string;
  executor: string;
  /** ms since the epoch. */
  startTime: number;
  /** Iterations started in this scenario (exec.scenario.iterationInTest of the next one). */
  iterationsStarted: number;
  /** 0..1 of the scenario's planned duration or iterations. */
  progress(): number;
  /** The scenario's `env`, over the test's. */
  env: Record<string, string>;
  /** The scenario's `tags` plus `scenario`. */
  tags: Tags;
}

export interface IterationContext {
  vu: VuState;
  scenario: ScenarioState | undefined;
  /** This iteration's number in its scenario, over all VUs. */
  iterationInTest: number;
  /** Tags every sample of this iteration carries (scenario, group, the scenario's tags). */
  tags: Tags;
  env: Record<string, string>;
  /** Aborted when the iteration is interrupted (gracefulStop passed, or the test stopped). */
  signal: AbortSignal;
  /** Set when interrupted: its samples after that are not recorded (as in k6). */
  interrupted: boolean;
}

export const iterationStore = new AsyncLocalStorage<IterationContext>();

/** Test-wide state the shims read. */
export const testState = {
  /** `-e` variables over the process environment (k6's default `--include-system-env-vars`). */
  env: {} as Record<string, string>,
  /** The test's `options` (k6/execution's test.options, userAgent, setResponseCallback). */
  options: {} as Record<string, unknown>,
  startedAt: 0,
  /** Set by exec.test.abort() / fail(). */
  abort: undefined as { reason: string } | undefined,
  markedFailed: undefined as { reason: string } | undefined,
  /** Called by exec.test.abort(): the runner stops the test. */
  onAbort: (_reason: string) => {},
  iterationsCompleted: 0,
  iterationsInterrupted: 0,
  vusActive: 0,
  vusInitialized: 0,
};

export function current(): IterationContext | undefined {
  return iterationStore.getStore();
}

/** The test's env, with the current scenario's on top. */
export function currentEnv(): Record<string, string> {
  return current()?.env ?? testState.env;
}
