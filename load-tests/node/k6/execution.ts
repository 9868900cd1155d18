// `k6/execution` for the Node runner: what the current iteration's VU and scenario are (from the
// iteration's AsyncLocalStorage context), the instance's counters, and test.abort()/fail().
import { current, testState, type IterationContext } from '../engine/context';

function inVu(what: string): IterationContext {
  const ctx = current();
  if (!ctx?.scenario) throw new Error(`k6/execution: ${what} is only available inside an iteration`);
  return ctx;
}

export const scenario = {
  get name(): string {
    return inVu('scenario.name').scenario?.name ?? '';
  },
  get executor(): string {
    return inVu('scenario.executor').scenario?.executor ?? '';
  },
  get startTime(): number {
    return inVu('scenario.startTime').scenario?.startTime ?? 0;
  },
  get progress(): number {
    return inVu('scenario.progress').scenario?.progress() ?? 0;
  },
  get iterationInInstance(): number {
    return inVu('scenario.iterationInInstance').iterationInTest;
  },
  get iterationInTest(): number {
    return inVu('scenario.iterationInTest').iterationInTest;
  },
};

export const vu = {
  get idInTest(): number {
    return current()?.vu.idInTest ?? 0;
  },
  get idInInstance(): number {
    return current()?.vu.idInTest ?? 0;
  },
  get iterationInInstance(): number {
    return inVu('vu.iterationInInstance').vu.iterationInInstance;
  },
  get iterationInScenario(): number {
    return inVu('vu.iterationInScenario').vu.iterationInScenario;
  },
  get tags(): Record<string, string> {
    return current()?.tags ?? {};
  },
  get metrics(): { tags: Record<string, string>; metadata: Record<string, string> } {
    return { tags: current()?.tags ?? {}, metadata: {} };
  },
};

export const instance = {
  get iterationsCompleted(): number {
    return testState.iterationsCompleted;
  },
  get iterationsInterrupted(): number {
    return testState.iterationsInterrupted;
  },
  get vusActive(): number {
    return testState.vusActive;
  },
  get vusInitialized(): number {
    return testState.vusInitialized;
  },
  get currentTestRunDuration(): number {
    return testState.startedAt ? Date.now() - testState.startedAt : 0;
  },
};

export const test = {
  /** Stops the test now; teardown and the summary still run (k6 exit code 108). */
  abort(reason?: string): never {
    const message = reason ?? 'test aborted';
    testState.abort ??= { reason: message };
    testState.onAbort(message);
    throw new Error(`test aborted: ${message}`);
  },
  /** Marks the test failed but lets it finish (k6 exit code 110). */
  fail(reason?: string): void {
    testState.markedFailed ??= { reason: reason ?? 'test marked as failed' };
  },
  get options(): Record<string, unknown> {
    return testState.options;
  },
};

export default { scenario, vu, instance, test };
