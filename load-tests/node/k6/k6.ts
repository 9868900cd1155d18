// `k6` for the Node runner: check() records the `checks` Rate (tags: check, the iteration's tags)
// and each check's passes and fails for the summary; fail() throws; group() runs synchronous
// bodies (k6's group cannot measure async ones either); sleep() cannot block one event loop.
import { current } from '../engine/context';
import { registry, type Tags } from '../engine/metrics';

export interface CheckCount {
  name: string;
  passes: number;
  fails: number;
}

/** Every check by name, in the order first seen (the summary's root group). */
export const checkCounts = new Map<string, CheckCount>();

export function check<T>(value: T, sets: Record<string, (value: T) => unknown>, tags?: Tags): boolean {
  const ctx = current();
  let all = true;
  for (const [name, fn] of Object.entries(sets)) {
    const ok = Boolean(fn(value));
    all &&= ok;
    if (ctx?.interrupted) continue;
    registry.add('checks', ok ? 1 : 0, { ...(ctx?.tags ?? {}), check: name, ...(tags ?? {}) });
    let c = checkCounts.get(name);
    if (!c) checkCounts.set(name, (c = { name, passes: 0, fails: 0 }));
    if (ok) c.passes++;
    else c.fails++;
  }
  return all;
}

export function fail(message?: string): never {
  throw new Error(message ?? 'fail() called');
}

export function group<T>(name: string, fn: () => T): T {
  const ctx = current();
  const started = performance.now();
  const result = fn();
  if (result instanceof Promise) throw new Error(`group(${JSON.stringify(name)}) got an async function: k6 cannot time those either`);
  if (!ctx?.interrupted) registry.add('group_duration', performance.now() - started, { ...(ctx?.tags ?? {}), group: `::${name}` });
  return result;
}

export function sleep(_seconds: number): never {
  throw new Error('sleep() blocks, which the Node runner cannot do: `await new Promise((r) => setTimeout(r, ms))` works in both');
}

export function randomSeed(_seed: number): void {
  throw new Error('randomSeed() is not supported by the Node runner');
}

export default { check, fail, group, sleep, randomSeed };
