import { listen, type Listening } from '@quire/http';
import type { Platform } from '@quire/tenancy';
import type { RequestHandler } from 'express';
import type { Logger } from 'pino';
import { createApiApp } from './app';
import type { ApiConfig } from './config';

export type RunningServer = Listening;

/** Starts the API service's HTTP server on `config.port` (0 picks a free port). */
export function startApiServer(platform: Platform, config: ApiConfig, logger: Logger, before: RequestHandler[] = []): Promise<RunningServer> {
  const app = createApiApp({ platform, config: { ...config, production: config.platform.production, trustProxy: config.platform.trustProxy }, logger, before });
  return listen(app, { port: config.port, host: config.host });
}
