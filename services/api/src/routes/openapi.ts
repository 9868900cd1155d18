import { createRequire } from 'node:module';
import { Router } from 'express';
import { sendJson } from '../http/respond';
import { openApiDocument } from '../openapi/document';
import type { MethodDependencies } from './method';

const { version } = createRequire(import.meta.url)('../../package.json') as { version: string };

/**
 * GET /api/openapi.json: the OpenAPI 3.1 description of the caller's tenant as the caller may use
 * it (openapi/document.ts). Its page, /api/docs, is the desk's (routes/desk.ts).
 */
export function openApiRouter({ platform }: MethodDependencies): Router {
  const router = Router();
  router.get('/api/openapi.json', async (req, res) => {
    const ctx = await platform.context(res.locals.tenant, res.locals.principal);
    const origin = `${req.protocol}://${req.get('host') ?? `${ctx.tenant.name}.localhost`}`;
    const document = openApiDocument({ tenant: ctx.tenant, meta: ctx.meta, principal: ctx.principal, apps: platform.apps, origin, version });
    res.setHeader('Cache-Control', 'private, no-cache');
    sendJson(res, 200, document);
  });
  return router;
}
