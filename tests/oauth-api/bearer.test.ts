import { createSigningKey, tenantAudience } from '@quire/oauth';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError, expectOk } from '../platform/helpers';
import { startTestServer, type TestServer, type TestTenant } from '../support/server';
import { bearer, claimsOf, issuerOf, mint, rawJws, tenantKeys } from './helpers';

/** `Authorization: Bearer <access token>` on the API: who the caller is, and what its scopes allow. */

let server: TestServer;
let t: TestTenant;
let other: TestTenant;
beforeAll(async () => {
  server = await startTestServer();
  [t, other] = await Promise.all([server.tenant('oauth'), server.tenant('oauthb')]);
});
afterAll(() => server.close());

async function newTodo(tenant: TestTenant, description: string, auth?: string): Promise<string> {
  const res = await tenant.call('POST', '/api/resource/ToDo', { json: { description }, ...(auth ? { auth } : {}) });
  expectOk(res);
  return String(res.body.data.name);
}

async function createUser(tenant: TestTenant, email: string, roles: string[] = []): Promise<void> {
  const res = await tenant.call('POST', '/api/resource/User', { json: { email, first_name: email.split('@')[0], roles: roles.map((role) => ({ role })) } });
  expectOk(res);
}

describe('a valid token', () => {
  it('with `all` lists and creates ToDos as its user (Administrator)', async () => {
    const auth = bearer(await mint(server, t));
    const name = await newTodo(t, 'made with a bearer token', auth);
    const doc = await t.call('GET', `/api/resource/ToDo/${name}`, { auth });
    expectOk(doc);
    expect(doc.body.data.owner).toBe('Administrator');
    const list = await t.call('GET', '/api/resource/ToDo', { auth, query: { fields: '["name","description"]', limit: 0 } });
    expectOk(list);
    expect(list.body.data).toContainEqual({ name, description: 'made with a bearer token' });
    const who = await t.call('GET', '/api/method/frappe.auth.get_logged_user', { auth });
    expect(who.body).toEqual({ message: 'Administrator' });
  });

  it("of a non-admin user has only that user's rights, even with `all`", async () => {
    const tenant = await server.tenant('oauthu');
    await newTodo(tenant, "the Administrator's");
    await createUser(tenant, 'ada@example.com');
    const auth = bearer(await mint(server, tenant, { claims: { sub: 'ada@example.com' } }));
    const mine = await newTodo(tenant, "ada's", auth);
    const list = await tenant.call('GET', '/api/resource/ToDo', { auth, query: { fields: '["name","owner"]', limit: 0 } });
    expectOk(list);
    expect(list.body.data).toEqual([{ name: mine, owner: 'ada@example.com' }]);
    // Only a System Manager may read users' API secrets / issue keys: ada may not.
    expectError(
      await tenant.call('POST', '/api/method/frappe.core.doctype.user.user.generate_keys', { auth, json: { user: 'ada@example.com' } }),
      403,
      'PermissionError',
    );
    expect((await tenant.call('GET', '/api/method/frappe.auth.get_logged_user', { auth })).body.message).toBe('ada@example.com');
  });

  it('is refused (401) once its user is disabled, at once, and for a user that does not exist', async () => {
    const tenant = await server.tenant('oauthd');
    await createUser(tenant, 'bob@example.com');
    const auth = bearer(await mint(server, tenant, { claims: { sub: 'bob@example.com' } }));
    expectOk(await tenant.call('GET', '/api/resource/ToDo', { auth }));
    expectOk(await tenant.call('PUT', '/api/resource/User/bob@example.com', { json: { enabled: 0 } }));
    expectError(await tenant.call('GET', '/api/resource/ToDo', { auth }), 401, 'AuthenticationError');
    const ghost = bearer(await mint(server, tenant, { claims: { sub: 'ghost@example.com' } }));
    expectError(await tenant.call('GET', '/api/resource/ToDo', { auth: ghost }), 401, 'AuthenticationError');
  });

  it('is accepted with the scheme in any letter case; CSRF does not apply', async () => {
    const token = await mint(server, t);
    for (const scheme of ['bearer', 'BEARER', 'Bearer']) {
      expectOk(await t.call('POST', '/api/resource/ToDo', { auth: `${scheme} ${token}`, json: { description: scheme } }));
    }
  });

  it('signed with a retired key still works after a rotation, and so does one of the new key', async () => {
    const tenant = await server.tenant('oauthr');
    const [oldKey] = await tenantKeys(server, tenant);
    expectOk(await tenant.call('GET', '/api/resource/ToDo', { auth: bearer(await mint(server, tenant, { key: oldKey! })) }));
    const newKid = await server.db.transaction((tx) => createSigningKey(tx, tenant.schema, server.platform.secrets));
    const keys = await tenantKeys(server, tenant);
    expect(keys.map((k) => k.kid)).toEqual([newKid, oldKey!.kid]);
    // a fresh token of the retired key
    expectOk(await tenant.call('GET', '/api/resource/ToDo', { auth: bearer(await mint(server, tenant, { key: oldKey! })) }));
    // a token of the new key: its kid is unknown to the cached JWKS, which is read again
    expectOk(await tenant.call('GET', '/api/resource/ToDo', { auth: bearer(await mint(server, tenant, { key: keys[0]! })) }));
  });
});

describe('scopes', () => {
  it('todo:read lists and gets, but POST, PUT and DELETE are 403', async () => {
    const name = await newTodo(t, 'readable');
    const auth = bearer(await mint(server, t, { claims: { scope: 'openid todo:read' } }));
    const list = await t.call('GET', '/api/resource/ToDo', { auth, query: { limit: 0 } });
    expectOk(list);
    expect(list.body.data).toContainEqual({ name });
    expectOk(await t.call('GET', `/api/resource/ToDo/${name}`, { auth }));
    expectOk(await t.call('GET', '/api/method/frappe.client.get_list', { auth, query: { doctype: 'ToDo' } }));
    expectOk(await t.call('GET', '/api/method/frappe.client.get_count', { auth, query: { doctype: 'ToDo' } }));
    expectOk(await t.call('GET', '/api/method/frappe.desk.search.search_link', { auth, query: { doctype: 'ToDo', txt: '' } }));
    expectError(await t.call('POST', '/api/resource/ToDo', { auth, json: { description: 'no' } }), 403, 'PermissionError');
    expectError(await t.call('PUT', `/api/resource/ToDo/${name}`, { auth, json: { description: 'no' } }), 403, 'PermissionError');
    expectError(await t.call('DELETE', `/api/resource/ToDo/${name}`, { auth }), 403, 'PermissionError');
    expectError(
      await t.call('POST', '/api/method/frappe.client.insert', { auth, json: { doc: { doctype: 'ToDo', description: 'no' } } }),
      403,
      'PermissionError',
    );
    expectError(
      await t.call('POST', '/api/method/frappe.client.set_value', { auth, json: { doctype: 'ToDo', name, fieldname: 'description', value: 'x' } }),
      403,
      'PermissionError',
    );
    // other DocTypes: nothing
    expectError(await t.call('GET', '/api/resource/User', { auth }), 403, 'PermissionError');
    expectError(await t.call('GET', '/api/resource/User/Administrator', { auth }), 403, 'PermissionError');
    // still there, unchanged
    const after = await t.call('GET', `/api/resource/ToDo/${name}`);
    expect(after.body.data.description).toBe('readable');
  });

  it('todo:write creates, updates and deletes (write implies read)', async () => {
    const auth = bearer(await mint(server, t, { claims: { scope: 'todo:write' } }));
    const name = await newTodo(t, 'written', auth);
    expectOk(await t.call('PUT', `/api/resource/ToDo/${name}`, { auth, json: { description: 'rewritten' } }));
    expect((await t.call('GET', `/api/resource/ToDo/${name}`, { auth })).body.data.description).toBe('rewritten');
    expectOk(await t.call('POST', '/api/method/frappe.client.set_value', { auth, json: { doctype: 'ToDo', name, fieldname: 'status', value: 'Closed' } }));
    expectOk(await t.call('DELETE', `/api/resource/ToDo/${name}`, { auth }), 202);
    expectError(await t.call('POST', '/api/resource/User', { auth, json: { email: 'no@example.com', first_name: 'No' } }), 403, 'PermissionError');
  });

  it('identity only (openid profile email): 403 on /api/resource/ToDo, but get_logged_user works', async () => {
    const auth = bearer(await mint(server, t, { claims: { scope: 'openid profile email' } }));
    expectError(await t.call('GET', '/api/resource/ToDo', { auth }), 403, 'PermissionError');
    expectError(await t.call('POST', '/api/resource/ToDo', { auth, json: { description: 'no' } }), 403, 'PermissionError');
    const who = await t.call('GET', '/api/method/frappe.auth.get_logged_user', { auth });
    expectOk(who);
    expect(who.body.message).toBe('Administrator');
    expectOk(await t.call('GET', '/api/method/ping', { auth }));
    expectOk(await t.call('GET', '/api/method/frappe.ping', { auth }));
    expectOk(await t.call('GET', '/api/method/version', { auth }));
  });

  it('a scoped token may not call a method not marked for scoped tokens (403); an `all` token may', async () => {
    const scoped = bearer(await mint(server, t, { claims: { scope: 'todo:write user:write' } }));
    const res = await t.call('POST', '/api/method/frappe.core.doctype.user.user.generate_keys', { auth: scoped, json: { user: 'Administrator' } });
    expectError(res, 403, 'PermissionError');
    expect(res.text).toContain("Not permitted for this token's scope");
    // legacy RPC path too
    expectError(
      await t.call('POST', '/', { auth: scoped, form: { cmd: 'frappe.core.doctype.user.user.generate_keys', user: 'Administrator' } }),
      403,
      'PermissionError',
    );
    const all = bearer(await mint(server, t, { claims: { scope: 'all' } }));
    expectOk(await t.call('POST', '/api/method/frappe.core.doctype.user.user.generate_keys', { auth: all, json: { user: 'Administrator' } }));
  });

  it('no scope claim at all is no access', async () => {
    const auth = bearer(await mint(server, t, { claims: { scope: undefined } }));
    expectError(await t.call('GET', '/api/resource/ToDo', { auth }), 403, 'PermissionError');
  });
});

describe('refused with 401 AuthenticationError', () => {
  async function refused(auth: string, tenant: TestTenant = t): Promise<void> {
    const res = await tenant.call('GET', '/api/resource/ToDo', { auth });
    expectError(res, 401, 'AuthenticationError');
    expect(res.headers.get('www-authenticate')).toBe('Bearer error="invalid_token"');
  }

  it('a token of another tenant (valid with its own key) sent to tenant B', async () => {
    const ofA = await mint(server, t);
    expectOk(await t.call('GET', '/api/resource/ToDo', { auth: bearer(ofA) }));
    await refused(bearer(ofA), other);
    // even dressed as B's (B's audience and issuer), A's key is not B's
    await refused(bearer(await mint(server, t, { claims: { aud: tenantAudience(other.name), iss: issuerOf(other) } })), other);
  });

  it("a token signed by a key not in the tenant's JWKS: same kid as a real one, and an unknown kid", async () => {
    const { privateKey } = await generateKeyPair('ES256', { extractable: true });
    const rogue = await exportJWK(privateKey);
    const [real] = await tenantKeys(server, t);
    await refused(bearer(await mint(server, t, { key: { ...rogue, kid: real!.kid } })));
    await refused(bearer(await mint(server, t, { key: { ...rogue, kid: 'rogue-kid' } })));
    await refused(bearer(await mint(server, t, { key: { ...rogue, kid: 'rogue-kid' }, header: { kid: undefined } })));
  });

  it('an expired token', async () => {
    const now = Math.floor(Date.now() / 1000);
    await refused(bearer(await mint(server, t, { claims: { iat: now - 600, exp: now - 60 } })));
  });

  it('a token not valid yet', async () => {
    const now = Math.floor(Date.now() / 1000);
    await refused(bearer(await mint(server, t, { claims: { nbf: now + 120 } })));
  });

  it('a wrong audience, or none', async () => {
    await refused(bearer(await mint(server, t, { claims: { aud: tenantAudience(other.name) } })));
    await refused(bearer(await mint(server, t, { claims: { aud: 'https://api.example.com' } })));
    await refused(bearer(await mint(server, t, { claims: { aud: undefined } })));
  });

  it("an issuer host not of the tenant (another tenant's, a foreign one, not an origin)", async () => {
    await refused(bearer(await mint(server, t, { claims: { iss: issuerOf(other) } })));
    await refused(bearer(await mint(server, t, { claims: { iss: 'https://evil.example.com' } })));
    await refused(bearer(await mint(server, t, { claims: { iss: `ftp://${t.name}.localhost` } })));
    await refused(bearer(await mint(server, t, { claims: { iss: `${issuerOf(t)}/elsewhere` } })));
    await refused(bearer(await mint(server, t, { claims: { iss: undefined } })));
    // the request's own address is an issuer only for DEFAULT_TENANT
    await refused(bearer(await mint(server, t, { claims: { iss: server.url } })));
    // any port, http or https, is fine
    expectOk(await t.call('GET', '/api/resource/ToDo', { auth: bearer(await mint(server, t, { claims: { iss: `https://${t.name}.localhost` } })) }));
    expectOk(
      await t.call('GET', '/api/resource/ToDo', { auth: bearer(await mint(server, t, { claims: { iss: `http://${t.name.toUpperCase()}.localhost:9999` } })) }),
    );
  });

  it('a `typ` other than at+jwt', async () => {
    await refused(bearer(await mint(server, t, { header: { typ: 'JWT' } })));
    await refused(bearer(await mint(server, t, { header: { typ: undefined } })));
  });

  it('claims this API needs missing (sub, jti, client_id, exp)', async () => {
    for (const claim of ['sub', 'jti', 'client_id', 'exp', 'iat']) {
      await refused(bearer(await mint(server, t, { claims: { [claim]: undefined } })));
    }
    await refused(bearer(await mint(server, t, { claims: { scope: ['all'] } })));
  });

  it('alg none and HS256 forgeries', async () => {
    const [real] = await tenantKeys(server, t);
    const claims = claimsOf(await mint(server, t));
    await refused(bearer(rawJws({ alg: 'none', typ: 'at+jwt', kid: real!.kid }, claims)));
    await refused(bearer(rawJws({ alg: 'none', typ: 'at+jwt', kid: real!.kid }, claims, 'AAAA')));
    // HMAC keyed with the public key (the classic algorithm confusion)
    const { d: _d, ...publicJwk } = real!;
    for (const secret of [JSON.stringify(publicJwk), publicJwk.x!]) {
      const forged = await new SignJWT(claims).setProtectedHeader({ alg: 'HS256', typ: 'at+jwt', kid: real!.kid }).sign(new TextEncoder().encode(secret));
      await refused(bearer(forged));
    }
    // a valid token with its header swapped for alg HS256
    const valid = await mint(server, t);
    const [, payload, signature] = valid.split('.');
    const header = rawJws({ alg: 'HS256', typ: 'at+jwt', kid: real!.kid }, {}).split('.')[0];
    await refused(bearer(`${header}.${payload}.${signature}`));
  });

  it('malformed tokens', async () => {
    const valid = await mint(server, t);
    for (const token of ['x', 'a.b.c', 'a.b', `${valid}.x`, valid.slice(0, -3), `${valid.split('.')[0]}.!!!.${valid.split('.')[2]}`, 'x'.repeat(10_000)]) {
      await refused(bearer(token));
    }
  });

  it('a tampered payload', async () => {
    const valid = await mint(server, t, { claims: { scope: 'todo:read' } });
    const [h, , s] = valid.split('.');
    const payload = rawJws({}, { ...claimsOf(valid), scope: 'all' }).split('.')[1];
    await refused(bearer(`${h}.${payload}.${s}`));
  });
});

describe('DEFAULT_TENANT', () => {
  it("accepts the request's own host as the issuer of the default tenant", async () => {
    const name = `oauthdef${Date.now().toString(36)}`;
    const dflt = await startTestServer({ defaultTenant: name });
    try {
      const tenant = await dflt.tenant('x', name);
      const token = await mint(dflt, tenant, { claims: { iss: dflt.url } });
      // reached without X-Frappe-Site-Name: Host is 127.0.0.1:<port>
      const res = await fetch(`${dflt.url}/api/resource/ToDo`, { headers: { Authorization: bearer(token) } });
      expect(res.status).toBe(200);
      // and a token naming another address is refused
      const foreign = await mint(dflt, tenant, { claims: { iss: 'http://10.9.8.7:8000' } });
      const refused = await fetch(`${dflt.url}/api/resource/ToDo`, { headers: { Authorization: bearer(foreign) } });
      expect(refused.status).toBe(401);
    } finally {
      await dflt.close();
    }
  });
});
