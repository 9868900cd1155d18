import { DoesNotExistError } from '@quire/errors';
import type { Platform } from '@quire/tenancy';
import { requestId } from '@quire/http';
import type { RequestListener } from 'node:http';
import express, { type ErrorRequestHandler, type Express, type RequestHandler } from 'express';
import './http/locals';
import type { Logger } from 'pino';
import type { PlatformConfig } from '@quire/config';
import type { ApiConfig } from './config';
import { formDict } from './http/form-dict';
import { parseSize } from './http/json-body';
import type { SiteRateLimiter, TenantGate } from '@quire/limits';
import { admitFairly } from './middleware/admission';
import { TenantSettings } from './http/tenant-settings';
import { limitSiteRate } from './middleware/site-rate-limit';
import { cors } from './middleware/cors';
import { csrf } from './middleware/csrf';
import { authenticate } from './middleware/authenticate';
import { bodyParsers } from './middleware/body';
import { errorHandler } from './middleware/errors';
import { resolveTenant } from './middleware/tenant';
import { filesRouter } from './routes/files';
import { deskRouter } from './routes/desk';
import { callMethod, methodRouter } from './routes/method';
import { hotResourceRoutes, resourceRouter } from './routes/resource';
import { openApiRouter } from './routes/openapi';
import { v2Router } from './routes/v2';
import { dispatcher, type HotRoute } from './dispatch';

const apiV2: RequestHandler = (_req, res, next) => {
  res.locals.apiVersion = 'v2';
  next();
};

export interface ApiAppOptions {
  platform: Platform;
  /** Fair admission of each tenant's requests (middleware/admission.ts). */
  gate: TenantGate;
  /** Frappe's site rate limit, for tenants that set one (middleware/site-rate-limit.ts). */
  siteRates: SiteRateLimiter;
  config: Pick<ApiConfig, 'maxPageLength' | 'maxBodySize' | 'maxFileSize'> & Pick<PlatformConfig, 'developerMode' | 'trustProxy'>;
  logger: Logger;
  /**
   * Routers answered before the API's own (the auth service's /oauth, /.well-known and Frappe's
   * oauth2 paths when every service runs in one process); they resolve the tenant themselves.
   */
  before?: RequestHandler[];
}

/** The API's routes as templates: the `route` label of its request metrics (never a document name). */
export const API_ROUTES: readonly string[] = [
  '/api/resource/:doctype',
  '/api/resource/:doctype/*name',
  '/api/v1/resource/:doctype',
  '/api/v1/resource/:doctype/*name',
  '/api/method/*method',
  '/api/v1/method/*method',
  '/api/v2/document/:doctype',
  '/api/v2/document/:doctype/*name',
  '/api/v2/doctype/:doctype/meta',
  '/api/v2/doctype/:doctype/count',
  '/api/v2/method/*method',
  '/api/openapi.json',
  '/api/docs',
  '/files/*name',
  '/private/files/*name',
  '/',
];

/**
 * The API service's request listener: request id -> tenant -> its rate limit -> its turn -> body -> caller -> route, and one
 * error handler that renders Frappe's envelope. Routes are generic; none exists per DocType. The
 * express app serves every route; the reads and writes clients repeat most are dispatched before its
 * router (dispatch.ts), through the same middlewares and handlers.
 */
export function createApiListener(options: ApiAppOptions): RequestListener {
  const { app, hot, onError } = createApiApp(options);
  return dispatcher(app, hot, onError, parseSize(options.config.maxBodySize));
}

function createApiApp({ platform, gate, siteRates, config, logger, before = [] }: ApiAppOptions): {
  app: Express;
  hot: HotRoute[];
  onError: ErrorRequestHandler;
} {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('trust proxy', config.trustProxy);

  const settings = new TenantSettings(platform, {
    maxPageLength: config.maxPageLength,
    sessionExpirySeconds: platform.sessionExpirySeconds,
    maxFileSize: config.maxFileSize,
  });
  const methods = { platform, settings };
  const tenant = resolveTenant(platform);
  const rateLimit = limitSiteRate(siteRates, platform);
  const admit = admitFairly(gate, platform);
  const caller = authenticate(platform, logger);
  app.use(requestId);
  // Set before anything can fail (an unknown site, a bad token): a v2 request's errors take v2's shape.
  app.use('/api/v2', apiV2);
  for (const handler of before) app.use(handler);
  app.use(tenant);
  app.use(rateLimit);
  app.use(admit);
  app.use(cors);
  app.use(bodyParsers(config.maxBodySize, config.maxFileSize));
  app.use(caller);
  app.use(csrf);
  app.use(filesRouter(platform));

  // /api and /api/v1 are the same API (frappe/api/__init__.py).
  app.use(['/api/resource', '/api/v1/resource'], resourceRouter(methods));
  app.use(['/api/method', '/api/v1/method'], methodRouter(methods));
  app.use('/api/v2', v2Router(methods));
  app.use(openApiRouter(methods));
  // Legacy RPC: `POST /` or `GET /?cmd=…` is /api/method/<cmd> (frappe/app.py).
  app.all('/', async (req, res, next) => {
    const cmd = formDict(req).cmd;
    if (typeof cmd !== 'string' || cmd === '') {
      next();
      return;
    }
    await callMethod(methods, cmd, req, res);
  });
  app.use(deskRouter());
  app.use(() => {
    throw new DoesNotExistError('', { silent: true });
  });
  const onError = errorHandler({ developerMode: config.developerMode, logger });
  app.use(onError);
  // The files router has nothing to do with these; the dispatcher reads their JSON bodies itself.
  const hot = hotResourceRoutes(methods, [requestId, tenant, rateLimit, admit, cors, caller, csrf]);
  return { app, hot, onError };
}
