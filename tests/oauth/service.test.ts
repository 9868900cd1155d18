import { startAuthService, type AuthService } from '@quire/auth-service';
import { loadPlatformConfig } from '@quire/config';
import { Readiness, type ServiceOperations } from '@quire/http';
import { ProcessMetrics } from '@quire/metrics';
import { qualified } from '@quire/db';
import { findModel, OIDC_TABLE, purgeExpiredModels, upsertModel } from '@quire/oauth';
import { decodeJwt, decodeProtectedHeader } from 'jose';
import * as client from 'openid-client';
import pino from 'pino';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { quire } from '../platform/helpers';
import { hostFetch } from '../support/host-fetch';
import { parseJson } from '../support/json';
import { createClient, machineClient, redirectUri } from '../support/oauth-clients';
import type { TestServer } from '../support/server';
import { authorizeInBrowser, bearer, createUser, discover, originOf, startServerAndBrowser, stopServerAndBrowser } from './support';

/**
 * The auth service as operators and Frappe clients meet it: Frappe's oauth2 paths and shapes, the
 * OAuth Client DocType's secret handling, `quire oauth-client create` and `quire oauth rotate-keys`,
 * and `quire serve auth` on its own port with Prometheus metrics.
 */

let server: TestServer;
let browser: Browser;

beforeAll(async () => {
  [server, browser] = await startServerAndBrowser();
});

afterAll(() => stopServerAndBrowser(server, browser));

async function request(url: string, init: { method?: string; form?: Record<string, string>; headers?: Record<string, string> } = {}) {
  const res = await hostFetch(url, {
    method: init.method ?? (init.form ? 'POST' : 'GET'),
    redirect: 'manual',
    headers: { Accept: 'application/json', ...(init.form ? { 'Content-Type': 'application/x-www-form-urlencoded' } : {}), ...(init.headers ?? {}) },
    ...(init.form ? { body: new URLSearchParams(init.form).toString() } : {}),
  });
  const text = await res.text();
  return { status: res.status, body: parseJson(text, text), headers: res.headers };
}

describe("Frappe's oauth2 paths", () => {
  it('answer with top-level JSON: openid_configuration, authorize, get_token, introspect_token, openid_profile, revoke_token', async () => {
    const t = await server.tenant('fp');
    const origin = originOf(server, t);
    await createUser(t, 'fr@example.com');
    const app = await createClient(t, { skipAuthorization: true });
    const frappe = `${origin}/api/method/frappe.integrations.oauth2`;

    const discovery = await request(`${frappe}.openid_configuration`);
    expect(discovery.status).toBe(200);
    expect(discovery.body).toEqual((await request(`${origin}/.well-known/openid-configuration`)).body);
    expect(discovery.body.message).toBeUndefined();

    const authorize = await request(`${frappe}.authorize?client_id=${app.client_id}&response_type=code&scope=openid`);
    expect(authorize.status).toBe(302);
    expect(authorize.headers.get('location')).toBe(`/oauth/auth?client_id=${app.client_id}&response_type=code&scope=openid`);

    // A code through the browser, exchanged the way Frappe's clients do: a form with the client's secret in it.
    const config = await discover(server, t, app.client_id, app.client_secret);
    const context = await browser.newContext();
    const code = await authorizeInBrowser(context, config, {}, { email: 'fr@example.com' });
    await context.close();
    const token = await request(`${frappe}.get_token`, {
      form: {
        grant_type: 'authorization_code',
        code: code.callback.searchParams.get('code')!,
        redirect_uri: await redirectUri(),
        client_id: app.client_id,
        client_secret: app.client_secret!,
        code_verifier: code.verifier,
      },
    });
    expect(token.status, JSON.stringify(token.body)).toBe(200);
    expect(token.body).toMatchObject({ token_type: 'Bearer', expires_in: expect.any(Number), refresh_token: expect.any(String), id_token: expect.any(String) });
    expect(token.body.message).toBeUndefined();

    const refreshed = await request(`${frappe}.get_token`, {
      form: { grant_type: 'refresh_token', refresh_token: token.body.refresh_token, client_id: app.client_id, client_secret: app.client_secret! },
    });
    expect(refreshed.status, JSON.stringify(refreshed.body)).toBe(200);
    const access = refreshed.body.access_token as string;

    const introspected = await request(`${frappe}.introspect_token`, { form: { token: access, client_id: app.client_id, client_secret: app.client_secret! } });
    expect(introspected.body).toMatchObject({ active: true, client_id: app.client_id, sub: 'fr@example.com', token_type: 'Bearer' });

    const profile = await request(`${frappe}.openid_profile`, { headers: { Authorization: bearer(access) } });
    expect(profile.body).toMatchObject({ sub: 'fr@example.com', email: 'fr@example.com' });

    // Revoking the refresh token ends the grant: its access tokens stop too.
    const revoked = await request(`${frappe}.revoke_token`, {
      form: { token: refreshed.body.refresh_token, client_id: app.client_id, client_secret: app.client_secret! },
    });
    expect(revoked.status).toBe(200);
    expect(revoked.body).toEqual({});
    await expect
      .poll(async () => (await request(`${origin}/api/resource/ToDo`, { headers: { Authorization: bearer(access) } })).status, { timeout: 5000 })
      .toBe(401);
    const introspectedAfter = await request(`${frappe}.introspect_token`, {
      form: { token: access, client_id: app.client_id, client_secret: app.client_secret! },
    });
    expect(introspectedAfter.body).toEqual({ active: false });
    const again = await request(`${frappe}.get_token`, {
      form: { grant_type: 'refresh_token', refresh_token: refreshed.body.refresh_token, client_id: app.client_id, client_secret: app.client_secret! },
    });
    expect(again.body.error).toBe('invalid_grant');
  });
});

describe('OAuth Client', () => {
  it('shows the secret once; reset_client_secret issues a new one and the old one stops working', async () => {
    const t = await server.tenant('oc');
    const origin = originOf(server, t);
    const machine = await machineClient(t);
    expect(machine.client_secret).toMatch(/^[A-Za-z0-9_-]{20,}$/);
    const read = await t.call('GET', `/api/resource/OAuth Client/${machine.client_id}`);
    expect(read.body.data.client_id).toBe(machine.client_id);
    expect(read.body.data.client_secret).not.toBe(machine.client_secret);
    expect(read.text).not.toContain(machine.client_secret);

    const ccToken = (secret: string) =>
      request(`${origin}/oauth/token`, {
        form: { grant_type: 'client_credentials' },
        headers: { Authorization: `Basic ${Buffer.from(`${machine.client_id}:${secret}`).toString('base64')}` },
      });
    expect((await ccToken(machine.client_secret!)).status).toBe(200);

    const reset = await t.call('POST', '/api/method/frappe.integrations.doctype.oauth_client.oauth_client.reset_client_secret', {
      json: { client: machine.client_id },
    });
    expect(reset.status, reset.text).toBe(200);
    const fresh = reset.body.message.client_secret as string;
    expect(fresh).not.toBe(machine.client_secret);
    expect((await ccToken(machine.client_secret!)).body.error).toBe('invalid_client');
    expect((await ccToken(fresh)).status).toBe(200);
  });

  it('refuses the implicit and password grant types, and redirect URIs that are not https (but loopback)', async () => {
    const t = await server.tenant('oc');
    const bad = async (json: Record<string, unknown>) =>
      (await t.call('POST', '/api/resource/OAuth Client', { json: { app_name: 'X', scopes: 'all', ...json } })).status;
    expect(await bad({ grant_type: 'Implicit', redirect_uris: 'https://app.example/cb' })).toBe(417);
    expect(await bad({ grant_type: 'Authorization Code', redirect_uris: 'http://app.example/cb' })).toBe(417);
    expect(await bad({ grant_type: 'Authorization Code', redirect_uris: 'https://app.example/cb#frag' })).toBe(417);
    expect(await bad({ grant_type: 'Client Credentials' })).toBe(417); // needs a user
    expect(await bad({ grant_type: 'Authorization Code', redirect_uris: 'https://app.example/cb\nhttp://127.0.0.1:8080/cb' })).toBe(200);
  });
});

describe('oidc-provider storage', () => {
  it('keeps models in the tenant schema, hides expired ones at once and purges them', async () => {
    const t = await server.tenant('st');
    await upsertModel(server.db, t.schema, 'Session', 'live', { accountId: 'a' }, 600);
    await upsertModel(server.db, t.schema, 'Session', 'old', { accountId: 'b' }, 600);
    await server.db.query(`UPDATE ${qualified(t.schema, OIDC_TABLE)} SET "expires_at" = "expires_at" - interval '1 hour' WHERE "id" = 'old'`);
    expect(await findModel(server.db, t.schema, 'Session', 'old')).toBeUndefined();
    expect(await purgeExpiredModels(server.db, t.schema)).toBe(1);
    expect((await findModel(server.db, t.schema, 'Session', 'live'))?.payload).toEqual({ accountId: 'a' });
  });
});

describe('the quire CLI', () => {
  it('oauth-client create prints the client once; oauth rotate-keys switches signing keys without breaking issued tokens', async () => {
    const t = await server.tenant('cli');
    const origin = originOf(server, t);
    const created = await quire([
      'oauth-client',
      'create',
      '--tenant',
      t.name,
      '--app-name',
      'Nightly sync',
      '--grant-type',
      'Client Credentials',
      '--user',
      'Administrator',
      '--scopes',
      'todo:read',
    ]);
    expect(created.code, created.stderr).toBe(0);
    expect(created.json).toMatchObject({
      tenant: t.name,
      client_id: expect.any(String),
      client_secret: expect.any(String),
      grant_type: 'Client Credentials',
      scopes: 'todo:read',
    });
    const config = await discover(server, t, created.json.client_id, created.json.client_secret);
    const before = await client.clientCredentialsGrant(config);
    const oldKid = decodeProtectedHeader(before.access_token).kid;

    const rotated = await quire(['oauth', 'rotate-keys', '--tenant', t.name]);
    expect(rotated.code, rotated.stderr).toBe(0);
    expect(rotated.json.kid).not.toBe(oldKid);

    // Every process hears of it (NOTIFY): the issuer signs with the new key, the API accepts both.
    await expect
      .poll(async () => decodeProtectedHeader((await client.clientCredentialsGrant(config)).access_token).kid, { timeout: 5000 })
      .toBe(rotated.json.kid);
    const jwks = await request(`${origin}/oauth/jwks`);
    expect(jwks.body.keys.map((k: { kid: string }) => k.kid).sort()).toEqual([oldKid, rotated.json.kid].sort());
    const after = await client.clientCredentialsGrant(config);
    for (const token of [before.access_token, after.access_token]) {
      expect((await request(`${origin}/api/resource/ToDo`, { headers: { Authorization: bearer(token) } })).status).toBe(200);
    }

    const usage = await quire(['oauth-client', 'create', '--tenant', t.name, '--app-name', 'X', '--grant-type', 'Implicit']);
    expect(usage.code).toBe(2);
  });
});

describe('quire serve auth', () => {
  let auth: AuthService;
  const ops: ServiceOperations = { metrics: new ProcessMetrics(), readiness: new Readiness() };
  beforeAll(async () => {
    auth = await startAuthService(
      server.platform,
      { platform: loadPlatformConfig({ NODE_ENV: 'test' }), port: 0, accessTokenTtl: 600, refreshTokenTtl: 3600, codeTtl: 60 },
      pino({ level: 'silent' }),
      ops,
    );
  });
  afterAll(async () => {
    await auth.close();
  });

  it('is the issuer on its own port; the API accepts its tokens; its metrics count issuance, refusals and active grants', async () => {
    const t = await server.tenant('svc');
    const machine = await machineClient(t);
    const authOrigin = `http://${t.name}.localhost:${auth.port}`;
    const config = await client.discovery(
      new URL(authOrigin),
      machine.client_id,
      { client_secret: machine.client_secret },
      client.ClientSecretBasic(machine.client_secret),
      {
        // eslint-disable-next-line @typescript-eslint/no-deprecated -- the local auth service is plain http; openid-client refuses http issuers without it
        execute: [client.allowInsecureRequests],
        [client.customFetch]: (url: string, options: object) => hostFetch(url, options),
      },
    );
    config[client.customFetch] = (url: string, options: object) => hostFetch(url, options);
    expect(config.serverMetadata().issuer).toBe(authOrigin);
    const { access_token } = await client.clientCredentialsGrant(config);
    expect(decodeJwt(access_token).iss).toBe(authOrigin);
    // The ingress sends /api to the API: same host, another port.
    expect((await request(`${originOf(server, t)}/api/resource/ToDo`, { headers: { Authorization: bearer(access_token) } })).status).toBe(200);
    const refused = await request(`${authOrigin}/oauth/token`, { form: { grant_type: 'password', username: 'a', password: 'b' } });
    expect(refused.body.error).toBe('unsupported_grant_type');

    // Metrics are served on the operations port (the process's registry), never on a tenant's host.
    expect((await request(`http://127.0.0.1:${auth.port}/metrics`)).status).toBe(404);
    const text = await ops.metrics.registry.metrics();
    expect(text).toMatch(/quire_oauth_tokens_issued_total\{grant_type="client_credentials"\} [1-9]/);
    expect(text).toMatch(/quire_oauth_refusals_total\{reason="unsupported_grant_type"\} [1-9]/);
    expect(text).toMatch(/quire_oauth_active_grants \d+/);
    expect((await request(`http://127.0.0.1:${auth.port}/healthz`)).body).toEqual({ status: 'ok' });
    expect((await request(`http://127.0.0.1:${auth.port}/readyz`)).body).toEqual({ status: 'ready', checks: {} });
    expect((await request(`http://127.0.0.1:${auth.port}/api/resource/ToDo`)).status).toBe(404);
  });
});
