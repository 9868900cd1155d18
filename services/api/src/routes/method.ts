import type { DownloadFile, MethodArgs, MethodContext, MethodResponse, WhitelistedMethod } from '@quire/apps';
import type { TenantSettings } from '../http/tenant-settings';
import { PermissionError, ValidationError, type FrappeError } from '@quire/errors';
import { HeldJobs, jobEnqueueing } from '@quire/documents';
import { mergeFormFields, pythonJsonDumps } from '@quire/frappe-compat';
import { clearCookie, setCookie } from '@quire/http';
import { enforceRateLimits } from '@quire/limits';
import { GUEST, isScopeRestricted } from '@quire/permissions';
import type { Platform } from '@quire/tenancy';
import { Router, type Request, type Response } from 'express';
import { mediaTypeOf } from '../http/json-body';
import { sendDownload, sendJson } from '../http/respond';
import { sessionId } from '../middleware/authenticate';

/**
 * /api/method/<dotted.path> (frappe/handler.py::execute_cmd): resolve the function, refuse what is
 * not whitelisted (or not for Guest, or not for this verb) with 403, call it with the merged
 * arguments, answer `{"message": result}` or `{}`.
 */

export interface MethodDependencies {
  platform: Platform;
  /** The method settings, as each tenant's plan narrows them. */
  settings: TenantSettings;
}

function resolve(platform: Platform, cmd: string): { path: string; method: WhitelistedMethod | undefined } {
  // Bare command names are frappe.handler's shorthands (ping, login, logout, upload_file, ...).
  const path = cmd.includes('.') ? cmd : `frappe.handler.${cmd}`;
  return { path, method: platform.apps.methods.get(path) };
}

function notWhitelisted(path: string): FrappeError {
  return new PermissionError(
    `<details><summary>You are not permitted to access this resource.</summary>Function <strong>${path}</strong> is not whitelisted.</details>`,
    { title: 'Method Not Allowed' },
  );
}

/** Keys Frappe never passes to a method (get_newargs), or that carry request plumbing. */
const DROPPED = new Set(['cmd', 'ignore_permissions', 'flags', 'sid', 'csrf_token', '_']);

/**
 * A method's arguments: the query string, then the body's fields on top (JSON object, form or
 * multipart fields). POST and PUT read the query string too (the Python client's post_api sends
 * its arguments there); a JSON array body is `data`; `key[]` (axios) keeps every value.
 */
export function methodArgs(req: Request): MethodArgs {
  const args: MethodArgs = {};
  mergeFormFields(args, req.query);
  const body: unknown = req.body;
  if (Array.isArray(body)) args.data = body;
  else if (body !== null && typeof body === 'object' && !Buffer.isBuffer(body)) mergeFormFields(args, body as Record<string, unknown>, { keepRepeated: true });
  else if (body !== undefined && mediaTypeOf(req) === 'application/json') {
    throw new ValidationError('Invalid request arguments', { title: 'Invalid Request' });
  }
  return Object.fromEntries(Object.entries(args).filter(([key]) => !DROPPED.has(key)));
}

function responder(req: Request, res: Response, resultKey: 'message' | 'data'): { response: MethodResponse; finish: (result: unknown) => void } {
  const extras: Record<string, unknown> = {};
  const messages: Array<{ message: string; title: string }> = [];
  let status = 200;
  let download: DownloadFile | undefined;
  const response: MethodResponse = {
    set: (key, value) => void (extras[key] = value),
    setCookie: (name, value, options) => setCookie(req, res, name, value, options),
    clearCookie: (name) => clearCookie(req, res, name),
    status: (code) => void (status = code),
    msgprint: (message, title = 'Message') => void messages.push({ message, title }),
    download: (file) => void (download = file),
  };
  return {
    response,
    finish(result) {
      if (download) {
        sendDownload(res, status, download);
        return;
      }
      const v2 = res.locals.apiVersion === 'v2';
      const key = v2 ? 'data' : resultKey;
      const body: Record<string, unknown> = result === undefined || result === null ? { ...extras } : { [key]: result, ...extras };
      // v1: a JSON string of JSON strings (_server_messages); v2: a JSON array (messages).
      if (messages.length > 0) {
        if (v2) body.messages = messages;
        else body._server_messages = pythonJsonDumps(messages.map((m) => pythonJsonDumps(m)));
      }
      sendJson(res, status, body);
    },
  };
}

export async function callMethod(deps: MethodDependencies, cmd: string, req: Request, res: Response): Promise<void> {
  const { platform } = deps;
  const { path, method } = resolve(platform, cmd);
  if (!method) {
    if (platform.apps.functions.has(path)) throw notWhitelisted(path);
    throw new ValidationError(`Failed to get method for command ${cmd} with No module or function named ${cmd}`, { title: 'Message' });
  }
  const { principal } = res.locals;
  if (principal.user === GUEST && !method.allowGuest) throw notWhitelisted(path);
  // An OAuth token limited by scopes may call only methods whose checks apply those scopes.
  if (isScopeRestricted(principal) && !method.allowScopedTokens) {
    throw new PermissionError("Not permitted for this token's scope", { title: 'Not Permitted' });
  }
  if (!method.methods.has(req.method)) throw new PermissionError('Not permitted', { title: 'Not Permitted' });
  const args = checkedArgs(path, method, methodArgs(req));
  if (method.rateLimit.length > 0) {
    await enforceRateLimits(platform.rateCounter, method.rateLimit, { scope: `${res.locals.tenant.name}:${path}`, ip: req.ip ?? '', args });
  }
  const { ctx, finish } = await methodContext(deps, req, res);
  await finish(await method.fn(args, ctx));
}

/** The arguments as the method's declared schema (whitelist's `args`) reads them; a mismatch is a 417 naming the argument. */
function checkedArgs(path: string, method: WhitelistedMethod, args: MethodArgs): MethodArgs {
  if (!method.args) return args;
  const parsed = method.args.safeParse(args);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const where = issue && issue.path.length > 0 ? issue.path.join('.') : 'arguments';
  throw new ValidationError(`Invalid argument ${where} for ${path}: ${issue?.message ?? 'invalid'}`, { title: 'Invalid Argument' });
}

/** The context a method (or a document method) runs with, and how its result is answered. */
export async function methodContext(
  deps: MethodDependencies,
  req: Request,
  res: Response,
  resultKey: 'message' | 'data' = 'message',
): Promise<{ ctx: MethodContext; finish: (result: unknown) => Promise<void> }> {
  const { tenant, principal } = res.locals;
  const doc = await deps.platform.context(tenant, principal);
  const { response, finish } = responder(req, res, resultKey);
  const held = new HeldJobs();
  const ctx: MethodContext = {
    ...jobEnqueueing(() => ctx.doc, held),
    doc,
    siteUrl: deps.platform.siteUrl(tenant),
    verb: req.method,
    settings: deps.settings.of(tenant),
    request: {
      ip: req.ip ?? '127.0.0.1',
      headers: req.headers as Record<string, string | undefined>,
      files: res.locals.files ?? [],
      sessionId: sessionId(req),
    },
    response,
  };
  return {
    ctx,
    // Jobs held for after the method are written before it is answered: an answered call never loses them.
    async finish(result) {
      await held.release();
      finish(result);
    },
  };
}

export function methodRouter(deps: MethodDependencies): Router {
  const router = Router({ strict: false });
  // Anything after the first `/` of the method path is ignored, as in Frappe.
  router.all('/*path', async (req, res) => {
    const segments = req.params.path;
    await callMethod(deps, segments[0] ?? '', req, res);
  });
  return router;
}
