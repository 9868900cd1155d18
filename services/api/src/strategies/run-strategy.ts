import type { Request } from 'express';
import type { Strategy } from 'passport-strategy';

/** How a strategy ended: its user, "not for me" (pass/fail), or an error to answer with. */
export type StrategyOutcome<T> = { kind: 'success'; user: T } | { kind: 'pass' } | { kind: 'error'; error: unknown };

type Augmented<T> = Strategy & {
  success(user: T): void;
  fail(): void;
  pass(): void;
  error(err: unknown): void;
  redirect(): void;
};

/**
 * Runs one passport strategy on a request, by the passport-strategy protocol (the strategy calls
 * success, fail, pass or error on itself) but without passport's `authenticate` middleware, which
 * builds a closure chain, a failure list and request helpers on every request: on the API's hot
 * path that machinery cost more than checking the credentials.
 */
export function runStrategy<T>(strategy: Strategy, req: Request): Promise<StrategyOutcome<T>> {
  return new Promise((resolve) => {
    const run = Object.create(strategy) as Augmented<T>;
    run.success = (user: T) => resolve({ kind: 'success', user });
    run.pass = () => resolve({ kind: 'pass' });
    run.fail = () => resolve({ kind: 'pass' });
    run.redirect = () => resolve({ kind: 'pass' });
    run.error = (error: unknown) => resolve({ kind: 'error', error });
    try {
      run.authenticate(req);
    } catch (error) {
      resolve({ kind: 'error', error });
    }
  });
}
