import type { ProcessMetrics, RouteTable } from '@quire/metrics';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { healthEndpoint } from './operations';
import type { Readiness } from './readiness';

/** What a process gives each service it runs: one metrics registry, one readiness. */
export interface ServiceOperations {
  readonly metrics: ProcessMetrics;
  readonly readiness: Readiness;
}

/**
 * The first middleware of a service's main port: /healthz and /readyz for any Host (before tenant
 * resolution, so probes need no tenant), then the request timing labelled by `routes`.
 */
export function serviceOperations(ops: ServiceOperations, routes: RouteTable, tenantOf?: (res: Response) => string | undefined): RequestHandler {
  const observe = ops.metrics.observeRequests<Response>(routes, tenantOf);
  return (req: Request, res: Response, next: NextFunction) => {
    const health = healthEndpoint(req, ops.readiness);
    if (health) {
      health(req, res);
      return;
    }
    observe(req, res, next);
  };
}
