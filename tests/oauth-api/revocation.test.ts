import { recordRevocation } from '@quire/oauth';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError, expectOk } from '../platform/helpers';
import { call, startTestServer, type TestServer, type TestTenant } from '../support/server';
import { bearer, claimsOf, mint, within } from './helpers';

/**
 * Revocation reaches every API process within 5 seconds: at once in the revoking process, by
 * NOTIFY elsewhere, and by the 3-second poll when the notification never comes.
 */

let a: TestServer;
let b: TestServer;
beforeAll(async () => {
  [a, b] = await Promise.all([startTestServer(), startTestServer()]);
});
afterAll(async () => {
  await Promise.all([a.close(), b.close()]);
});

const LIMIT_MS = 5000;

/** A fresh tenant both servers know. */
async function tenant(): Promise<TestTenant> {
  const t = await a.tenant('oauthrev');
  await within(
    5000,
    () => call(b.url, t.name, 'GET', '/api/method/ping', { auth: null }),
    (r) => r.status === 200,
  );
  return t;
}

function list(server: TestServer, t: TestTenant, token: string) {
  return call(server.url, t.name, 'GET', '/api/resource/ToDo', { auth: bearer(token) });
}

/** Both servers accept the token (so both have the tenant's revocation sets cached). */
async function acceptedOnBoth(t: TestTenant, ...tokens: string[]): Promise<void> {
  for (const token of tokens) {
    expectOk(await list(a, t, token));
    expectOk(await list(b, t, token));
  }
}

async function refusedOn(server: TestServer, t: TestTenant, token: string): Promise<number> {
  return within(
    LIMIT_MS,
    () => list(server, t, token),
    (r) => r.status === 401,
    25,
  );
}

const delays: Record<string, number> = {};
afterAll(() => {
  console.log(`revocation delays (ms): ${JSON.stringify(delays)}`);
});

describe('revoking a token', () => {
  it('refuses it at once in the revoking process and within 5 s on a second API server', async () => {
    const t = await tenant();
    const token = await mint(a, t);
    const untouched = await mint(a, t);
    await acceptedOnBoth(t, token, untouched);
    const { jti } = claimsOf(token);
    await a.db.transaction(async (tx) => {
      await recordRevocation(tx, t.schema, 'token', jti, 300);
      await a.platform.changes.tokenRevoked(tx, t, 'token', jti);
    });
    expectError(await list(a, t, token), 401, 'AuthenticationError');
    delays.tokenNotify = await refusedOn(b, t, token);
    expect(delays.tokenNotify).toBeLessThan(LIMIT_MS);
    // other tokens (same user, same client) go on working
    expectOk(await list(a, t, untouched));
    expectOk(await list(b, t, untouched));
  });

  it('is caught by the poll within 5 s on every server when no notification is sent (only the row written)', async () => {
    const t = await tenant();
    const token = await mint(a, t);
    await acceptedOnBoth(t, token);
    await recordRevocation(a.db, t.schema, 'token', claimsOf(token).jti, 300);
    const [onA, onB] = await Promise.all([refusedOn(a, t, token), refusedOn(b, t, token)]);
    delays.tokenPollA = onA;
    delays.tokenPollB = onB;
    expect(Math.max(onA, onB)).toBeLessThan(LIMIT_MS);
  });
});

describe('revoking a grant', () => {
  it('refuses every token of the grant, at once here and within 5 s on a second server', async () => {
    const t = await tenant();
    const gid = `grant-${Date.now()}`;
    const first = await mint(a, t, { claims: { gid } });
    const second = await mint(a, t, { claims: { gid, scope: 'todo:read' } });
    const otherGrant = await mint(a, t);
    await acceptedOnBoth(t, first, second, otherGrant);
    await a.db.transaction(async (tx) => {
      await recordRevocation(tx, t.schema, 'grant', gid, 300);
      await a.platform.changes.tokenRevoked(tx, t, 'grant', gid);
    });
    expectError(await list(a, t, first), 401, 'AuthenticationError');
    expectError(await list(a, t, second), 401, 'AuthenticationError');
    delays.grantNotify = Math.max(await refusedOn(b, t, first), await refusedOn(b, t, second));
    expect(delays.grantNotify).toBeLessThan(LIMIT_MS);
    // a token minted later in the same grant is refused too
    expectError(await list(b, t, await mint(a, t, { claims: { gid } })), 401, 'AuthenticationError');
    expectOk(await list(a, t, otherGrant));
    expectOk(await list(b, t, otherGrant));
  });

  it('is caught by the poll within 5 s when no notification is sent', async () => {
    const t = await tenant();
    const gid = `grant-poll-${Date.now()}`;
    const token = await mint(a, t, { claims: { gid } });
    await acceptedOnBoth(t, token);
    await recordRevocation(a.db, t.schema, 'grant', gid, 300);
    const [onA, onB] = await Promise.all([refusedOn(a, t, token), refusedOn(b, t, token)]);
    delays.grantPollA = onA;
    delays.grantPollB = onB;
    expect(Math.max(onA, onB)).toBeLessThan(LIMIT_MS);
  });

  it('a notification that arrives while the sets are first loaded is not lost', async () => {
    const t = await tenant();
    const token = await mint(a, t);
    const { jti } = claimsOf(token);
    // server b has never seen a token of this tenant: revoke, then use it there right away
    await a.db.transaction(async (tx) => {
      await recordRevocation(tx, t.schema, 'token', jti, 300);
      await a.platform.changes.tokenRevoked(tx, t, 'token', jti);
    });
    expectError(await list(b, t, token), 401, 'AuthenticationError');
    expectError(await list(a, t, token), 401, 'AuthenticationError');
  });
});
