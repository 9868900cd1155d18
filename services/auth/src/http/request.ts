import { authorizationOf, parseBasicCredentials } from '@quire/http';
import express, { type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import type Provider from 'oidc-provider';

/** What the issuer middleware (routes/issuer.ts) leaves for every later handler, besides the tenant. */
declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace -- express types request state through this global namespace
  namespace Express {
    interface Locals {
      /** The issuer's origin (scheme and host the tenant was reached at). */
      origin: string;
      /** The tenant's oidc-provider for that origin. */
      provider: Provider;
    }
  }
}

/** An OAuth error body (RFC 6749 §5.2), never cached. */
export function oauthError(res: Response, status: number, error: string, description: string): void {
  res.status(status).set('Cache-Control', 'no-store').json({ error, error_description: description });
}

/** The form parser of every auth endpoint that reads its body (forms are small). */
export const formBody = express.urlencoded({ extended: false, limit: '64kb' });

/**
 * An async handler as express middleware: errors go to `next(e)`; a handler that resolves `false`
 * did not answer, and the request goes on (to oidc-provider).
 */
export function asyncRoute(handler: (req: Request, res: Response) => Promise<boolean | undefined>): RequestHandler {
  return (req: Request, res: Response, next: NextFunction) =>
    void handler(req, res).then((answered) => {
      if (answered === false) next();
    }, next);
}

/** A form's fields (bodies are parsed by formBody before these handlers). */
export function formOf(req: Request): Record<string, unknown> {
  return (req.body ?? {}) as Record<string, unknown>;
}

/** A percent-decoded value, or the raw text when it is not valid percent-encoding (a client's mistake, not a 500). */
function decode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/** Client id and secret from Basic auth (RFC 6749 §2.3.1: form-encoded, then base64) or the form. */
export function clientCredentials(req: Request): { id?: string; secret?: string } {
  const basic = authorizationOf(req.headers.authorization, 'basic');
  if (basic !== undefined) {
    const credentials = parseBasicCredentials(basic);
    // Malformed Basic credentials authenticate no one (the provider answers invalid_client).
    if (typeof credentials !== 'object') return {};
    return { id: decode(credentials.user), secret: decode(credentials.password) };
  }
  const body = formOf(req);
  return {
    ...(typeof body.client_id === 'string' ? { id: body.client_id } : {}),
    ...(typeof body.client_secret === 'string' ? { secret: body.client_secret } : {}),
  };
}

/** Frappe's clients post client_id/client_secret as form fields; the provider's clients use Basic. */
export function formSecretToBasic(req: Request): void {
  const body = formOf(req);
  if (typeof body.client_id === 'string' && typeof body.client_secret === 'string' && !req.headers.authorization) {
    req.headers.authorization = `Basic ${Buffer.from(`${encodeURIComponent(body.client_id)}:${encodeURIComponent(body.client_secret)}`).toString('base64')}`;
    delete body.client_secret;
    delete body.client_id;
  }
}
