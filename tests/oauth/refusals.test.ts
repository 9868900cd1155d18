import { decodeJwt, decodeProtectedHeader, generateKeyPair, SignJWT } from 'jose';
import * as client from 'openid-client';
import type { Browser, Locator, Page, Response } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hostFetch } from '../support/host-fetch';
import { parseJson } from '../support/json';
import { createClient, machineClient, redirectUri } from '../support/oauth-clients';
import type { TestServer } from '../support/server';
import { authorizeInBrowser, bearer, createUser, discover, exchange, originOf, startServerAndBrowser, stopServerAndBrowser, tenantWithApp } from './support';

/**
 * What the auth service and the API refuse, each with the standard error: a client with the wrong
 * secret, an unregistered redirect URI, a public client without PKCE, the implicit and password
 * grants, another tenant's token, a user whose roles do not allow the app, a forged login form.
 */

let server: TestServer;
let browser: Browser;

beforeAll(async () => {
  [server, browser] = await startServerAndBrowser();
});

afterAll(() => stopServerAndBrowser(server, browser));

async function post(origin: string, path: string, fields: Record<string, string>, headers: Record<string, string> = {}) {
  const res = await hostFetch(`${origin}${path}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded', Accept: 'application/json', ...headers },
    body: new URLSearchParams(fields).toString(),
  });
  const text = await res.text();
  return { status: res.status, body: parseJson(text, text), headers: res.headers };
}

/** The OAuth error code of an openid-client failure (a body error, or a 401's WWW-Authenticate challenge). */
function oauthErrorOf(e: unknown): string | undefined {
  if (e instanceof client.ResponseBodyError) return e.error;
  if (e instanceof client.WWWAuthenticateChallengeError) return e.cause[0]?.parameters.error;
  throw e;
}

/** Clicks a form's submit button and waits until the page it navigates to has loaded; returns that page's response. */
async function submitForm(page: Page, button: Locator): Promise<Response> {
  const [response] = await Promise.all([
    page.waitForResponse((r) => r.request().isNavigationRequest() && r.frame() === page.mainFrame()),
    page.waitForEvent('framenavigated', (frame) => frame === page.mainFrame()),
    button.click(),
  ]);
  await page.waitForLoadState('load');
  return response;
}

const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`;

async function get(url: string, headers: Record<string, string> = {}) {
  const res = await hostFetch(url, { redirect: 'manual', headers });
  return { status: res.status, location: res.headers.get('location'), text: await res.text() };
}

describe('the token endpoint', () => {
  it('refuses a wrong client secret (invalid_client) and keeps the code for the rightful exchange', async () => {
    const { t, app, config: right } = await tenantWithApp(server, 'rf', 'sec@example.com', { skipAuthorization: true });
    const wrong = await discover(server, t, app.client_id, `${app.client_secret!.slice(0, -2)}xx`);
    const context = await browser.newContext();
    const result = await authorizeInBrowser(context, right, {}, { email: 'sec@example.com' });
    const refused = await exchange(wrong, result).then(() => 'accepted', oauthErrorOf);
    expect(refused).toBe('invalid_client');
    const tokens = await exchange(right, result);
    expect(tokens.access_token).toBeTruthy();
    await context.close();

    // Client credentials too, with the secret in Basic auth or (as Frappe's clients send it) in the form.
    const machine = await machineClient(t);
    const origin = originOf(server, t);
    const bad = await post(origin, '/oauth/token', { grant_type: 'client_credentials' }, { Authorization: basic(machine.client_id, 'not-the-secret') });
    expect(bad.status).toBe(401);
    expect(bad.body.error).toBe('invalid_client');
    const badForm = await post(origin, '/api/method/frappe.integrations.oauth2.get_token', {
      grant_type: 'client_credentials',
      client_id: machine.client_id,
      client_secret: 'nope',
    });
    expect(badForm.status, JSON.stringify(badForm.body)).toBe(401);
    expect(badForm.body.error).toBe('invalid_client');
    // Malformed percent-encoding in Basic credentials is the client's mistake: 401, not 500.
    const mangled = await post(
      origin,
      '/oauth/token/revocation',
      { token: 'a.b.c' },
      { Authorization: `Basic ${Buffer.from('%E0%A4%A:%%').toString('base64')}` },
    );
    expect(mangled.status).toBe(401);
    expect(mangled.body.error).toBe('invalid_client');
  });

  it('refuses the password and implicit grants, saying why', async () => {
    const t = await server.tenant('rf');
    const origin = originOf(server, t);
    const machine = await machineClient(t);
    const password = await post(
      origin,
      '/oauth/token',
      { grant_type: 'password', username: 'Administrator', password: 'x' },
      { Authorization: basic(machine.client_id, machine.client_secret!) },
    );
    expect(password.status).toBe(400);
    expect(password.body.error).toBe('unsupported_grant_type');
    expect(password.body.error_description).toMatch(/Security Best Current Practice/);
    const viaFrappe = await post(origin, '/api/method/frappe.integrations.oauth2.get_token', {
      grant_type: 'password',
      username: 'Administrator',
      password: 'x',
    });
    expect(viaFrappe.body.error).toBe('unsupported_grant_type');

    const app = await createClient(t);
    const implicit = await get(
      `${origin}/oauth/auth?${new URLSearchParams({ client_id: app.client_id, response_type: 'token', redirect_uri: await redirectUri(), scope: 'openid' })}`,
    );
    expect(implicit.status).toBe(400);
    expect(implicit.location).toBeNull();
    expect(implicit.text).toMatch(/unsupported_response_type/);
    expect(implicit.text).toMatch(/authorization code grant with PKCE/);
  });

  it('issues client-credentials tokens acting as the configured user, limited to the client scopes', async () => {
    const t = await server.tenant('rf');
    await createUser(t, 'robot@example.com', ['System Manager']);
    const origin = originOf(server, t);
    const machine = await createClient(t, { clientCredentialsUser: 'robot@example.com', scopes: 'todo:write' });
    const config = await discover(server, t, machine.client_id, machine.client_secret);
    const tokens = await client.clientCredentialsGrant(config);
    expect(tokens.refresh_token).toBeUndefined();
    const claims = decodeJwt(tokens.access_token);
    expect(claims.sub).toBe('robot@example.com');
    expect(claims.scope).toBe('todo:write');
    const created = await hostFetch(`${origin}/api/resource/ToDo`, {
      method: 'POST',
      headers: { Authorization: bearer(tokens.access_token), 'Content-Type': 'application/json' },
      body: JSON.stringify({ description: 'by the robot' }),
    });
    expect(created.status).toBe(200);
    expect(((await created.json()) as { data: { owner: string } }).data.owner).toBe('robot@example.com');
    // Nothing beyond its scope, though its user may do far more.
    expect((await hostFetch(`${origin}/api/resource/User`, { headers: { Authorization: bearer(tokens.access_token) } })).status).toBe(403);
    // A scope the client was not given is not granted.
    const wider = await client.clientCredentialsGrant(config, { scope: 'all' }).then((r) => {
      const { scope } = decodeJwt(r.access_token);
      return typeof scope === 'string' ? scope : JSON.stringify(scope ?? '');
    }, oauthErrorOf);
    expect(wider).not.toContain('all');
  });
});

describe('the authorization endpoint', () => {
  it('never redirects to an unregistered redirect URI', async () => {
    const t = await server.tenant('rf');
    const app = await createClient(t);
    const origin = originOf(server, t);
    const res = await get(
      `${origin}/oauth/auth?${new URLSearchParams({ client_id: app.client_id, response_type: 'code', redirect_uri: 'https://attacker.example/cb', scope: 'openid', code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM', code_challenge_method: 'S256' })}`,
    );
    expect(res.status).toBe(400);
    expect(res.location).toBeNull();
    expect(res.text).toMatch(/redirect_uri/);
  });

  it('refuses a public client without PKCE, back at its redirect URI', async () => {
    const t = await server.tenant('rf');
    const spa = await createClient(t, { public: true, scopes: 'todo:read openid' });
    const origin = originOf(server, t);
    const res = await get(
      `${origin}/oauth/auth?${new URLSearchParams({ client_id: spa.client_id, response_type: 'code', redirect_uri: await redirectUri(), scope: 'openid', state: 's1' })}`,
    );
    expect(res.status).toBe(303);
    const back = new URL(res.location!);
    expect(back.searchParams.get('error')).toBe('invalid_request');
    expect(back.searchParams.get('error_description')).toMatch(/PKCE/);
    expect(back.searchParams.get('state')).toBe('s1');
  });

  it('sends back access_denied for a user whose roles the app does not allow', async () => {
    const t = await server.tenant('rf');
    expect((await t.call('POST', '/api/resource/Role', { json: { role_name: 'Clerk', desk_access: 1 } })).status).toBe(200);
    await createUser(t, 'clerk@example.com', ['Clerk']);
    const app = await createClient(t, { allowedRoles: ['System Manager'] });
    const config = await discover(server, t, app.client_id, app.client_secret);
    const context = await browser.newContext();
    const result = await authorizeInBrowser(context, config, {}, { email: 'clerk@example.com' });
    expect(result.pages).toEqual(['login']);
    expect(result.callback.searchParams.get('error')).toBe('access_denied');
    await context.close();
  });

  it('shows the login form again for a wrong password, and refuses a form posted without its CSRF token', async () => {
    const { config } = await tenantWithApp(server, 'rf', 'typo@example.com');
    const context = await browser.newContext();
    const page = await context.newPage();
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: await redirectUri(),
      scope: 'openid',
      code_challenge: await client.calculatePKCECodeChallenge(client.randomPKCECodeVerifier()),
      code_challenge_method: 'S256',
    });
    await page.goto(url.href);
    await page.getByLabel('Email').fill('typo@example.com');
    await page.getByLabel('Password').fill('wrong password');
    const response = await submitForm(page, page.getByRole('button', { name: 'Sign in' }));
    expect(response.status()).toBe(401);
    expect(await page.getByRole('alert').innerText()).toMatch(/incorrect|invalid/i);
    expect(await page.getByLabel('Email').inputValue()).toBe('typo@example.com');

    // The same form without the CSRF field (a cross-site post) is refused.
    await page.evaluate(() => document.querySelector('input[name=csrf_token]')?.remove());
    await page.getByLabel('Password').fill('correct horse battery staple');
    const forged = await submitForm(page, page.getByRole('button', { name: 'Sign in' }));
    expect(forged.status()).toBe(403);
    await context.close();
  });
});

describe('tokens at the API', () => {
  it('a token of tenant A is refused at tenant B, and a token nobody issued is refused', async () => {
    const [a, b] = await Promise.all([server.tenant('rfa'), server.tenant('rfb')]);
    const machine = await machineClient(a);
    const config = await discover(server, a, machine.client_id, machine.client_secret);
    const { access_token } = await client.clientCredentialsGrant(config);
    expect((await hostFetch(`${originOf(server, a)}/api/resource/ToDo`, { headers: { Authorization: bearer(access_token) } })).status).toBe(200);
    const atB = await hostFetch(`${originOf(server, b)}/api/resource/ToDo`, { headers: { Authorization: bearer(access_token) } });
    expect(atB.status).toBe(401);
    expect(((await atB.json()) as { exc_type: string }).exc_type).toBe('AuthenticationError');
    expect(atB.headers.get('www-authenticate')).toMatch(/invalid_token/);
    const viaSiteHeader = await b.call('GET', '/api/resource/ToDo', { auth: bearer(access_token) });
    expect(viaSiteHeader.status).toBe(401);

    // The same claims signed with a key that is not in A's JWKS (a forger's), even naming A's kid.
    const { privateKey } = await generateKeyPair('ES256');
    const header = decodeProtectedHeader(access_token);
    const forged = await new SignJWT(decodeJwt(access_token)).setProtectedHeader({ alg: 'ES256', typ: 'at+jwt', kid: header.kid! }).sign(privateKey);
    const refused = await hostFetch(`${originOf(server, a)}/api/resource/ToDo`, { headers: { Authorization: bearer(forged) } });
    expect(refused.status).toBe(401);
  });
});
