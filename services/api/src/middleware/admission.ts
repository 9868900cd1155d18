import type { Refusal, TenantGate } from '@quire/limits';
import type { Platform } from '@quire/tenancy';
import type { NextFunction, Request, Response } from 'express';
import { whenAnswered } from '../http/answered';
import { refuseSoon } from '../http/refusal';

const RETRY_SOON = { 'Retry-After': '1' } as const;

const MESSAGE: Readonly<Record<Refusal, string>> = {
  queue_full: 'Too many requests for this site at once: try again in a moment',
  queue_timeout: 'This site has more requests waiting than it can be served soon: try again in a moment',
};

/**
 * Each request takes a slot of its tenant's share of the process (TenantGate; its plan's
 * `maxConnections` when it has one) before anything that
 * may reach the database, and gives it back when its answer is handed over (a file a slow client
 * reads holds no turn) or its client gone. A tenant
 * over its share waits its turn; one whose queue is full or too old is answered 429 at once. Its
 * time from admission to answer is metered to the tenant (usage).
 */
export function admitFairly(gate: TenantGate, platform: Pick<Platform, 'limitsOf' | 'usage'>) {
  return (_req: Request, res: Response, next: NextFunction): void => {
    const { tenant } = res.locals;
    gate.enter(
      tenant.name,
      (release) => {
        // Admitted after waiting: its client may have gone meanwhile, and then 'close' has already
        // been emitted. Its turn is given back unused.
        if (res.closed || res.socket === null || res.socket.destroyed) {
          release();
          return;
        }
        const started = performance.now();
        whenAnswered(res, () => {
          release();
          platform.usage.request(tenant.name, performance.now() - started);
        });
        next();
      },
      (why) => refuseSoon(res, MESSAGE[why], RETRY_SOON),
      // Its plan's share of the process, else the process's default.
      platform.limitsOf(tenant).maxConnections,
    );
  };
}
