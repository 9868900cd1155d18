import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';

/** What a metrics endpoint serves: a prom-client Registry fits. */
export interface MetricsSource {
  readonly contentType: string;
  metrics(): Promise<string>;
}

/** GET /healthz: 200 while the process's event loop runs. */
export function healthz(_req: IncomingMessage, res: ServerResponse): void {
  res.writeHead(200, { 'Content-Type': 'application/json', 'Cache-Control': 'no-store' });
  res.end('{"status":"ok"}');
}

/** GET /metrics in Prometheus' text format. */
export function metricsEndpoint(source: MetricsSource): RequestListener {
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

/** The operations endpoints alone (/metrics, /healthz), for a process or port that serves nothing else. */
export function operationsListener(source: MetricsSource): RequestListener {
  const metrics = metricsEndpoint(source);
  return (req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method === 'GET' && path === '/metrics') metrics(req, res);
    else if (req.method === 'GET' && path === '/healthz') healthz(req, res);
    else {
      res.writeHead(404, { 'Content-Type': 'text/plain' });
      res.end('not found\n');
    }
  };
}
