import { deleteDoc, getDoc, getList, insertDoc, serializeDoc, updateDoc, type DocContext, type WriteFlags } from '@quire/documents';
import { docMethodOf } from '@quire/apps';
import { DoesNotExistError, MethodNotAllowed, PermissionError, ValidationError } from '@quire/errors';
import { hasPermission, permittedLevels } from '@quire/permissions';
import { Router, type Request, type RequestHandler, type Response } from 'express';
import type { IncomingMessage } from 'node:http';
import type { HotRoute } from '../dispatch';
import { z } from 'zod';
import { documentEtag, ifMatch, notModified } from '../http/etag';
import { formDict, requestDocument, type FormDict } from '../http/form-dict';
import { sendJson } from '../http/respond';
import type { MethodArgs } from '@quire/apps';
import { methodArgs, methodContext, type MethodDependencies } from './method';

/**
 * /api/resource/<DocType>[/<name>] (frappe/api/v1.py): the record API every DocType gets. One
 * generic handler per verb; nothing here knows any DocType.
 */

const doctypeParams = z.object({ doctype: z.string().min(1).max(140) });
const docParams = doctypeParams.extend({ name: z.array(z.string()).min(1) });

/** The DocType of the path; zod judges (and words the error) only when the quick check fails. */
function doctypeOf(req: Request): string {
  const { doctype } = req.params as { doctype?: unknown };
  return typeof doctype === 'string' && doctype.length >= 1 && doctype.length <= 140 ? doctype : doctypeParams.parse(req.params).doctype;
}

/** Names are percent-decoded per segment by the router, then re-joined: `ACC/0001` and `ACC%2F0001` are one name. */
function docName(req: Request): { doctype: string; name: string } {
  const doctype = doctypeOf(req);
  const raw = (req.params as { name?: unknown }).name;
  const segments = Array.isArray(raw) && raw.length > 0 && raw.every((s) => typeof s === 'string') ? raw : docParams.parse(req.params).name;
  const name = segments.at(-1) === '' ? segments.slice(0, -1) : segments; // a trailing slash is optional
  return { doctype, name: name.join('/') };
}

/** Reads, creates and updates, as handlers both the express router and the hot routes (dispatch.ts) run (and API v2, v2.ts). */
export function documentHandlers(deps: MethodDependencies) {
  const { platform, settings } = deps;
  const context = (res: Response) => platform.context(res.locals.tenant, res.locals.principal);

  /**
   * A document as the caller may see it, with its entity tag (etag.ts); a read whose
   * `If-None-Match` names the current version is answered 304 without a body.
   */
  async function respondDoc(req: Request, res: Response, doctype: string, doc: Record<string, unknown>, known?: DocContext): Promise<void> {
    const ctx = known ?? (await context(res));
    const meta = ctx.meta.require(doctype);
    const hidden = permittedLevels(meta, ctx.principal).hidden;
    const etag = documentEtag(meta.name, doc, hidden);
    res.setHeader('ETag', etag);
    if (req.method === 'GET' || req.method === 'HEAD') {
      // Kept by the caller's own cache only, and asked again each time (the answer may be a 304).
      res.setHeader('Cache-Control', 'private, no-cache');
      if (notModified(req, etag)) {
        res.statusCode = 304;
        res.end();
        return;
      }
    }
    sendJson(res, 200, { data: serializeDoc(ctx.meta, meta, doc, { includeNulls: false, hidden }) });
  }

  /** The write flags of a request: its `If-Match`, checked against the stored version in the write's transaction. */
  function writeFlags(req: Request, ctx: DocContext, doctype: string): WriteFlags {
    const meta = ctx.meta.require(doctype);
    const precondition = ifMatch(req, meta.name, permittedLevels(meta, ctx.principal).hidden);
    return precondition ? { precondition } : {};
  }

  return {
    context,
    respondDoc,
    writeFlags,
    list: async (req: Request, res: Response): Promise<void> => {
      const doctype = doctypeOf(req);
      const ctx = await context(res);
      const data = await getList(ctx, doctype, formDict(req), settings.of(res.locals.tenant).maxPageLength);
      sendJson(res, 200, { data });
    },
    read: async (req: Request, res: Response): Promise<void> => {
      const { doctype, name } = docName(req);
      const fd = formDict(req);
      if (fd.run_method !== undefined) {
        await runDocMethod(deps, doctype, name, fd, req, res);
        return;
      }
      const ctx = await context(res);
      await respondDoc(req, res, doctype, await getDoc(ctx, doctype, name), ctx);
    },
    create: async (req: Request, res: Response): Promise<void> => {
      const doctype = doctypeOf(req);
      const ctx = await context(res);
      const input = requestDocument(req, formDict(req));
      delete input.doctype;
      await respondDoc(req, res, doctype, await insertDoc(ctx, doctype, input), ctx);
    },
    update: async (req: Request, res: Response): Promise<void> => {
      const { doctype, name } = docName(req);
      const ctx = await context(res);
      const patch = requestDocument(req, formDict(req));
      delete patch.flags;
      delete patch.doctype;
      await respondDoc(req, res, doctype, await updateDoc(ctx, doctype, name, patch, writeFlags(req, ctx, doctype)), ctx);
    },
  };
}

const RESOURCE_PREFIXES = ['/api/resource/', '/api/v1/resource/'];

/** express' params for a resource path: the DocType, and the name's segments, each percent-decoded (throws URIError). */
function resourceParams(path: string): Record<string, unknown> {
  const prefix = RESOURCE_PREFIXES.find((p) => path.startsWith(p)) ?? '';
  const [doctype = '', ...rest] = path.slice(prefix.length).split('/');
  const name = rest.length === 0 || (rest.length === 1 && rest[0] === '') ? undefined : rest.map(decodeURIComponent);
  return name ? { doctype: decodeURIComponent(doctype), name } : { doctype: decodeURIComponent(doctype) };
}

/**
 * GET a list and a document, POST a document and PUT one, answered before express' router
 * (dispatch.ts) with the app's own middlewares; a request with `run_method` (a document method) is
 * left to the express router, as are bodies other than plain JSON.
 */
export function hotResourceRoutes(deps: MethodDependencies, middlewares: readonly RequestHandler[]): HotRoute[] {
  const { list, read, create, update } = documentHandlers(deps);
  const collection = RESOURCE_PREFIXES.map((p) => `${p}:doctype`);
  const document = RESOURCE_PREFIXES.map((p) => `${p}:doctype/*`);
  const docMethod = (req: IncomingMessage) => (req.url ?? '').includes('run_method');
  return [
    { method: 'GET', paths: collection, params: resourceParams, middlewares, handler: list },
    { method: 'GET', paths: document, params: resourceParams, declines: docMethod, middlewares, handler: read },
    { method: 'POST', paths: collection, params: resourceParams, middlewares, handler: create },
    { method: 'PUT', paths: document, params: resourceParams, declines: docMethod, middlewares, handler: update },
  ];
}

export function resourceRouter(deps: MethodDependencies): Router {
  const router = Router({ strict: false });
  const { context, writeFlags, list, read, create, update } = documentHandlers(deps);

  router.get('/:doctype', list);
  router.post('/:doctype', create);
  router.get('/:doctype/*name', read);
  router.put('/:doctype/*name', update);

  router.delete('/:doctype/*name', async (req, res) => {
    const { doctype, name } = docName(req);
    const ctx = await context(res);
    await deleteDoc(ctx, doctype, name, writeFlags(req, ctx, doctype));
    sendJson(res, 202, { data: 'ok' });
  });

  router.post('/:doctype/*name', async (req, res) => {
    const { doctype, name } = docName(req);
    await runDocMethod(deps, doctype, name, formDict(req), req, res);
  });

  router.all(['/:doctype', '/:doctype/*name'], () => {
    throw new MethodNotAllowed('Method Not Allowed', { title: 'Method Not Allowed' });
  });

  return router;
}

/**
 * run_method (frappe/api/v1.py::execute_doc_method): a whitelisted document method, on a document
 * the caller may read (GET) or write (POST). Answers `{"data": result}`.
 */
async function runDocMethod(deps: MethodDependencies, doctype: string, name: string, fd: FormDict, req: Request, res: Response): Promise<void> {
  const methodName = fd.run_method;
  if (typeof methodName !== 'string' || methodName === '') throw new ValidationError('run_method is required', { title: 'Missing Argument' });
  const { run_method: _r, ...args } = methodArgs(req);
  await callDocMethod(deps, doctype, name, methodName, args, req, res);
}

/**
 * A whitelisted document method on a stored document (v1's run_method, v2's
 * /document/<doctype>/<name>/method/<method>): read permission for GET, write for the other verbs.
 */
export async function callDocMethod(
  deps: MethodDependencies,
  doctype: string,
  name: string,
  methodName: string,
  args: MethodArgs,
  req: Request,
  res: Response,
): Promise<void> {
  const method = docMethodOf(deps.platform.apps, doctype, methodName);
  if (!method) throw new DoesNotExistError(`Method ${methodName} not found`, { title: 'Not Found' });
  if (!method.methods.has(req.method)) throw new PermissionError('Not permitted', { title: 'Not Permitted' });
  const { ctx, finish } = await methodContext(deps, req, res, 'data');
  const doc = await getDoc(ctx.doc, doctype, name);
  const meta = ctx.doc.meta.require(doctype);
  if (req.method !== 'GET' && !hasPermission(meta, ctx.doc.principal, 'write', doc)) throw new PermissionError('Not permitted', { title: 'Not Permitted' });
  await finish(await method.fn(doc, args, ctx));
}
