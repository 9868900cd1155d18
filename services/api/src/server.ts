import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Platform } from '@quire/tenancy';
import type { RequestHandler } from 'express';
import type { Logger } from 'pino';
import { createApiApp } from './app';
import type { ApiConfig } from './config';

export interface RunningServer {
  server: http.Server;
  port: number;
  close(): Promise<void>;
}

/** Starts the API service's HTTP server on `config.port` (0 picks a free port). */
export async function startApiServer(platform: Platform, config: ApiConfig, logger: Logger, before: RequestHandler[] = []): Promise<RunningServer> {
  const app = createApiApp({ platform, config: { ...config, production: config.platform.production }, logger, before });
  const server = http.createServer(app);
  // Longer than common load balancers' idle timeouts, so they close idle connections first.
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  return {
    server,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      }),
  };
}
