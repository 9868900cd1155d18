import type { IncomingMessage } from 'node:http';
import { AuthenticationError } from '@quire/errors';
import { GUEST, type Principal } from '@quire/permissions';
import type { Platform, Tenant } from '@quire/tenancy';
import type { Request, RequestHandler, Response } from 'express';

/**
 * Who a socket is, decided once at its handshake as Frappe's realtime server does
 * (middlewares/authenticate.js): the namespace must name the site the request reached (its
 * `X-Frappe-Site-Name` or Host), an `Origin` must be that site's own or one it allows (CORS
 * `allow_cors`), and the caller authenticates as over HTTP — the same middleware, the same
 * strategies (`token`, `Basic`, `Bearer`, the `sid` cookie). A Guest is refused.
 */

export interface SocketIdentity {
  tenant: Tenant;
  principal: Principal;
}

/** Why a handshake was refused; its message is what the client's connect_error says. */
export class HandshakeRefused extends Error {}

function hostOf(req: IncomingMessage): string {
  const host = req.headers.host ?? '';
  return host.startsWith('[') ? host.slice(0, host.indexOf(']') + 1) : (host.split(':')[0] ?? '');
}

/** An `Origin` the tenant accepts: the request's own host (same origin), or one of its `allow_cors` entries. */
function originAllowed(req: IncomingMessage, tenant: Tenant): boolean {
  const origin = req.headers.origin;
  if (origin === undefined || origin === '') return true; // not a browser: nothing to protect from
  let originHost: string;
  try {
    originHost = new URL(origin).hostname;
  } catch {
    return false;
  }
  if (originHost === hostOf(req)) return true;
  const rule = tenant.config.allow_cors;
  if (!rule) return false;
  const list = Array.isArray(rule) ? rule : [rule];
  return list.includes('*') || list.includes(origin);
}

/**
 * The HTTP authentication middleware run on the handshake request: a request and response with
 * just what the strategies read and write (headers in, cookies or a challenge out, dropped here).
 */
function runAuthentication(caller: RequestHandler, incoming: IncomingMessage, tenant: Tenant): Promise<Principal> {
  const headersOut = new Map<string, unknown>();
  const res = {
    locals: { tenant } as { tenant: Tenant; principal?: Principal },
    setHeader: (name: string, value: unknown) => headersOut.set(name.toLowerCase(), value),
    appendHeader: (name: string, value: unknown) => headersOut.set(name.toLowerCase(), value),
    getHeader: (name: string) => headersOut.get(name.toLowerCase()),
    hasHeader: (name: string) => headersOut.has(name.toLowerCase()),
  };
  const req = {
    headers: incoming.headers,
    method: 'GET',
    url: incoming.url,
    query: {},
    body: undefined,
    hostname: hostOf(incoming),
    secure: 'encrypted' in incoming.socket,
    socket: incoming.socket,
    ip: incoming.socket.remoteAddress,
    res,
  };
  return new Promise((resolve, reject) => {
    caller(req as unknown as Request, res as unknown as Response, (err?: unknown) => {
      if (err) reject(err instanceof Error ? err : new AuthenticationError('', { silent: true }));
      else if (res.locals.principal) resolve(res.locals.principal);
      else reject(new AuthenticationError('', { silent: true }));
    });
  });
}

export async function identify(platform: Platform, caller: RequestHandler, namespace: string, req: IncomingMessage): Promise<SocketIdentity> {
  const site = req.headers['x-frappe-site-name'];
  const tenant = platform.tenants.resolve(typeof site === 'string' && site !== '' ? site : req.headers.host);
  if (!tenant || `/${tenant.name}` !== namespace) throw new HandshakeRefused('Invalid namespace');
  if (tenant.status === 'suspended') throw new HandshakeRefused('This site is suspended');
  if (!originAllowed(req, tenant)) throw new HandshakeRefused('Invalid origin');
  let principal: Principal;
  try {
    principal = await runAuthentication(caller, req, tenant);
  } catch {
    throw new HandshakeRefused('Not authenticated');
  }
  if (principal.user === GUEST) throw new HandshakeRefused('Not authenticated');
  return { tenant, principal };
}
