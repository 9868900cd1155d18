import { deleteDoc, getDoc, getList, insertDoc, serializeDoc, updateDoc } from '@quire/documents';
import { MethodNotAllowed, PermissionError } from '@quire/errors';
import { permittedLevels } from '@quire/permissions';
import type { Platform } from '@quire/tenancy';
import { Router, type Request, type Response } from 'express';
import { z } from 'zod';
import { formDict, parseJsonParam, requestDocument, type FormDict } from '../http/form-dict';
import { locals } from '../http/locals';
import { sendJson } from '../http/respond';

/**
 * /api/resource/<DocType>[/<name>] (frappe/api/v1.py): the record API every DocType gets. One
 * generic handler per verb; nothing here knows any DocType.
 */

const doctypeParams = z.object({ doctype: z.string().min(1).max(140) });
const docParams = doctypeParams.extend({ name: z.array(z.string()).min(1) });

/** List parameters Frappe reads; JSON ones are decoded here so malformed JSON is a clean 417. */
const LIST_KEYS = ['fields', 'filters', 'or_filters', 'order_by', 'group_by', 'limit_start', 'limit_page_length', 'limit', 'as_dict', 'parent'] as const;
const JSON_KEYS = new Set(['fields', 'filters', 'or_filters']);

function listParams(fd: FormDict): Record<string, unknown> {
  const params: Record<string, unknown> = {};
  for (const key of LIST_KEYS) {
    const v = fd[key];
    if (v === undefined) continue;
    params[key] = JSON_KEYS.has(key) && typeof v === 'string' && v.trim() !== '*' && v.trim() !== '' ? parseJsonParam(key, v) : v;
  }
  return params;
}

/** Names are percent-decoded per segment by the router, then re-joined: `ACC/0001` and `ACC%2F0001` are one name. */
function docName(req: Request): { doctype: string; name: string } {
  const p = docParams.parse(req.params);
  const segments = p.name.at(-1) === '' ? p.name.slice(0, -1) : p.name; // a trailing slash is optional
  return { doctype: p.doctype, name: segments.join('/') };
}

export function resourceRouter(platform: Platform, settings: { maxPageLength: number }): Router {
  const router = Router({ strict: false });

  const context = (res: Response) => platform.context(locals(res).tenant, locals(res).principal);

  async function respondDoc(res: Response, doctype: string, doc: Record<string, unknown>): Promise<void> {
    const ctx = await context(res);
    const meta = ctx.meta.require(doctype);
    sendJson(res, 200, { data: serializeDoc(ctx.meta, meta, doc, { includeNulls: false, hidden: permittedLevels(meta, ctx.principal).hidden }) });
  }

  router.get('/:doctype', async (req, res) => {
    const { doctype } = doctypeParams.parse(req.params);
    const ctx = await context(res);
    const data = await getList(ctx, doctype, listParams(formDict(req)), settings.maxPageLength);
    sendJson(res, 200, { data });
  });

  router.post('/:doctype', async (req, res) => {
    const { doctype } = doctypeParams.parse(req.params);
    const ctx = await context(res);
    const input = requestDocument(req, formDict(req));
    delete input.doctype;
    const doc = await insertDoc(ctx, doctype, input);
    await respondDoc(res, doctype, doc);
  });

  router.get('/:doctype/*name', async (req, res) => {
    const { doctype, name } = docName(req);
    if (formDict(req).run_method !== undefined) throw new PermissionError('Not permitted', { title: 'Not Permitted' }); // document methods come with the methods issue
    const ctx = await context(res);
    await respondDoc(res, doctype, await getDoc(ctx, doctype, name));
  });

  router.put('/:doctype/*name', async (req, res) => {
    const { doctype, name } = docName(req);
    const ctx = await context(res);
    const patch = requestDocument(req, formDict(req));
    delete patch.flags;
    delete patch.doctype;
    const doc = await updateDoc(ctx, doctype, name, patch);
    await respondDoc(res, doctype, doc);
  });

  router.delete('/:doctype/*name', async (req, res) => {
    const { doctype, name } = docName(req);
    const ctx = await context(res);
    await deleteDoc(ctx, doctype, name);
    sendJson(res, 202, { data: 'ok' });
  });

  router.all(['/:doctype', '/:doctype/*name'], () => {
    throw new MethodNotAllowed('Method Not Allowed', { title: 'Method Not Allowed' });
  });

  return router;
}
