import { randomBytes } from 'node:crypto';
import { allIn, type Database } from '@quire/db';
import {
  AccessTokenVerifier,
  hostOfIssuer,
  KEYS_TABLE,
  OAuthRuntime,
  parseScopes,
  recordRevocation,
  RevocationCache,
  revocationsTableDDL,
  tenantAudience,
  type AccessTokenFailure,
} from '@quire/oauth';
import type { Tenant } from '@quire/tenancy';
import { exportJWK, generateKeyPair } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer, type TestTenant } from '../support/server';
import { claimsOf, issuerOf, mint, rawJws, tenantKeys } from './helpers';

/** The verifier and the revocation cache on their own: refusal reasons, caching, throttling. */

let server: TestServer;
let t: TestTenant;
let tenant: Tenant;
beforeAll(async () => {
  server = await startTestServer();
  t = await server.tenant('oauthv');
  tenant = server.platform.tenants.get(t.name)!;
});
afterAll(() => server.close());

/** Counts the queries that read the tenant's keys. */
function counting(db: Database): Database & { keyReads: number } {
  const wrapped = Object.create(db) as Database & { keyReads: number };
  wrapped.keyReads = 0;
  wrapped.query = (text: string, values?: readonly unknown[]) => {
    if (text.includes(KEYS_TABLE)) wrapped.keyReads++;
    return db.query(text, values);
  };
  return wrapped;
}

async function reason(token: string, hosts = server.platform.issuerHosts(tenant)): Promise<AccessTokenFailure | 'ok'> {
  const outcome = await server.platform.oauth.authenticateBearer(tenant, token, hosts);
  return outcome.ok ? 'ok' : outcome.reason;
}

describe('refusal reasons', () => {
  it('names why each bad token is refused', async () => {
    const other = await server.tenant('oauthvb');
    const now = Math.floor(Date.now() / 1000);
    const { privateKey } = await generateKeyPair('ES256', { extractable: true });
    const rogue = await exportJWK(privateKey);
    const [real] = await tenantKeys(server, t);
    const valid = await mint(server, t);
    expect(await reason(valid)).toBe('ok');
    expect(await reason(await mint(server, other))).toBe('unknown_key');
    expect(await reason(await mint(server, t, { key: { ...rogue, kid: real!.kid } }))).toBe('signature');
    expect(await reason(await mint(server, t, { key: { ...rogue, kid: 'nope' } }))).toBe('unknown_key');
    expect(await reason(await mint(server, t, { claims: { iat: now - 600, exp: now - 60 } }))).toBe('expired');
    expect(await reason(await mint(server, t, { claims: { nbf: now + 600 } }))).toBe('not_yet_valid');
    expect(await reason(await mint(server, t, { claims: { aud: tenantAudience(other.name) } }))).toBe('audience');
    expect(await reason(await mint(server, t, { claims: { iss: issuerOf(other) } }))).toBe('issuer');
    expect(await reason(await mint(server, t, { header: { typ: 'JWT' } }))).toBe('type');
    expect(await reason(await mint(server, t, { claims: { client_id: undefined } }))).toBe('claims');
    expect(await reason(await mint(server, t, { claims: { sub: 'nobody@example.com' } }))).toBe('user');
    expect(await reason(rawJws({ alg: 'none', typ: 'at+jwt', kid: real!.kid }, claimsOf(valid), 'x'))).toBe('unsupported_alg');
    expect(await reason(rawJws({ alg: 'HS256', typ: 'at+jwt', kid: real!.kid }, claimsOf(valid), 'x'))).toBe('unsupported_alg');
    expect(await reason('a.b.c')).toBe('malformed');
    expect(await reason('nope')).toBe('malformed');
  });

  it('accepts an issuer host only when it is in the hosts given', async () => {
    const token = await mint(server, t, { claims: { iss: 'http://127.0.0.1:8000' } });
    expect(await reason(token)).toBe('issuer');
    expect(await reason(token, [...server.platform.issuerHosts(tenant), '127.0.0.1'])).toBe('ok');
  });

  it('hostOfIssuer takes http(s) origins only', () => {
    expect(hostOfIssuer('http://Acme.LOCALHOST:8000')).toBe('acme.localhost');
    expect(hostOfIssuer('https://acme.example.com/')).toBe('acme.example.com');
    expect(hostOfIssuer('https://acme.example.com.')).toBe('acme.example.com');
    expect(hostOfIssuer('http://[::1]:8000')).toBe('[::1]');
    for (const bad of [
      'ftp://acme.localhost',
      'acme.localhost',
      'http://acme.localhost/x',
      'http://u:p@acme.localhost',
      'http://acme.localhost?x',
      'http://acme.localhost#x',
      'javascript:alert(1)',
    ]) {
      expect(hostOfIssuer(bad), bad).toBeUndefined();
    }
  });

  it('parseScopes splits on whitespace and ignores what is not a string', () => {
    expect(parseScopes(' openid  todo:read\tsales_invoice:write ')).toEqual(new Set(['openid', 'todo:read', 'sales_invoice:write']));
    expect(parseScopes(undefined)).toEqual(new Set());
    expect(parseScopes(['all'])).toEqual(new Set());
  });
});

describe('the JWKS cache', () => {
  it('reads the keys once for many tokens, and garbage kids at most once per cooldown', async () => {
    const db = counting(server.db);
    const verifier = new AccessTokenVerifier(allIn(db), new RevocationCache(allIn(server.db), { pollIntervalMs: 0 }), { unknownKidCooldownMs: 1000 });
    const hosts = server.platform.issuerHosts(tenant);
    for (let i = 0; i < 20; i++) await verifier.verify(await mint(server, t), tenant, hosts);
    expect(db.keyReads).toBe(1);
    const { privateKey } = await generateKeyPair('ES256', { extractable: true });
    const rogue = await exportJWK(privateKey);
    const garbage = await Promise.all(Array.from({ length: 30 }, (_, i) => mint(server, t, { key: { ...rogue, kid: `garbage-${i}` } })));
    const started = Date.now();
    const results = await Promise.allSettled(garbage.map((token) => verifier.verify(token, tenant, hosts)));
    expect(results.every((r) => r.status === 'rejected' && (r.reason as { reason: string }).reason === 'unknown_key')).toBe(true);
    // one read after the cooldown (the first read was < 1 s ago), shared by all 30
    expect(db.keyReads).toBe(2);
    expect(Date.now() - started).toBeLessThan(3000);
  });

  it('picks up a key added after the cache was filled (a rotation), through an unknown kid', async () => {
    const db = counting(server.db);
    const verifier = new AccessTokenVerifier(allIn(db), new RevocationCache(allIn(server.db), { pollIntervalMs: 0 }), { unknownKidCooldownMs: 200 });
    const tt = await server.tenant('oauthvr');
    const ref = server.platform.tenants.get(tt.name)!;
    const hosts = server.platform.issuerHosts(ref);
    await verifier.verify(await mint(server, tt), ref, hosts);
    const { createSigningKey } = await import('@quire/oauth');
    await server.db.transaction((tx) => createSigningKey(tx, tt.schema, server.platform.secrets));
    const [fresh] = await tenantKeys(server, tt);
    await expect(verifier.verify(await mint(server, tt, { key: fresh! }), ref, hosts)).resolves.toMatchObject({ user: 'Administrator' });
    expect(db.keyReads).toBe(2);
  });

  it('refuses tokens of a key removed from the JWKS once the keys are re-read (`oauth` message `keys`)', async () => {
    const tt = await server.tenant('oauthvk');
    const ref = server.platform.tenants.get(tt.name)!;
    const token = await mint(server, tt);
    const hosts = server.platform.issuerHosts(ref);
    // A runtime of its own: the platform's also hears the new tenant's own invalidation, which may
    // land at any point below and drop its caches.
    const oauth = new OAuthRuntime(allIn(server.db), { revocations: { pollIntervalMs: 0 } });
    try {
      expect((await oauth.authenticateBearer(ref, token, hosts)).ok).toBe(true);
      await server.db.query(`DELETE FROM "${tt.schema}"."${KEYS_TABLE}"`);
      // cached: still accepted until told
      expect((await oauth.authenticateBearer(ref, token, hosts)).ok).toBe(true);
      oauth.onMessage(tt.name, 'keys');
      expect(await oauth.authenticateBearer(ref, token, hosts)).toMatchObject({ ok: false, reason: 'unknown_key' });
    } finally {
      oauth.close();
    }
  });
});

describe('the revocation cache', () => {
  it('merges a revocation applied while the first load runs', async () => {
    const cache = new RevocationCache(allIn(server.db), { pollIntervalMs: 0 });
    const checking = cache.isRevoked(tenant, 'jti-during-load');
    cache.apply(tenant.name, 'token', 'jti-during-load');
    expect(await checking).toBe(true);
    expect(await cache.isRevoked(tenant, 'jti-during-load')).toBe(true);
    cache.close();
  });

  it('re-reads every cached tenant in one poll, even when one of them fails', async () => {
    const broken = `oauthbroken_${randomBytes(4).toString('hex')}`;
    await server.db.query(`CREATE SCHEMA "${broken}"`);
    await server.db.query(revocationsTableDDL(broken));
    const errors: unknown[] = [];
    const cache = new RevocationCache(allIn(server.db), { pollIntervalMs: 0, onError: (e) => errors.push(e) });
    try {
      expect(await cache.isRevoked({ name: 'broken', schema: broken }, 'x')).toBe(false);
      expect(await cache.isRevoked(tenant, 'polled-jti')).toBe(false);
      await server.db.query(`DROP SCHEMA "${broken}" CASCADE`);
      await recordRevocation(server.db, tenant.schema, 'token', 'polled-jti', 60);
      await recordRevocation(server.db, tenant.schema, 'grant', 'polled-gid', 60);
      await cache.reset();
      expect(await cache.isRevoked(tenant, 'polled-jti')).toBe(true);
      expect(await cache.isRevoked(tenant, 'other', 'polled-gid')).toBe(true);
      expect(errors.length).toBe(1);
    } finally {
      cache.close();
      await server.db.query(`DROP SCHEMA IF EXISTS "${broken}" CASCADE`);
    }
  });

  it('drops tenants not used recently, and loads them again on their next use', async () => {
    const cache = new RevocationCache(allIn(server.db), { pollIntervalMs: 0, idleMs: 50 });
    expect(await cache.isRevoked(tenant, 'a')).toBe(false);
    expect(cache.size).toBe(1);
    await new Promise((r) => setTimeout(r, 80));
    await (cache as unknown as { poll(): Promise<void> }).poll();
    expect(cache.size).toBe(0);
    await recordRevocation(server.db, tenant.schema, 'token', 'after-idle', 60);
    expect(await cache.isRevoked(tenant, 'after-idle')).toBe(true);
    cache.close();
  });
});
