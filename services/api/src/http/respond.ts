import type { Response } from 'express';

const NO_STORE = 'no-store,no-cache,must-revalidate,max-age=0';

/**
 * Writes a JSON body the way Frappe does: compact, `application/json`, never cached. Keys a
 * middleware added for every response (e.g. `session_expired`) are merged in.
 */
export function sendJson(res: Response, status: number, body: Record<string, unknown>): void {
  const extras = res.locals.bodyExtras;
  sendJsonText(res, status, JSON.stringify(extras ? { ...body, ...extras } : body));
}

/** Writes JSON already serialized (a body made once and sent many times), with sendJson's headers. */
export function sendJsonText(res: Response, status: number, json: string): void {
  res.statusCode = status;
  res.setHeader('Content-Type', 'application/json');
  // Never rendered as anything else, whatever a value inside looks like.
  res.setHeader('X-Content-Type-Options', 'nosniff');
  if (!res.hasHeader('Cache-Control')) res.setHeader('Cache-Control', NO_STORE);
  res.end(json);
}
