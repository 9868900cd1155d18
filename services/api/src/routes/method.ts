import type { MethodArgs, WhitelistedMethod } from '@quire/apps';
import { PermissionError, ValidationError, type FrappeError } from '@quire/errors';
import { GUEST } from '@quire/permissions';
import type { Platform } from '@quire/tenancy';
import { Router, type Request, type Response } from 'express';
import { formDict, type FormDict } from '../http/form-dict';
import { locals } from '../http/locals';
import { sendJson } from '../http/respond';

/**
 * /api/method/<dotted.path> (frappe/handler.py::execute_cmd): resolve the function, refuse what is
 * not whitelisted (or not for Guest, or not for this verb) with 403, call it with the merged
 * arguments, answer `{"message": result}` or `{}`.
 */

function resolve(platform: Platform, cmd: string): { path: string; method: WhitelistedMethod | undefined } {
  // Bare command names are frappe.handler's shorthands (ping, version, ...).
  const path = cmd.includes('.') ? cmd : `frappe.handler.${cmd}`;
  return { path, method: platform.apps.methods.get(path) };
}

function notWhitelisted(path: string): FrappeError {
  const dot = path.lastIndexOf('.');
  return new PermissionError(
    `<details><summary>You are not permitted to access this resource.</summary>Function <strong>${path.slice(0, dot)}.${path.slice(dot + 1)}</strong> is not whitelisted.</details>`,
    { title: 'Method Not Allowed' },
  );
}

/** Frappe's get_newargs: only what the function takes, never `ignore_permissions` or `flags`. */
function methodArgs(fd: FormDict): MethodArgs {
  const { cmd: _cmd, ignore_permissions: _ip, flags: _f, ...args } = fd;
  return args;
}

export async function callMethod(platform: Platform, settings: { maxPageLength: number }, cmd: string, req: Request, res: Response): Promise<void> {
  const { path, method } = resolve(platform, cmd);
  if (!method) {
    if (platform.apps.functions.has(path)) throw notWhitelisted(path);
    throw new ValidationError(`Failed to get method for command ${cmd} with No module or function named ${cmd}`, { title: 'Message' });
  }
  const { tenant, principal } = locals(res);
  if (principal.user === GUEST && !method.allowGuest) throw notWhitelisted(path);
  if (!method.methods.has(req.method)) throw new PermissionError('Not permitted', { title: 'Not Permitted' });
  const ctx = await platform.context(tenant, principal);
  const result: unknown = await method.fn(methodArgs(formDict(req)), { doc: ctx, verb: req.method, settings });
  sendJson(res, 200, result === undefined || result === null ? {} : { message: result });
}

export function methodRouter(platform: Platform, settings: { maxPageLength: number }): Router {
  const router = Router({ strict: false });
  // Anything after the first `/` of the method path is ignored, as in Frappe.
  router.all('/*path', async (req, res) => {
    const segments = (req.params as { path: string[] }).path;
    await callMethod(platform, settings, segments[0] ?? '', req, res);
  });
  return router;
}
