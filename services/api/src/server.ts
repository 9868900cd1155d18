import { listen, type Listening, type ServiceOperations } from '@quire/http';
import type { Platform } from '@quire/tenancy';
import type { RequestHandler } from 'express';
import type { Logger } from 'pino';
import { createApiApp } from './app';
import type { ApiConfig } from './config';

export type RunningServer = Listening;

/** Routers answered on the API's port before its own (the auth routes when one process runs both). */
export interface MountedBefore {
  handlers: RequestHandler[];
  /** Their route templates, for the request metrics. */
  routes: readonly string[];
}

/** Starts the API service's HTTP server on `config.port` (0 picks a free port); rejects when the port cannot be bound. */
export function startApiServer(
  platform: Platform,
  config: ApiConfig,
  logger: Logger,
  ops?: ServiceOperations,
  before: MountedBefore = { handlers: [], routes: [] },
): Promise<RunningServer> {
  const app = createApiApp({
    platform,
    config: { ...config, production: config.platform.production, trustProxy: config.platform.trustProxy },
    logger,
    before: before.handlers,
    beforeRoutes: before.routes,
    ...(ops ? { ops } : {}),
  });
  return listen(app, { port: config.port, host: config.host });
}
