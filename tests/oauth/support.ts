import * as client from 'openid-client';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { expect } from 'vitest';
import { hostFetch } from '../support/host-fetch';
import { callbackServer, createClient, type ClientOptions, type RegisteredClient } from '../support/oauth-clients';
import { startTestServer, type TestServer, type TestTenant } from '../support/server';

/**
 * The OAuth suites' shared parts: a real Chromium (from apt) driving the login and consent pages,
 * openid-client (a certified relying party) on the app's side, tenants on their own subdomains.
 * Registering the apps (OAuth Clients) is in ../support/oauth-clients.
 */

export const PASSWORD = 'correct horse battery staple';

export function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--disable-background-networking', '--host-resolver-rules=MAP *.localhost 127.0.0.1'],
  });
}

/** The OAuth suites' file-wide fixtures: an API server that serves the auth service too, and a Chromium. */
export function startServerAndBrowser(): Promise<[TestServer, Browser]> {
  return Promise.all([startTestServer({ auth: true }), launchBrowser()]);
}

/** Closes what startServerAndBrowser started (either is missing when starting it failed). */
export async function stopServerAndBrowser(server: TestServer | undefined, browser: Browser | undefined): Promise<void> {
  await browser?.close();
  await server?.close();
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

const rpFetch = (url: string, options: { body?: unknown; headers: Record<string, string>; method: string; redirect: 'manual'; signal?: AbortSignal }) =>
  hostFetch(url, options as RequestInit);

/** openid-client's view of the tenant's issuer (discovered, as every relying party does). */
export async function discover(server: TestServer, t: { name: string }, id: string, secret?: string): Promise<client.Configuration> {
  const config = await client.discovery(
    new URL(originOf(server, t)),
    id,
    secret ? { client_secret: secret } : { token_endpoint_auth_method: 'none' },
    secret ? client.ClientSecretBasic(secret) : client.None(),
    {
      // eslint-disable-next-line @typescript-eslint/no-deprecated -- test tenants are served over plain http; openid-client refuses http issuers without it
      execute: [client.allowInsecureRequests],
      [client.customFetch]: rpFetch,
    },
  );
  config[client.customFetch] = rpFetch;
  return config;
}

export interface TenantWithApp {
  t: TestTenant;
  /** The tenant's own origin (originOf). */
  origin: string;
  app: RegisteredClient;
  /** openid-client configured for the app (with its secret when it has one). */
  config: client.Configuration;
}

/** A fresh tenant (`prefix`) with a user `email` who signs in with PASSWORD, and an app registered for it. */
export async function tenantWithApp(server: TestServer, prefix: string, email: string, options: ClientOptions = {}): Promise<TenantWithApp> {
  const t = await server.tenant(prefix);
  await createUser(t, email);
  const app = await createClient(t, options);
  const config = await discover(server, t, app.client_id, app.client_secret);
  return { t, origin: originOf(server, t), app, config };
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
  // A property rather than a local: the callback sets it while the loop below runs, which a local's narrowing would not see.
  const redirect = { arrived: false };
  void redirected.then(() => (redirect.arrived = true));
  await page.goto(url.href);
  for (let step = 0; step < 4; step++) {
    await page.waitForLoadState('load');
    if (redirect.arrived || page.url().includes('/callback')) break;
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
  const callback = await Promise.race([
    redirected,
    new Promise<URL>((_, reject) => setTimeout(() => reject(new Error(`no redirect; pages: ${pages.join(' / ')}`)), 5000)),
  ]);
  return { callback, pages };
}

/** The code exchange, with openid-client's checks (state, PKCE, ID token signature, issuer, nonce). */
export function exchange(config: client.Configuration, result: AuthorizeResult) {
  return client.authorizationCodeGrant(config, result.callback, {
    pkceCodeVerifier: result.verifier,
    expectedState: result.state,
    expectedNonce: result.nonce,
  });
}

export const bearer = (token: string) => `Bearer ${token}`;
