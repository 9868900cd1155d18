import { ApiException } from '@kubernetes/client-node';

/** The HTTP status of a failed API call (ApiException, or a watch's `statusCode`), else undefined (network). */
export function statusOf(err: unknown): number | undefined {
  if (err instanceof ApiException) return err.code;
  if (typeof err === 'object' && err !== null) {
    const { statusCode, code } = err as { statusCode?: unknown; code?: unknown };
    if (typeof statusCode === 'number') return statusCode;
    if (typeof code === 'number') return code;
  }
  return undefined;
}

export const isNotFound = (err: unknown): boolean => statusOf(err) === 404;
/** 409: a stale resourceVersion, or AlreadyExists on create. */
export const isConflict = (err: unknown): boolean => statusOf(err) === 409;

/** What to log of a failed API call: its status and the server's message, never the request. */
export function describe(err: unknown): string {
  if (err instanceof ApiException) {
    const body: unknown = err.body;
    let message: unknown;
    try {
      message = (typeof body === 'string' ? (JSON.parse(body) as { message?: unknown }) : (body as { message?: unknown } | undefined))?.message;
    } catch {
      message = undefined;
    }
    return `${err.code}${typeof message === 'string' ? ` ${message}` : ''}`;
  }
  return err instanceof Error ? err.message : String(err);
}
