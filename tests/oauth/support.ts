import http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as client from 'openid-client';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { expect } from 'vitest';
import { hostFetch } from '../support/host-fetch';
import type { TestServer, TestTenant } from '../support/server';

/**
 * The OAuth suites' shared parts: a real Chromium (from apt) driving the login and consent pages,
 * openid-client (a certified relying party) on the app's side, tenants on their own subdomains.
 */

export const PASSWORD = 'correct horse battery staple';
/**
 * The app's redirect URI: a loopback server (RFC 8252 style) that answers the browser and hands
 * the callback URL to whichever authorization waits for its `state`.
 */
interface CallbackServer {
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

export function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--disable-background-networking', '--host-resolver-rules=MAP *.localhost 127.0.0.1'],
  });
}

/** The tenant's own origin: its subdomain of the test server's BASE_DOMAIN (localhost). */
export function originOf(server: TestServer, t: { name: string }): string {
  return `http://${t.name}.localhost:${server.port}`;
}

export async function createUser(t: TestTenant, email: string, roles: string[] = ['System Manager']): Promise<void> {
  const res = await t.call('POST', '/api/resource/User', {
    json: { email, first_name: email.split('@')[0], last_name: 'Tester', new_password: PASSWORD, roles: roles.map((role) => ({ role })) },
  });
  expect(res.status, res.text).toBe(200);
}

export interface ClientOptions {
  public?: boolean;
  scopes?: string;
  redirectUris?: string[];
  clientCredentialsUser?: string;
  skipAuthorization?: boolean;
  allowedRoles?: string[];
}

/** Registers an OAuth Client through the API, as a System Manager would. */
export async function createClient(t: TestTenant, o: ClientOptions = {}): Promise<{ client_id: string; client_secret?: string }> {
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

const rpFetch = (url: string, options: { body?: unknown; headers: Record<string, string>; method: string; redirect: 'manual'; signal?: AbortSignal }) =>
  hostFetch(url, options as RequestInit);

/** openid-client's view of the tenant's issuer (discovered, as every relying party does). */
export async function discover(server: TestServer, t: { name: string }, id: string, secret?: string): Promise<client.Configuration> {
  const config = await client.discovery(new URL(originOf(server, t)), id, secret ? { client_secret: secret } : { token_endpoint_auth_method: 'none' }, secret ? client.ClientSecretBasic(secret) : client.None(), {
    execute: [client.allowInsecureRequests],
    [client.customFetch]: rpFetch,
  });
  config[client.customFetch] = rpFetch;
  return config;
}

export interface AuthorizeResult {
  /** The URL the browser was sent back to (with `code` or `error`). */
  callback: URL;
  verifier: string;
  state: string;
  nonce: string;
  /** Which pages the user saw on the way. */
  pages: string[];
}

export interface UserActions {
  email?: string;
  password?: string;
  decision?: 'allow' | 'deny';
}

/**
 * Sends the browser to the authorization endpoint and plays the user: signs in when asked,
 * allows (or denies) on the consent page, and returns where the browser was redirected.
 */
export async function authorizeInBrowser(
  context: BrowserContext,
  config: client.Configuration,
  params: Record<string, string>,
  user: UserActions = {},
): Promise<AuthorizeResult> {
  const verifier = client.randomPKCECodeVerifier();
  const state = client.randomState();
  const nonce = client.randomNonce();
  const cb = await callbackServer();
  const url = client.buildAuthorizationUrl(config, {
    redirect_uri: cb.uri,
    scope: 'openid profile email offline_access all',
    code_challenge: await client.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state,
    nonce,
    ...params,
  });
  const page = await context.newPage();
  try {
    const redirected = new Promise<URL>((resolve) => cb.waiting.set(state, resolve));
    const callback = await playUser(page, url, user, redirected);
    cb.waiting.delete(state);
    return { ...callback, verifier, state, nonce };
  } finally {
    await page.close();
  }
}

async function playUser(page: Page, url: URL, user: UserActions, redirected: Promise<URL>): Promise<{ callback: URL; pages: string[] }> {
  const pages: string[] = [];
  let back = false;
  void redirected.then(() => (back = true));
  await page.goto(url.href);
  for (let step = 0; step < 4; step++) {
    await page.waitForLoadState('load');
    if (back || page.url().includes('/callback')) break;
    if (await page.locator('input[name=pwd]').count()) {
      pages.push('login');
      await page.getByLabel(/email|user/i).fill(user.email ?? '');
      await page.getByLabel(/password/i).fill(user.password ?? PASSWORD);
      await Promise.all([page.waitForLoadState('load'), page.getByRole('button', { name: /sign in/i }).click()]);
      continue;
    }
    if (await page.locator('button[name=decision]').count()) {
      pages.push('consent');
      const name = user.decision === 'deny' ? /deny/i : /allow/i;
      await page.getByRole('button', { name }).click();
      continue;
    }
    pages.push(`other: ${(await page.locator('body').innerText()).slice(0, 200)}`);
    break;
  }
  const callback = await Promise.race([redirected, new Promise<URL>((_, reject) => setTimeout(() => reject(new Error(`no redirect; pages: ${pages.join(' / ')}`)), 5000))]);
  return { callback, pages };
}

/** The code exchange, with openid-client's checks (state, PKCE, ID token signature, issuer, nonce). */
export function exchange(config: client.Configuration, result: AuthorizeResult) {
  return client.authorizationCodeGrant(config, result.callback, { pkceCodeVerifier: result.verifier, expectedState: result.state, expectedNonce: result.nonce });
}

export const bearer = (token: string) => `Bearer ${token}`;
