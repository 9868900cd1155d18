import { listen, withOperations, type Listening, type ServiceOperations } from '@quire/http';
import { RouteTable } from '@quire/metrics';
import type { Platform } from '@quire/tenancy';
import type { ServerResponse } from 'node:http';
import type { RequestHandler, Response } from 'express';
import type { Logger } from 'pino';
import { API_ROUTES, createApiListener } from './app';
import type { ApiConfig } from './config';
import { authenticate } from './middleware/authenticate';
import { attachRealtime } from './realtime/server';

export type RunningServer = Listening;

/** Routers answered on the API's port before its own (the auth routes when one process runs both). */
export interface MountedBefore {
  handlers: RequestHandler[];
  /** Their route templates, for the request metrics. */
  routes: readonly string[];
}

/** Where realtime events travel between API processes (realtime/transport.ts). */
export interface RealtimeSettings {
  redisUrl?: string | undefined;
  /** The deployment's prefix for Redis keys and channels. */
  prefix: string;
}

/**
 * Starts the API service's HTTP server on `config.port` (0 picks a free port), with the realtime
 * endpoint (/socket.io) on the same port; rejects when the port cannot be bound.
 */
export async function startApiServer(
  platform: Platform,
  config: ApiConfig,
  logger: Logger,
  ops?: ServiceOperations,
  before: MountedBefore = { handlers: [], routes: [] },
  realtime: RealtimeSettings = { prefix: 'quire' },
): Promise<RunningServer> {
  const app = createApiListener({
    platform,
    config: { ...config, developerMode: config.platform.developerMode, trustProxy: config.platform.trustProxy },
    logger,
    before: before.handlers,
  });
  // Health and request metrics in front of the app (the runtime's); without them it serves only the API.
  const tenantOf = (res: ServerResponse): string | undefined => {
    // Express gives the response its locals; a request refused before tenant resolution has no tenant.
    const locals = (res as Partial<Response>).locals as Partial<Express.Locals> | undefined;
    return locals?.tenant?.name;
  };
  const listener = ops ? withOperations(ops, new RouteTable([...before.routes, ...API_ROUTES]), app, tenantOf) : app;
  const listening = await listen(listener, { port: config.port, host: config.host });
  const sockets = await attachRealtime(listening.server, platform, authenticate(platform, logger), {
    redisUrl: realtime.redisUrl,
    prefix: realtime.prefix,
    logger,
    registry: ops?.metrics.registry,
  });
  return {
    ...listening,
    // Sockets go first: an open WebSocket is not a request the HTTP server would wait for.
    close: async (timeoutMs?: number) => {
      await sockets.close();
      await listening.close(timeoutMs);
    },
  };
}
