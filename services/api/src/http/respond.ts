import type { DownloadFile } from '@quire/apps';
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

/** `attachment` with the name as ASCII (quotes and backslashes replaced) and, for any other character, RFC 5987's UTF-8 form. */
export function contentDisposition(name: string): string {
  const ascii = name.replace(/[^\x20-\x7e]|["\\]/g, '_');
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(name)}`;
}

/** A method's file answer (an export): a download, never rendered by the browser, never cached. */
export function sendDownload(res: Response, status: number, file: DownloadFile): void {
  const body = typeof file.content === 'string' ? Buffer.from(file.content, 'utf8') : file.content;
  res.statusCode = status;
  res.setHeader('Content-Type', file.contentType);
  res.setHeader('Content-Disposition', contentDisposition(file.filename));
  res.setHeader('Content-Length', String(body.length));
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Cache-Control', NO_STORE);
  res.end(body);
}
