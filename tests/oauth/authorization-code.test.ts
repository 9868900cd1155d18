import { decodeJwt } from 'jose';
import * as client from 'openid-client';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hostFetch } from '../support/host-fetch';
import { sdkFor } from '../support/frappe-js-sdk';
import { parseJson } from '../support/json';
import type { TestServer } from '../support/server';
import { authorizeInBrowser, bearer, exchange, originOf, PASSWORD, startServerAndBrowser, stopServerAndBrowser, tenantWithApp } from './support';

/**
 * The whole authorization-code flow as a third-party app lives it: openid-client discovers the
 * tenant's issuer on its subdomain, a real browser signs in and consents, the app exchanges the
 * code (PKCE), calls the API with the token (plain fetch and frappe-js-sdk), refreshes, revokes.
 */

let server: TestServer;
let browser: Browser;

beforeAll(async () => {
  [server, browser] = await startServerAndBrowser();
});

afterAll(() => stopServerAndBrowser(server, browser));

/** GET on the tenant's own host, the way an app that only knows the subdomain calls it. */
async function api(
  origin: string,
  path: string,
  token: string,
  init: Omit<RequestInit, 'headers'> & { headers?: Record<string, string> } = {},
): Promise<{ status: number; body: any }> {
  const res = await hostFetch(`${origin}${path}`, { ...init, headers: { Authorization: bearer(token), Accept: 'application/json', ...init.headers } });
  const text = await res.text();
  return { status: res.status, body: parseJson(text, text) };
}

describe('authorization code with PKCE, through a browser', () => {
  it('signs in, consents, and the token works on the API, with frappe-js-sdk, refreshes, and stops when revoked', async () => {
    const { t, origin, config } = await tenantWithApp(server, 'oa', 'ada@example.com');
    expect(config.serverMetadata().issuer).toBe(origin);
    expect(config.serverMetadata().code_challenge_methods_supported).toEqual(['S256']);
    expect(config.serverMetadata().grant_types_supported).not.toContain('implicit');

    const context = await browser.newContext();
    const result = await authorizeInBrowser(context, config, {}, { email: 'ada@example.com' });
    expect(result.pages).toEqual(['login', 'consent']);
    expect(result.callback.searchParams.get('error')).toBeNull();
    const tokens = await exchange(config, result);
    expect(tokens.token_type.toLowerCase()).toBe('bearer');
    expect(tokens.refresh_token).toBeTruthy();
    const idClaims = tokens.claims()!;
    expect(idClaims.sub).toBe('ada@example.com');
    expect(idClaims.iss).toBe(origin);

    // The access token on the tenant's API (its own host).
    const created = await api(origin, '/api/resource/ToDo', tokens.access_token, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ description: 'made with an OAuth token' }),
    });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    expect(created.body.data.owner).toBe('ada@example.com');
    const listed = await api(origin, '/api/resource/ToDo?fields=["description"]', tokens.access_token);
    expect(listed.body.data).toEqual([{ description: 'made with an OAuth token' }]);
    const me = await api(origin, '/api/method/frappe.auth.get_logged_user', tokens.access_token);
    expect(me.body.message).toBe('ada@example.com');

    // frappe-js-sdk's Bearer mode (what apps built on it send), through the test server's address.
    const sdk = sdkFor(server.url, t.name, tokens.access_token, 'Bearer');
    const docs = await sdk.db().getDocList('ToDo', { fields: ['name', 'description'] });
    expect(docs.map((d) => d.description)).toEqual(['made with an OAuth token']);
    expect(await sdk.auth().getLoggedInUser()).toBe('ada@example.com');

    // userinfo answers the consented identity scopes.
    const info = await client.fetchUserInfo(config, tokens.access_token, 'ada@example.com');
    expect(info).toMatchObject({ sub: 'ada@example.com', email: 'ada@example.com', given_name: 'ada', family_name: 'Tester' });

    // Refresh: a new access token that works; the old refresh token is spent.
    const refreshed = await client.refreshTokenGrant(config, tokens.refresh_token!);
    expect(refreshed.access_token).not.toBe(tokens.access_token);
    expect(refreshed.refresh_token).not.toBe(tokens.refresh_token);
    expect((await api(origin, '/api/resource/ToDo', refreshed.access_token)).status).toBe(200);

    // Revoking the access token: refused at once (this process applied it on commit).
    await client.tokenRevocation(config, refreshed.access_token);
    const after = await api(origin, '/api/resource/ToDo', refreshed.access_token);
    expect(after.status).toBe(401);
    expect(after.body.exc_type).toBe('AuthenticationError');

    // Introspection agrees.
    expect((await client.tokenIntrospection(config, refreshed.access_token)).active).toBe(false);
    await context.close();
  });

  it('reusing a spent refresh token is refused and ends the whole grant (RFC 9700 §4.14)', async () => {
    const { origin, config } = await tenantWithApp(server, 'oa', 'reuse@example.com', { skipAuthorization: true });
    const context = await browser.newContext();
    const result = await authorizeInBrowser(context, config, {}, { email: 'reuse@example.com' });
    expect(result.pages).toEqual(['login']); // skip_authorization: no consent page
    const first = await exchange(config, result);
    const second = await client.refreshTokenGrant(config, first.refresh_token!);
    expect((await api(origin, '/api/resource/ToDo', second.access_token)).status).toBe(200);

    const reuse = await client.refreshTokenGrant(config, first.refresh_token!).then(
      () => 'accepted',
      (e: unknown) => {
        if (e instanceof client.ResponseBodyError) return e.error;
        throw e;
      },
    );
    expect(reuse).toBe('invalid_grant');
    // The thief's replay revoked the grant: the rightful holder's tokens stop too.
    await expect.poll(async () => (await api(origin, '/api/resource/ToDo', second.access_token)).status, { timeout: 3000 }).toBe(401);
    const rotated = await client.refreshTokenGrant(config, second.refresh_token!).then(
      () => 'accepted',
      (e: unknown) => {
        if (e instanceof client.ResponseBodyError) return e.error;
        throw e;
      },
    );
    expect(rotated).toBe('invalid_grant');
    await context.close();
  });

  it('a public client (no secret, PKCE) gets a narrow scope, and a signed-in user is not asked to sign in again', async () => {
    const { t, config } = await tenantWithApp(server, 'oa', 'pub@example.com', { public: true, scopes: 'todo:read openid' });
    const context = await browser.newContext();

    const first = await authorizeInBrowser(context, config, { scope: 'openid todo:read' }, { email: 'pub@example.com' });
    expect(first.pages).toEqual(['login', 'consent']);
    const tokens = await exchange(config, first);
    // The access token carries the API scope and the identity scope granted with it.
    expect(String(decodeJwt(tokens.access_token).scope).split(' ').sort()).toEqual(['openid', 'todo:read']);

    // A second authorization in the same browser: already signed in, already consented.
    const again = await authorizeInBrowser(context, config, { scope: 'openid todo:read' });
    expect(again.pages).toEqual([]);
    expect(again.callback.searchParams.get('code')).toBeTruthy();

    // The narrow scope: reading ToDo is allowed, writing it and reading other DocTypes are not.
    const origin = originOf(server, t);
    expect((await api(origin, '/api/resource/ToDo', tokens.access_token)).status).toBe(200);
    const write = await api(origin, '/api/resource/ToDo', tokens.access_token, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: '{"description":"x"}',
    });
    expect(write.status).toBe(403);
    expect((await api(origin, '/api/resource/User', tokens.access_token)).status).toBe(403);
    await context.close();
  });

  it('a user signed in to the site (Quire session cookie from /api/method/login) goes straight to consent', async () => {
    const { origin, config } = await tenantWithApp(server, 'oa', 'session@example.com');
    const context = await browser.newContext();
    // Signed in the way a desk page does it: a fetch from the site's own origin.
    const page = await context.newPage();
    await page.goto(`${origin}/api/method/ping`);
    const status = await page.evaluate(
      async (pwd) =>
        (
          await fetch('/api/method/login', {
            method: 'POST',
            headers: { 'Content-Type': 'application/json' },
            body: JSON.stringify({ usr: 'session@example.com', pwd }),
          })
        ).status,
      PASSWORD,
    );
    expect(status).toBe(200);
    await page.close();
    const result = await authorizeInBrowser(context, config, {});
    expect(result.pages).toEqual(['consent']);
    const tokens = await exchange(config, result);
    expect(tokens.claims()!.sub).toBe('session@example.com');
    await context.close();
  });

  it('signing out at the issuer ends its session and the site session: the next authorization asks to sign in', async () => {
    const { origin, config } = await tenantWithApp(server, 'oa', 'bye@example.com', { skipAuthorization: true });
    const context = await browser.newContext();
    const first = await authorizeInBrowser(context, config, {}, { email: 'bye@example.com' });
    expect(first.pages).toEqual(['login']);
    const tokens = await exchange(config, first);

    const page = await context.newPage();
    await page.goto(client.buildEndSessionUrl(config, { id_token_hint: tokens.id_token! }).href);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Signed out' }).waitFor();
    // The site session the login page opened is over too.
    await page.goto(`${origin}/api/method/frappe.auth.get_logged_user`);
    expect(await page.locator('body').innerText()).not.toContain('bye@example.com');
    await page.close();

    const again = await authorizeInBrowser(context, config, {}, { email: 'bye@example.com' });
    expect(again.pages).toEqual(['login']);
    await context.close();
  });

  it('denying consent sends the browser back with access_denied and issues nothing', async () => {
    const { config } = await tenantWithApp(server, 'oa', 'deny@example.com');
    const context = await browser.newContext();
    const result = await authorizeInBrowser(context, config, {}, { email: 'deny@example.com', decision: 'deny' });
    expect(result.pages).toEqual(['login', 'consent']);
    expect(result.callback.searchParams.get('error')).toBe('access_denied');
    expect(result.callback.searchParams.get('state')).toBe(result.state);
    expect(result.callback.searchParams.get('code')).toBeNull();
    await context.close();
  });
});
