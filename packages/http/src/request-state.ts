import { randomUUID } from 'node:crypto';
import type { Tenant } from '@quire/tenancy';
import type { NextFunction, Request, Response } from 'express';

/**
 * What the shared middlewares leave on `res.locals`, typed for every service (each service adds its
 * own fields the same way), so handlers read `res.locals.tenant` without a cast.
 */
declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace -- express types request state through this global namespace
  namespace Express {
    interface Locals {
      /** The request's id (the caller's X-Request-Id when sane): echoed back and put in every log line. */
      requestId: string;
      /** The tenant the request is for, once resolved from its host (or X-Frappe-Site-Name on the API). */
      tenant: Tenant;
    }
  }
}

/** The request state of a request seen without its response (a passport strategy gets only `req`). */
export function localsOf(req: Request): Express.Locals {
  const { res } = req;
  if (!res) throw new Error('express links every request to its response');
  return res.locals;
}

const SAFE_ID = /^[A-Za-z0-9._-]{1,128}$/;

/** Gives every request an id, echoed in `X-Request-Id`. */
export function requestId(req: Request, res: Response, next: NextFunction): void {
  const given = req.headers['x-request-id'];
  const id = typeof given === 'string' && SAFE_ID.test(given) ? given : randomUUID();
  res.locals.requestId = id;
  res.setHeader('X-Request-Id', id);
  next();
}
