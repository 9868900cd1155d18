import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import type { ProcessMetrics, RouteTable } from '@quire/metrics';
import { healthEndpoint } from './operations';
import type { Readiness } from './readiness';

/** What a process gives each service it runs: one metrics registry, one readiness. */
export interface ServiceOperations {
  readonly metrics: ProcessMetrics;
  readonly readiness: Readiness;
}

/**
 * A service's main-port listener with its operations in front: /healthz and /readyz for any Host
 * (before tenant resolution, so probes need no tenant), then every other request timed and labelled
 * by `routes`. It wraps the service's listener (an express app) rather than being one of its
 * middlewares: a router layer per request cost more than the timing itself (`npm run bench -- metrics`).
 */
export function withOperations(
  ops: ServiceOperations,
  routes: RouteTable,
  listener: RequestListener,
  tenantOf?: (res: ServerResponse) => string | undefined,
): RequestListener {
  const observe = ops.metrics.observeRequests(routes, tenantOf);
  return (req: IncomingMessage, res: ServerResponse) => {
    const health = healthEndpoint(req, ops.readiness);
    if (health) health(req, res);
    else observe(req, res, () => listener(req, res));
  };
}
