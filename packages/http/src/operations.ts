import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import type { Readiness } from './readiness';

/** What a metrics endpoint serves: a prom-client Registry fits. */
export interface MetricsSource {
  readonly contentType: string;
  metrics(): Promise<string>;
}

/** The path of a request, without its query. */
function pathOf(req: IncomingMessage): string {
  const url = req.url ?? '/';
  const query = url.indexOf('?');
  return query === -1 ? url : url.slice(0, query);
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'Content-Type': 'application/json', 'Cache-Control': 'no-store' });
  res.end(JSON.stringify(body));
}

/** GET /healthz: 200 while the process's event loop runs; it never looks at the database. */
function healthz(_req: IncomingMessage, res: ServerResponse): void {
  json(res, 200, { status: 'ok' });
}

/** GET /readyz: 200 when the process can do its job, else 503 naming the failing checks. */
function readyz(readiness: Readiness): RequestListener {
  return (_req, res) => {
    readiness.evaluate().then(
      (report) => json(res, report.ready ? 200 : 503, { status: report.ready ? 'ready' : 'unready', checks: report.checks }),
      () => json(res, 503, { status: 'unready', checks: { readiness: 'could not be evaluated' } }),
    );
  };
}

/** GET /metrics in Prometheus' text format. */
function metricsEndpoint(source: MetricsSource): RequestListener {
  return (_req, res) => {
    source.metrics().then(
      (text) => {
        res.writeHead(200, { 'Content-Type': source.contentType, 'Cache-Control': 'no-store' });
        res.end(text);
      },
      () => {
        res.writeHead(500, { 'Content-Type': 'text/plain' });
        res.end('metrics unavailable\n');
      },
    );
  };
}

/**
 * The health endpoints a service answers on its own port for any Host, before tenant resolution;
 * `undefined` for any other path, so the caller routes it on.
 */
export function healthEndpoint(req: IncomingMessage, readiness: Readiness): RequestListener | undefined {
  const url = req.url ?? '/';
  // Cheap refusal first: this runs before every request of a service.
  if (!(url.startsWith('/healthz') || url.startsWith('/readyz')) || (req.method !== 'GET' && req.method !== 'HEAD')) return undefined;
  const path = pathOf(req);
  if (path === '/healthz') return healthz;
  if (path === '/readyz') return readyz(readiness);
  return undefined;
}

/** The operations port (METRICS_PORT): /metrics, /healthz and /readyz, nothing tenant-facing. */
export function operationsListener(source: MetricsSource, readiness: Readiness): RequestListener {
  const metrics = metricsEndpoint(source);
  return (req, res) => {
    const health = healthEndpoint(req, readiness);
    if (health) health(req, res);
    else if (req.method === 'GET' && pathOf(req) === '/metrics') metrics(req, res);
    else {
      res.writeHead(404, { 'Content-Type': 'text/plain' });
      res.end('not found\n');
    }
  };
}
