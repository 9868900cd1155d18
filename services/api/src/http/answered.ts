import type { Response } from 'express';

/**
 * Calls `fn` once, when the request's answer is complete on our side: at `res.end()` (its body
 * handed over; a slow client reading it holds no turn and counts no time), or when the connection
 * closes first (the client gone). Several callers may register; each is called once.
 */
export function whenAnswered(res: Response, fn: () => void): void {
  let done = false;
  const once = (): void => {
    if (done) return;
    done = true;
    fn();
  };
  const end = res.end.bind(res) as (...args: unknown[]) => Response;
  res.end = ((...args: unknown[]) => {
    // The answer goes out first: what `fn` starts (the next waiter's turn) must not delay it.
    const result = end(...args);
    once();
    return result;
  }) as Response['end'];
  res.once('close', once);
}
