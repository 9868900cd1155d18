import type { Tenant } from '@quire/tenancy';
import type { Request, Response } from 'express';
import type Provider from 'oidc-provider';

/** What the issuer middleware (routes/issuer.ts) leaves for every later handler. */
export interface IssuerLocals {
  tenant: Tenant;
  origin: string;
  provider: Provider;
}

export function issuerOf(res: Response): IssuerLocals {
  return res.locals as IssuerLocals;
}

/** An OAuth error body (RFC 6749 §5.2), never cached. */
export function oauthError(res: Response, status: number, error: string, description: string): void {
  res.status(status).set('Cache-Control', 'no-store').json({ error, error_description: description });
}

/** A form's fields (bodies are parsed by express.urlencoded before these handlers). */
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

export function cookies(req: Request): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0) out[part.slice(0, eq).trim()] = decode(part.slice(eq + 1).trim());
  }
  return out;
}

/** Client id and secret from Basic auth (RFC 6749 §2.3.1: form-encoded, then base64) or the form. */
export function clientCredentials(req: Request): { id?: string; secret?: string } {
  const auth = req.headers.authorization ?? '';
  if (/^basic /i.test(auth)) {
    const decoded = Buffer.from(auth.slice(6), 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    if (colon > 0) return { id: decode(decoded.slice(0, colon)), secret: decode(decoded.slice(colon + 1)) };
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
