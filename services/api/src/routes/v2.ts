import type { MethodArgs } from '@quire/apps';
import { docMethodOf } from '@quire/apps';
import { deleteDoc, getCount, getDoc, getList, insertDoc, metaDict, serializeDoc, updateDoc } from '@quire/documents';
import { DoesNotExistError, MethodNotAllowed, PermissionError, TimestampMismatchError, ValidationError } from '@quire/errors';
import { cstr, decodeJsonArg } from '@quire/frappe-compat';
import { GUEST, hasPermission, permittedLevels } from '@quire/permissions';
import { Router, type Request, type Response } from 'express';
import { formDict, type FormDict } from '../http/form-dict';
import { sendJson } from '../http/respond';
import { callMethod, methodArgs, methodContext, type MethodDependencies } from './method';
import { callDocMethod, documentHandlers } from './resource';

/**
 * Frappe's API v2 (frappe/api/v2.py): documents under /api/v2/document, methods under
 * /api/v2/method, DocType information under /api/v2/doctype. Bodies are `{"data": …}`, errors
 * `{"errors": [...]}` (errors.ts, chosen by `res.locals.apiVersion`). Every route runs v1's code
 * path (the documents package, the same handlers and method calls); only parameters and shapes
 * differ: lists take `limit` (default 20) and `start`, a create or update body is the document
 * itself (no `data` wrapper).
 */

/** v2's list parameters as v1's: `limit` (default 20) is the page length, `start` (or `limit_start`) the offset. */
function listParams(fd: FormDict): FormDict {
  const { limit, start, limit_page_length: _v1, ...rest } = fd;
  const out: FormDict = { ...rest, limit_page_length: limit ?? '20' };
  if (start !== undefined) out.limit_start = start;
  return out;
}

/** The document a create or update sends: the body itself (form fields or a JSON object), less `doctype`. */
function documentBody(req: Request): Record<string, unknown> {
  const { doctype: _d, ...doc } = formDict(req);
  return doc;
}

interface DocumentPath {
  doctype: string;
  name: string;
  /** `…/<name>/method/<method>`: a document method. */
  method?: string;
}

/** `/document/<doctype>/<name…>[/method/<method>]`, the name's segments re-joined (a name may hold `/`). */
function documentPath(req: Request): DocumentPath {
  const { doctype, rest } = req.params as { doctype: string; rest?: string[] };
  const segments = [...(rest ?? [])];
  if (segments.at(-1) === '') segments.pop(); // a trailing slash is optional
  if (segments.length >= 3 && segments.at(-2) === 'method') {
    const method = segments.pop() ?? '';
    segments.pop();
    return { doctype, name: segments.join('/'), method };
  }
  if (segments.length === 0) throw new DoesNotExistError('', { silent: true });
  return { doctype, name: segments.join('/') };
}

export function v2Router(deps: MethodDependencies): Router {
  const router = Router({ strict: false });
  const { context, respondDoc, writeFlags } = documentHandlers(deps);

  // ---- documents

  router.get('/document/:doctype', async (req, res) => {
    const ctx = await context(res);
    sendJson(res, 200, { data: await getList(ctx, req.params.doctype, listParams(formDict(req)), deps.settings.of(res.locals.tenant).maxPageLength) });
  });

  router.post('/document/:doctype', async (req, res) => {
    const { doctype } = req.params;
    const ctx = await context(res);
    await respondDoc(req, res, doctype, await insertDoc(ctx, doctype, documentBody(req)), ctx);
  });

  router.get('/document/:doctype/*rest', async (req, res) => {
    const path = documentPath(req);
    if (path.method !== undefined) {
      await docMethod(deps, path, req, res);
      return;
    }
    const ctx = await context(res);
    await respondDoc(req, res, path.doctype, await getDoc(ctx, path.doctype, path.name), ctx);
  });

  router.post('/document/:doctype/*rest', async (req, res) => {
    const path = documentPath(req);
    if (path.method === undefined) throw new MethodNotAllowed('Method Not Allowed', { title: 'Method Not Allowed' });
    await docMethod(deps, path, req, res);
  });

  const update = async (req: Request, res: Response) => {
    const path = documentPath(req);
    if (path.method !== undefined) throw new MethodNotAllowed('Method Not Allowed', { title: 'Method Not Allowed' });
    const ctx = await context(res);
    const { flags: _f, ...patch } = documentBody(req);
    await respondDoc(req, res, path.doctype, await updateDoc(ctx, path.doctype, path.name, patch, writeFlags(req, ctx, path.doctype)), ctx);
  };
  router.patch('/document/:doctype/*rest', update);
  router.put('/document/:doctype/*rest', update);

  router.delete('/document/:doctype/*rest', async (req, res) => {
    const path = documentPath(req);
    if (path.method !== undefined) throw new MethodNotAllowed('Method Not Allowed', { title: 'Method Not Allowed' });
    const ctx = await context(res);
    await deleteDoc(ctx, path.doctype, path.name, writeFlags(req, ctx, path.doctype));
    sendJson(res, 202, { data: 'ok' });
  });

  // ---- DocType information

  router.get('/doctype/:doctype/meta', async (req, res) => {
    // frappe.only_for("All"): any signed-in user; fields above their permlevels are left out.
    if (res.locals.principal.user === GUEST) throw new PermissionError('Not permitted', { title: 'Not Permitted' });
    const ctx = await context(res);
    sendJson(res, 200, { data: metaDict(ctx.meta.require(req.params.doctype), ctx.principal) });
  });

  router.get('/doctype/:doctype/count', async (req, res) => {
    const ctx = await context(res);
    const { filters, or_filters } = formDict(req);
    sendJson(res, 200, { data: await getCount(ctx, req.params.doctype, { filters, or_filters }) });
  });

  // ---- methods

  router.all('/method/run_doc_method', async (req, res) => {
    if (req.method !== 'GET' && req.method !== 'POST') throw new MethodNotAllowed('Method Not Allowed', { title: 'Method Not Allowed' });
    await runDocMethodInMemory(deps, req, res);
  });

  router.all('/method/*path', async (req, res) => {
    const segments = req.params.path.filter((s) => s !== '');
    const [first = '', second] = segments;
    // /method/<doctype>/<method>: the method of the DocType's controller module.
    if (second !== undefined && !first.includes('.')) {
      const module = deps.platform.apps.controllerModules.get(first);
      if (!module) throw new ValidationError(`Failed to get method ${second} with DocType ${first}`, { title: 'Message' });
      await callMethod(deps, `${module}.${second}`, req, res);
      return;
    }
    await callMethod(deps, first, req, res);
  });

  router.all('/*rest', () => {
    throw new DoesNotExistError('', { silent: true });
  });

  return router;
}

async function docMethod(deps: MethodDependencies, path: DocumentPath, req: Request, res: Response): Promise<void> {
  await callDocMethod(deps, path.doctype, path.name, path.method ?? '', methodArgs(req), req, res);
}

/** An argument that may come as a JSON text (a query string) or as JSON already (a JSON body). */
function jsonArg(name: string, value: unknown): unknown {
  return typeof value === 'string' ? decodeJsonArg(name, value) : value;
}

/**
 * run_doc_method(method, document, kwargs) (frappe/api/v2.py): a document method on the document
 * as the caller sends it, not as stored. A stored document's `modified` must still be current
 * (check_if_latest); GET needs read permission, POST write. Answers the method's result in `data`
 * and the document, as the method left it, in `docs`.
 */
async function runDocMethodInMemory(deps: MethodDependencies, req: Request, res: Response): Promise<void> {
  const { method: methodName, document, kwargs, ...rest } = methodArgs(req);
  if (typeof methodName !== 'string' || methodName === '') throw new ValidationError('method is required', { title: 'Missing Argument' });
  const doc = jsonArg('document', document);
  if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) throw new ValidationError('document must be a JSON object', { title: 'Invalid Argument' });
  const given = doc as Record<string, unknown>;
  const doctype = typeof given.doctype === 'string' ? given.doctype : '';
  if (!doctype) throw new ValidationError('document.doctype is required', { title: 'Missing Argument' });
  const parsed = kwargs === undefined ? {} : jsonArg('kwargs', kwargs);
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed))
    throw new ValidationError('kwargs must be a JSON object', { title: 'Invalid Argument' });
  const args: MethodArgs = { ...rest, ...(parsed as MethodArgs) };

  const method = docMethodOf(deps.platform.apps, doctype, methodName);
  if (!method) throw new DoesNotExistError(`Method ${methodName} not found`, { title: 'Not Found' });
  if (!method.methods.has(req.method)) throw new PermissionError('Not permitted', { title: 'Not Permitted' });
  const { ctx, finish } = await methodContext(deps, req, res);
  const meta = ctx.doc.meta.require(doctype);
  if (typeof given.name === 'string' && given.name !== '') {
    const stored = await getDoc(ctx.doc, doctype, given.name).catch((e: unknown) => {
      if (e instanceof DoesNotExistError) return undefined;
      throw e;
    });
    if (stored && given.modified !== undefined && cstr(given.modified) !== cstr(stored.modified)) {
      throw new TimestampMismatchError(
        `Error: ${given.name} (${doctype}) has been modified after you have opened it. Please refresh to get the latest document.`,
        {
          title: 'Document Modified',
        },
      );
    }
  }
  const ptype = req.method === 'GET' ? 'read' : 'write';
  if (!hasPermission(meta, ctx.doc.principal, ptype, given)) throw new PermissionError('Not permitted', { title: 'Not Permitted' });
  const result = await method.fn(given, args, ctx);
  const hidden = permittedLevels(meta, ctx.doc.principal).hidden;
  res.locals.bodyExtras = { ...(res.locals.bodyExtras ?? {}), docs: [serializeDoc(ctx.doc.meta, meta, given, { includeNulls: false, hidden })] };
  await finish(result);
}
