import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'vitest';
import type { TestTenant } from './server';

/**
 * OAuth Clients registered the way the OAuth suites register them (POST /api/resource/OAuth Client
 * as the tenant's Administrator), and the app's side they redirect to.
 */

/**
 * The app's redirect URI: a loopback server (RFC 8252 style) that answers the browser and hands
 * the callback URL to whichever authorization waits for its `state`.
 */
export interface CallbackServer {
  uri: string;
  waiting: Map<string, (url: URL) => void>;
}
let callbacks: Promise<CallbackServer> | undefined;

export function callbackServer(): Promise<CallbackServer> {
  callbacks ??= new Promise((resolve) => {
    const waiting = new Map<string, (url: URL) => void>();
    const server = http.createServer((req, res) => {
      const url = new URL(req.url ?? '/', `http://${req.headers.host}`);
      waiting.get(url.searchParams.get('state') ?? '')?.(url);
      res.writeHead(200, { 'Content-Type': 'text/plain', Connection: 'close' }).end('back at the app');
    });
    server.unref();
    server.listen(0, '127.0.0.1', () => resolve({ uri: `http://127.0.0.1:${(server.address() as AddressInfo).port}/callback`, waiting }));
  });
  return callbacks;
}

export async function redirectUri(): Promise<string> {
  return (await callbackServer()).uri;
}

export interface ClientOptions {
  public?: boolean;
  scopes?: string;
  redirectUris?: string[];
  clientCredentialsUser?: string;
  skipAuthorization?: boolean;
  allowedRoles?: string[];
}

export interface RegisteredClient {
  client_id: string;
  client_secret?: string;
}

/** Registers an OAuth Client through the API, as a System Manager would. */
export async function createClient(t: TestTenant, o: ClientOptions = {}): Promise<RegisteredClient> {
  const res = await t.call('POST', '/api/resource/OAuth Client', {
    json: {
      app_name: 'Test App',
      client_type: o.public ? 'Public' : 'Confidential',
      grant_type: o.clientCredentialsUser ? 'Client Credentials' : 'Authorization Code',
      redirect_uris: (o.redirectUris ?? [await redirectUri()]).join('\n'),
      scopes: o.scopes ?? 'all openid profile email offline_access',
      skip_authorization: o.skipAuthorization ? 1 : 0,
      ...(o.clientCredentialsUser ? { user: o.clientCredentialsUser } : {}),
      ...(o.allowedRoles ? { allowed_roles: o.allowedRoles.map((role) => ({ role })) } : {}),
    },
  });
  expect(res.status, res.text).toBe(200);
  const doc = res.body.data as { name: string; client_secret?: string };
  return { client_id: doc.name, ...(o.public ? {} : { client_secret: doc.client_secret! }) };
}

/** A confidential client-credentials client acting as the Administrator, limited to `scopes`. */
export function machineClient(t: TestTenant, scopes = 'all'): Promise<RegisteredClient> {
  return createClient(t, { clientCredentialsUser: 'Administrator', scopes });
}
