import { randomBytes } from 'node:crypto';
import { SESSIONS_TABLE } from '@quire/auth';
import { PgDatabase, qualified } from '@quire/db';
import { KEYS_TABLE, OIDC_TABLE, REVOCATIONS_TABLE } from '@quire/oauth';
import { readUsage } from '@quire/tenancy';
import { decodeJwt, decodeProtectedHeader } from 'jose';
import * as client from 'openid-client';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { authorizeInBrowser, createUser, discover, exchange, launchBrowser, originOf } from '../oauth/support';
import { hostFetch } from '../support/host-fetch';
import { createClient } from '../support/oauth-clients';
import { createPgCluster, pgClustersAvailable, type PgCluster } from '../support/pg-clusters';
import { quireJson } from '../support/process';
import { call, startTestServer, type TestServer, type TestTenant } from '../support/server';
import { until } from '../support/until';
import { freshDatabase, type FreshDatabase } from './migrate-support';

/**
 * A tenant on another cluster than the platform database: the OAuth service (its storage, signing
 * keys, login and sessions, revocations, sign-out), the CLI's OAuth and API-key commands, and usage
 * measuring all work on the tenant's own cluster, while usage is recorded in the platform database.
 */

const available = pgClustersAvailable();
if (!available.ok) console.log(`clusters auth and usage tests skipped: ${available.reason}`);

describe.skipIf(!available.ok)('a tenant on another cluster', () => {
  let platformDb: FreshDatabase;
  let b: PgCluster;
  let onB: PgDatabase;
  let server: TestServer;
  let browser: Browser;
  let t: TestTenant;
  /** What beforeAll started, stopped in the reverse order (whatever got started, if it failed midway). */
  const started: Array<() => Promise<unknown>> = [];
  const keep = <T>(made: T, stop: (made: T) => Promise<unknown>): T => {
    started.push(() => stop(made));
    return made;
  };
  const quire = (...args: string[]) => quireJson(args, { DATABASE_URL: platformDb.url });
  /** Rows of one of the tenant's tables, read on cluster b. */
  const rowsOnB = async <T>(table: string, where = 'true', values: unknown[] = []): Promise<T[]> =>
    (await onB.query<T>(`SELECT * FROM ${qualified(t.schema, table)} WHERE ${where}`, values)).rows;

  beforeAll(async () => {
    [platformDb, b, browser] = await Promise.all([
      freshDatabase().then((d) => keep(d, () => d.drop())),
      createPgCluster().then((c) => keep(c, () => c.stop())),
      launchBrowser().then((br) => keep(br, () => br.close())),
    ]);
    onB = keep(new PgDatabase({ connectionString: b.url, poolSize: 2 }), (db) => db.close());
    expect((await quire('migrate')).code).toBe(0);
    expect((await quire('cluster', 'add', 'b', '--url', b.url)).code).toBe(0);
    const name = `ka${randomBytes(4).toString('hex')}`;
    const made = await quire('tenant', 'create', name, '--cluster', 'b');
    expect(made.code, JSON.stringify(made.json)).toBe(0);
    expect(made.json).toMatchObject({ name, cluster: 'b' });
    server = keep(await startTestServer({ databaseUrl: platformDb.url, auth: true }), (s) => s.close());
    const auth = `token ${String(made.json.api_key)}:${String(made.json.api_secret)}`;
    t = {
      name,
      schema: String(made.json.schema),
      cluster: 'b',
      hosts: made.json.hosts as string[],
      api_key: String(made.json.api_key),
      api_secret: String(made.json.api_secret),
      auth,
      call: (method, path, o = {}) => call(server.url, name, method, path, { auth, ...o }),
    };
    // Its schema is on b, not in the platform database.
    const where = `SELECT count(*)::int AS n FROM pg_namespace WHERE nspname = $1`;
    expect((await onB.query<{ n: number }>(where, [t.schema])).rows[0]?.n).toBe(1);
    expect((await platformDb.db.query<{ n: number }>(where, [t.schema])).rows[0]?.n).toBe(0);
    // Three CLI runs, a server and a browser: minutes on a loaded machine.
  }, 240_000);

  afterAll(async () => {
    // The server and pools before the databases they use; each stopped even if one before failed to.
    const failed: unknown[] = [];
    for (const stop of [...started].reverse()) await stop().catch((e: unknown) => failed.push(e));
    if (failed.length) throw failed[0];
  });

  it('the authorization code flow works end to end, with everything it keeps in the tenant’s schema on b', async () => {
    await createUser(t, 'ada@example.com');
    const app = await createClient(t);
    const config = await discover(server, t, app.client_id, app.client_secret);
    const origin = originOf(server, t);
    expect(config.serverMetadata().issuer).toBe(origin);

    // Login (password, site session) and consent through the browser; the code exchanged with PKCE.
    const context = await browser.newContext();
    const result = await authorizeInBrowser(context, config, {}, { email: 'ada@example.com' });
    expect(result.pages).toEqual(['login', 'consent']);
    const tokens = await exchange(config, result);
    expect(tokens.claims()!.sub).toBe('ada@example.com');
    const api = async (token: string) =>
      (await hostFetch(`${origin}/api/method/frappe.auth.get_logged_user`, { headers: { Authorization: `Bearer ${token}`, Accept: 'application/json' } }))
        .status;
    expect(await api(tokens.access_token)).toBe(200);
    const info = await client.fetchUserInfo(config, tokens.access_token, 'ada@example.com');
    expect(info).toMatchObject({ sub: 'ada@example.com', email: 'ada@example.com' });

    // What the flow keeps is on b: oidc-provider's models, the signing key, the site session, the login.
    const models = await rowsOnB<{ model: string }>(OIDC_TABLE);
    expect(models.map((m) => m.model)).toEqual(expect.arrayContaining(['Session', 'Grant', 'AuthorizationCode', 'RefreshToken']));
    expect(await rowsOnB(KEYS_TABLE)).not.toHaveLength(0);
    expect(await rowsOnB(SESSIONS_TABLE, `"user" = $1`, ['ada@example.com'])).toHaveLength(1);
    const [ada] = await rowsOnB<{ last_login: string | null }>('tabUser', `"name" = $1`, ['ada@example.com']);
    expect(ada?.last_login).toBeTruthy();

    // Revoking the access token (ours) and the refresh token (the grant, oidc-provider's): recorded on b, and the tokens stop.
    const refreshed = await client.refreshTokenGrant(config, tokens.refresh_token!);
    await client.tokenRevocation(config, refreshed.access_token);
    expect(await api(refreshed.access_token)).toBe(401);
    const jti = String(decodeJwt(refreshed.access_token).jti);
    expect(await rowsOnB(REVOCATIONS_TABLE, `"kind" = 'token' AND "id" = $1`, [jti])).toHaveLength(1);
    const stillValid = await client.refreshTokenGrant(config, refreshed.refresh_token!);
    expect(await api(stillValid.access_token)).toBe(200);
    await client.tokenRevocation(config, stillValid.refresh_token!);
    const grantId = String(decodeJwt(stillValid.access_token).gid);
    await until(
      () => rowsOnB(REVOCATIONS_TABLE, `"kind" = 'grant' AND "id" = $1`, [grantId]),
      (rows) => rows.length === 1,
    );
    await expect.poll(() => api(stillValid.access_token), { timeout: 10_000 }).toBe(401);

    // Signing out at the issuer ends the site session the login opened, on b.
    const page = await context.newPage();
    await page.goto(client.buildEndSessionUrl(config, { id_token_hint: tokens.id_token! }).href);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Signed out' }).waitFor();
    await page.close();
    await context.close();
    expect(
      (
        await until(
          () => rowsOnB(SESSIONS_TABLE, `"user" = $1`, ['ada@example.com']),
          (rows) => rows.length === 0,
        )
      ).length,
    ).toBe(0);
  }, 120_000);

  it('quire oauth-client create, oauth rotate-keys, user create and keys generate work on the tenant’s cluster', async () => {
    const created = await quire(
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
      'all',
    );
    expect(created.code, JSON.stringify(created.json)).toBe(0);
    const config = await discover(server, t, String(created.json.client_id), String(created.json.client_secret));
    const before = await client.clientCredentialsGrant(config);

    const rotated = await quire('oauth', 'rotate-keys', '--tenant', t.name);
    expect(rotated.code, JSON.stringify(rotated.json)).toBe(0);
    expect(await rowsOnB(KEYS_TABLE, `"kid" = $1`, [rotated.json.kid])).toHaveLength(1);
    // The server heard it from b: the issuer signs with the new key.
    await expect
      .poll(async () => decodeProtectedHeader((await client.clientCredentialsGrant(config)).access_token).kid, { timeout: 10_000 })
      .toBe(rotated.json.kid);
    expect(decodeProtectedHeader(before.access_token).kid).not.toBe(rotated.json.kid);

    // A user of its own (generating keys replaces the user's, and the other tests use the Administrator's).
    const user = await quire('user', 'create', '--tenant', t.name, '--email', 'keys@example.com', '--roles', 'System Manager');
    expect(user.code, JSON.stringify(user.json)).toBe(0);
    const keys = await quire('keys', 'generate', '--tenant', t.name, '--user', 'keys@example.com');
    expect(keys.code, JSON.stringify(keys.json)).toBe(0);
    const res = await t.call('GET', '/api/method/frappe.auth.get_logged_user', { auth: `token ${String(keys.json.api_key)}:${String(keys.json.api_secret)}` });
    expect(res.status, res.text).toBe(200);
    expect(res.body.message).toBe('keys@example.com');
  }, 120_000);

  it('its size and users are measured on b and recorded in the platform database, by the server and by quire tenant usage --measure', async () => {
    // The server's sampler measured it when it started (never measured before).
    const sampled = await until(
      async () => (await readUsage(platformDb.db, [t.name]))[0],
      (u) => u?.databaseBytes != null,
      30_000,
    );
    expect(sampled?.databaseBytes).toBeGreaterThan(0);

    await createUser(t, 'counted@example.com');
    const counted = await onB.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM ${qualified(t.schema, 'tabUser')} WHERE "enabled" = 1 AND "name" NOT IN ('Administrator', 'Guest')`,
    );
    const users = counted.rows[0]!.n;
    expect(users).toBeGreaterThanOrEqual(1);

    const measured = await quire('tenant', 'usage', t.name, '--measure');
    expect(measured.code, JSON.stringify(measured.json)).toBe(0);
    const [usage] = measured.json.tenants as Array<Record<string, any>>;
    expect(usage).toMatchObject({ name: t.name, users, fileBytes: 0 });
    expect(usage!.databaseBytes).toBeGreaterThan(0);
    const stored = await platformDb.db.query<{ users: number; database_bytes: string }>(
      `SELECT "users", "database_bytes" FROM quire.tenant_usage WHERE "tenant" = $1`,
      [t.name],
    );
    expect(stored.rows[0]).toMatchObject({ users });
    expect(Number(stored.rows[0]?.database_bytes)).toBe(usage!.databaseBytes);
  }, 120_000);
});
