import { randomUUID } from 'node:crypto';
import { privateKeys, tenantAudience } from '@quire/oauth';
import { base64url, importJWK, SignJWT, type JWK } from 'jose';
import type { TestServer, TestTenant } from '../support/server';

/**
 * Access tokens minted the way the auth service mints them (RFC 9068: ES256, `typ: at+jwt`, the
 * tenant's key and audience), with knobs to forge every way one can be wrong.
 */

export interface MintOptions {
  /** Claims to set (or override); `undefined` values remove the claim. */
  claims?: Record<string, unknown>;
  /** Protected header fields to set (or override). */
  header?: Record<string, unknown>;
  /** The private JWK to sign with (default: the tenant's active key). */
  key?: JWK;
}

export function issuerOf(t: { name: string }, port = 8000): string {
  return `http://${t.name}.localhost:${port}`;
}

/** The tenant's private signing keys, active first. */
export function tenantKeys(server: TestServer, t: TestTenant): Promise<JWK[]> {
  return privateKeys(server.db, t.schema, server.platform.secrets);
}

export async function mint(server: TestServer, t: TestTenant, o: MintOptions = {}): Promise<string> {
  const key = o.key ?? (await tenantKeys(server, t))[0]!;
  const now = Math.floor(Date.now() / 1000);
  const given: Record<string, unknown> = {
    iss: issuerOf(t),
    sub: 'Administrator',
    aud: tenantAudience(t.name),
    client_id: 'test-client',
    scope: 'all',
    jti: randomUUID(),
    gid: randomUUID(),
    iat: now,
    exp: now + 300,
    ...o.claims,
  };
  // A claim given as undefined is left out of the token.
  const claims = Object.fromEntries(Object.entries(given).filter(([, v]) => v !== undefined));
  const header = { alg: 'ES256', typ: 'at+jwt', kid: key.kid, ...o.header };
  return new SignJWT(claims).setProtectedHeader(header).sign(await importJWK(key, 'ES256'));
}

/** Claims of a minted token (no verification). */
export function claimsOf(token: string): Record<string, any> {
  return JSON.parse(new TextDecoder().decode(base64url.decode(token.split('.')[1]!))) as Record<string, any>;
}

/** A compact JWS from raw parts (for `alg: none` and other hand-made forgeries). */
export function rawJws(header: Record<string, unknown>, payload: Record<string, unknown>, signature = ''): string {
  const enc = (v: unknown) => base64url.encode(new TextEncoder().encode(JSON.stringify(v)));
  return `${enc(header)}.${enc(payload)}.${signature}`;
}

export const bearer = (token: string) => `Bearer ${token}`;

/** Calls until `done(result)` or the time runs out; returns the elapsed milliseconds of the first success. */
export async function within<T>(ms: number, attempt: () => Promise<T>, done: (r: T) => boolean, stepMs = 50): Promise<number> {
  const start = Date.now();
  for (;;) {
    const r = await attempt();
    const elapsed = Date.now() - start;
    if (done(r)) return elapsed;
    if (elapsed > ms) throw new Error(`not within ${ms} ms (last: ${JSON.stringify(r).slice(0, 300)})`);
    await new Promise((resolve) => setTimeout(resolve, stepMs));
  }
}
