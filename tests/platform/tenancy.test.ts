import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestServer, uniqueName, type CallResult, type TestServer, type TestTenant } from '../support/server';
import { createRole, expectError, expectOk, pollUntil, quire, rawRequest } from './helpers';

/** Tenancy: which tenant a request reaches, and that nothing crosses between tenants. */

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

async function todo(t: TestTenant, description: string): Promise<string> {
  const res = await t.call('POST', '/api/resource/ToDo', { json: { description } });
  expectOk(res);
  return res.body.data.name as string;
}

async function descriptions(t: TestTenant): Promise<string[]> {
  const res = await t.call('GET', '/api/resource/ToDo', { query: { fields: '["description"]', limit: 0 } });
  expectOk(res);
  return (res.body.data as Array<{ description: string }>).map((r) => r.description).sort();
}

/** Waits until this server's registry knows a tenant made by another process (CLI). */
async function untilServed(port: number, headers: Record<string, string>): Promise<void> {
  const ms = await pollUntil(async () => (await rawRequest(port, 'GET', '/api/resource/ToDo', headers)).status === 200, 5_000);
  expect(ms).toBeLessThan(5_000);
}

async function untilServedBySite(site: string, auth: string): Promise<void> {
  const ms = await pollUntil(async () => (await call(server.url, site, 'GET', '/api/resource/ToDo', { auth })).status === 200, 5_000);
  expect(ms).toBeLessThan(5_000);
}

describe('site resolution', () => {
  it('resolves the tenant from X-Frappe-Site-Name', async () => {
    const a = await server.tenant();
    const b = await server.tenant();
    await todo(a, 'in a');
    await todo(b, 'in b');
    expect(await descriptions(a)).toEqual(['in a']);
    expect(await descriptions(b)).toEqual(['in b']);
  });

  it('resolves the tenant from the Host header <tenant>.localhost with or without a port', async () => {
    const a = await server.tenant();
    const b = await server.tenant();
    await todo(a, 'via host a');
    await todo(b, 'via host b');
    for (const host of [`${a.name}.localhost:${server.port}`, `${a.name}.localhost`, `${a.name.toUpperCase()}.LOCALHOST:${server.port}`]) {
      const res = await rawRequest(server.port, 'GET', '/api/resource/ToDo?fields=%5B%22description%22%5D', { Host: host, Authorization: a.auth });
      expect(res.status, host).toBe(200);
      expect(res.body.data).toEqual([{ description: 'via host a' }]);
    }
    // X-Frappe-Site-Name wins over Host
    const both = await rawRequest(server.port, 'GET', '/api/resource/ToDo?fields=%5B%22description%22%5D', {
      Host: `${a.name}.localhost:${server.port}`,
      'X-Frappe-Site-Name': b.name,
      Authorization: b.auth,
    });
    expect(both.status).toBe(200);
    expect(both.body.data).toEqual([{ description: 'via host b' }]);
  });

  it('resolves a custom domain registered with `quire tenant create --domain`', async () => {
    const name = uniqueName('dom');
    const domain = `shop-${name}.example.test`;
    const created = await quire(['tenant', 'create', name, '--domain', domain]);
    expect(created.code).toBe(0);
    expect(created.json.hosts).toEqual([`${name}.localhost`, domain]);
    const auth = `token ${created.json.api_key}:${created.json.api_secret}`;
    await untilServed(server.port, { Host: domain, Authorization: auth });
    const posted = await rawRequest(
      server.port,
      'POST',
      '/api/resource/ToDo',
      { Host: `${domain}:${server.port}`, Authorization: auth, 'Content-Type': 'application/json' },
      JSON.stringify({ description: 'shop todo' }),
    );
    expect(posted.status).toBe(200);
    const viaHeader = await call(server.url, name, 'GET', '/api/resource/ToDo', { auth, query: { fields: '["name","description"]' } });
    expect(viaHeader.body.data).toEqual([{ name: posted.body.data.name, description: 'shop todo' }]);
  });

  it('`tenant set --domain` replaces the custom domains; a domain of another tenant or under BASE_DOMAIN is refused', async () => {
    const name = uniqueName('dom');
    const created = await quire(['tenant', 'create', name, '--domain', `old-${name}.example.test`, '--admin-email', `ops@${name}.example.test`]);
    expect(created.code).toBe(0);
    const auth = `token ${created.json.api_key}:${created.json.api_secret}`;
    await untilServed(server.port, { Host: `old-${name}.example.test`, Authorization: auth });
    const admin = await rawRequest(server.port, 'GET', '/api/resource/User/Administrator', { Host: `old-${name}.example.test`, Authorization: auth });
    expect(admin.body.data.email).toBe(`ops@${name}.example.test`);

    const set = await quire(['tenant', 'set', name, '--domain', `www-${name}.example.test`, '--domain', `Shop-${name}.Example.Test`]);
    expect(set.code).toBe(0);
    expect(set.json).toEqual({ name, domains: [`shop-${name}.example.test`, `www-${name}.example.test`] });
    await untilServed(server.port, { Host: `shop-${name}.example.test`, Authorization: auth });
    const ms = await pollUntil(
      async () => (await rawRequest(server.port, 'GET', '/api/method/ping', { Host: `old-${name}.example.test` })).status === 404,
      5_000,
    );
    expect(ms).toBeLessThan(5_000);

    const other = await server.tenant('dom');
    const taken = await quire(['tenant', 'set', other.name, '--domain', `www-${name}.example.test`]);
    expect(taken.code).not.toBe(0);
    expect(taken.json).toMatchObject({ error: { exc_type: 'DuplicateEntryError', message: `Already registered: www-${name}.example.test (tenant ${name})` } });
    const capture = await quire(['tenant', 'set', other.name, '--domain', `${name}.localhost`]);
    expect(capture.json).toMatchObject({ error: { exc_type: 'ValidationError' } });
    expect(capture.json.error.message).toMatch(/under BASE_DOMAIN/);
    const cleared = await quire(['tenant', 'set', name, '--domain', '']);
    expect(cleared.json).toEqual({ name, domains: [] });
  });

  it('answers an unknown host with 404 DoesNotExistError', async () => {
    const a = await server.tenant();
    const byHost = await rawRequest(server.port, 'GET', '/api/resource/ToDo', { Host: `nobody-${a.name}.localhost:${server.port}`, Authorization: a.auth });
    expect({ status: byHost.status, exc_type: byHost.body?.exc_type }).toEqual({ status: 404, exc_type: 'DoesNotExistError' });
    const other = await rawRequest(server.port, 'GET', '/api/resource/ToDo', { Host: 'unknown.example.test', Authorization: a.auth });
    expect({ status: other.status, exc_type: other.body?.exc_type }).toEqual({ status: 404, exc_type: 'DoesNotExistError' });
    const bySite = await call(server.url, `nobody-${a.name}`, 'GET', '/api/resource/ToDo', { auth: a.auth });
    expectError(bySite, 404, 'DoesNotExistError');
    // a tenant's schema name is not a site name
    expectError(await call(server.url, a.schema, 'GET', '/api/resource/ToDo', { auth: a.auth }), 404, 'DoesNotExistError');
  });

  it('serves DEFAULT_TENANT for a host that matches no tenant', async () => {
    const d = await server.tenant();
    const other = await server.tenant();
    await todo(d, 'default site todo');
    await todo(other, 'other site todo');
    const withDefault = await startTestServer({ defaultTenant: d.name });
    try {
      const res = await rawRequest(withDefault.port, 'GET', '/api/resource/ToDo?fields=%5B%22description%22%5D', {
        Host: 'no-such-site.example.test',
        Authorization: d.auth,
      });
      expect(res.status).toBe(200);
      expect(res.body.data).toEqual([{ description: 'default site todo' }]);
      // a host that names a tenant still reaches that tenant
      const named = await rawRequest(withDefault.port, 'GET', '/api/resource/ToDo?fields=%5B%22description%22%5D', {
        Host: `${other.name}.localhost`,
        Authorization: other.auth,
      });
      expect(named.status).toBe(200);
      expect(named.body.data).toEqual([{ description: 'other site todo' }]);
    } finally {
      await withDefault.close();
    }
  });
});

describe('two tenants at once', () => {
  it('never shows records of one tenant in another (list, get, count)', async () => {
    const a = await server.tenant();
    const b = await server.tenant();
    const aName = await todo(a, 'only in a');
    await todo(a, 'also only in a');
    await todo(b, 'only in b');
    expect(await descriptions(a)).toEqual(['also only in a', 'only in a']);
    expect(await descriptions(b)).toEqual(['only in b']);
    expectError(await b.call('GET', `/api/resource/ToDo/${aName}`), 404, 'DoesNotExistError');
    expectError(await b.call('PUT', `/api/resource/ToDo/${aName}`, { json: { description: 'hijack' } }), 404, 'DoesNotExistError');
    expectError(await b.call('DELETE', `/api/resource/ToDo/${aName}`), 404, 'DoesNotExistError');
    const countA = await a.call('GET', '/api/method/frappe.client.get_count', { query: { doctype: 'ToDo' } });
    const countB = await b.call('GET', '/api/method/frappe.client.get_count', { query: { doctype: 'ToDo' } });
    expect([countA.status, countA.body]).toEqual([200, { message: 2 }]);
    expect([countB.status, countB.body]).toEqual([200, { message: 1 }]);
    // and A's record is untouched
    const got = await a.call('GET', `/api/resource/ToDo/${aName}`);
    expect(got.body.data.description).toBe('only in a');
  });

  it("refuses one tenant's API key on another tenant with 401", async () => {
    const a = await server.tenant();
    const b = await server.tenant();
    expectError(await b.call('GET', '/api/resource/ToDo', { auth: a.auth }), 401, 'AuthenticationError');
    expectError(await b.call('POST', '/api/resource/ToDo', { auth: a.auth, json: { description: 'x' } }), 401, 'AuthenticationError');
    const basic = `Basic ${Buffer.from(`${a.api_key}:${a.api_secret}`).toString('base64')}`;
    expectError(await b.call('GET', '/api/resource/ToDo', { auth: basic }), 401, 'AuthenticationError');
    // by Host too
    const byHost = await rawRequest(server.port, 'GET', '/api/resource/ToDo', { Host: `${b.name}.localhost`, Authorization: a.auth });
    expect({ status: byHost.status, exc_type: byHost.body?.exc_type }).toEqual({ status: 401, exc_type: 'AuthenticationError' });
  });

  it("does not open another tenant's tables to users created with the same name", async () => {
    const a = await server.tenant();
    const b = await server.tenant();
    await createRole(a, 'Clerk');
    await createRole(b, 'Clerk');
    const ua = await a.call('POST', '/api/resource/User', { json: { email: 'same@example.com', first_name: 'Same' } });
    expectOk(ua);
    expectError(await b.call('GET', '/api/resource/User/same@example.com'), 404, 'DoesNotExistError');
    const roleCount = await b.call('GET', '/api/method/frappe.client.get_count', { query: { doctype: 'User', filters: '{"name":"same@example.com"}' } });
    expect(roleCount.body).toEqual({ message: 0 });
  });
});

describe('hostile inputs cannot cross tenants', () => {
  let a: TestTenant;
  let b: TestTenant;
  let secret: string;
  let aName: string;
  let bName: string;

  beforeAll(async () => {
    a = await server.tenant('ha');
    b = await server.tenant('hb');
    secret = `SECRET-${uniqueName('s')}`;
    aName = await todo(a, secret);
    bName = await todo(b, 'harmless b');
  });

  /** Never a 5xx, never A's data (inputs may be echoed in error messages, rows never). */
  function expectNoLeak(res: CallResult): void {
    expect(res.status, res.text.slice(0, 300)).toBeLessThan(500);
    expect(res.text).not.toContain(secret);
    expect(JSON.stringify(res.body?.data ?? null)).not.toContain(aName);
    expect(JSON.stringify(res.body?.message ?? null)).not.toContain(aName);
  }

  function expectRefused(res: CallResult, status: number, excType: string): void {
    expectNoLeak(res);
    expectError(res, status, excType);
  }

  const schemaA = () => a.schema;

  const hostileFields = (): string[][] => [
    [`${schemaA()}."tabToDo".description`],
    [`${schemaA()}.tabToDo.description`],
    [`\`${schemaA()}\`.\`tabToDo\`.\`description\``],
    [`"${schemaA()}"."tabToDo"."description"`],
    [`\`${schemaA()}.tabToDo\`.\`description\``],
    [`(select description from ${schemaA()}."tabToDo" limit 1) as x`],
    [`name; select * from ${schemaA()}."tabToDo"`],
    [`name from ${schemaA()}."tabToDo" --`],
    ['name /* comment */'],
    [`\`tab${schemaA()}"."tabToDo\`.\`description\``],
  ];

  it('refuses schema-qualified and injected `fields` with 417', async () => {
    for (const fields of hostileFields()) {
      const res = await b.call('GET', '/api/resource/ToDo', { query: { fields: JSON.stringify(fields) } });
      expectNoLeak(res);
      expect(res.status, `${fields[0]} -> ${res.text.slice(0, 200)}`).toBe(417);
      expect(['ValidationError', 'DataError']).toContain(res.body.exc_type);
    }
  });

  it("resolves `tabToDo`.`name` to the caller's own tenant", async () => {
    for (const f of ['`tabToDo`.`name`', 'tabToDo.name', '`tabToDo`.name']) {
      const res = await b.call('GET', '/api/resource/ToDo', { query: { fields: JSON.stringify([f]) } });
      expectNoLeak(res);
      expect(res.status, f).toBe(200);
      expect(res.body.data.map((r: Record<string, unknown>) => Object.values(r)[0])).toEqual([bName]);
    }
  });

  it('refuses schema-qualified filters with 417', async () => {
    const cases: unknown[] = [
      [[`${schemaA()}.tabToDo`, 'name', 'is', 'set']],
      [[`${schemaA()}"."tabToDo`, 'description', 'like', '%']],
      [[`../${schemaA()}/ToDo`, 'name', 'is', 'set']],
      { [`${schemaA()}."tabToDo".description`]: secret },
      { [`${schemaA()}.tabToDo.name`]: aName },
      [[`\`${schemaA()}\`.\`tabToDo\`.\`name\``, '=', aName]],
      [['description', 'like', '%', schemaA()]],
    ];
    for (const filters of cases) {
      const res = await b.call('GET', '/api/resource/ToDo', { query: { filters: JSON.stringify(filters), fields: '["name","description"]' } });
      expectNoLeak(res);
      expect(res.status, `${JSON.stringify(filters)} -> ${res.text.slice(0, 200)}`).toBe(417);
      expect(['ValidationError', 'DataError']).toContain(res.body.exc_type);
      const count = await b.call('GET', '/api/method/frappe.client.get_count', { query: { doctype: 'ToDo', filters: JSON.stringify(filters) } });
      expectNoLeak(count);
      expect(count.status, `count ${JSON.stringify(filters)} -> ${count.text.slice(0, 200)}`).toBe(417);
      expect(['ValidationError', 'DataError']).toContain(count.body.exc_type);
    }
  });

  it('treats injected filter values as plain values that match nothing', async () => {
    const cases: unknown[] = [
      { description: `"; select * from ${schemaA()}."tabToDo"` },
      { description: `'; select * from ${schemaA()}."tabToDo" --` },
      { name: ['in', `(select name from ${schemaA()}."tabToDo")`] },
      [['description', 'like', `%' or 1=1 --`]],
      [['name', 'in', [aName, `${aName}') or ('1'='1`]]],
      { name: aName },
    ];
    for (const filters of cases) {
      const res = await b.call('GET', '/api/resource/ToDo', { query: { filters: JSON.stringify(filters), fields: '["name","description"]' } });
      expectNoLeak(res);
      expect([res.status, res.body.data], JSON.stringify(filters)).toEqual([200, []]);
    }
  });

  it('refuses schema-qualified or injected order_by and group_by with 417', async () => {
    const orders = [
      `${schemaA()}."tabToDo".name desc`,
      `${schemaA()}.tabToDo.name`,
      `\`${schemaA()}\`.\`tabToDo\`.\`name\` asc`,
      `name; select * from ${schemaA()}."tabToDo"`,
      `(select max(description) from ${schemaA()}."tabToDo")`,
      `name desc, (select 1)`,
      `name desc -- `,
    ];
    for (const order_by of orders) {
      const res = await b.call('GET', '/api/resource/ToDo', { query: { order_by } });
      expectNoLeak(res);
      expect(res.status, `${order_by} -> ${res.text.slice(0, 200)}`).toBe(417);
      expect(['ValidationError', 'DataError']).toContain(res.body.exc_type);
    }
    for (const group_by of [`${schemaA()}."tabToDo".name`, `name; select * from ${schemaA()}."tabToDo"`]) {
      const res = await b.call('GET', '/api/resource/ToDo', { query: { group_by, fields: '["name"]' } });
      expectNoLeak(res);
      expect(res.status, `${group_by} -> ${res.text.slice(0, 200)}`).toBe(417);
      expect(['ValidationError', 'DataError']).toContain(res.body.exc_type);
    }
  });

  it('answers DocType path segments naming other schemas or traversals with 404', async () => {
    const enc = encodeURIComponent;
    const paths = [
      `/api/resource/${enc(`../${schemaA()}.tabToDo`)}`,
      `/api/resource/..%2F${schemaA()}%2FToDo`,
      `/api/resource/${schemaA()}.tabToDo`,
      `/api/resource/${enc(`${schemaA()}."tabToDo"`)}`,
      `/api/resource/tabToDo`,
      `/api/resource/${enc('ToDo"; select * from ' + schemaA() + '."tabToDo" --')}`,
      `/api/resource/${enc(`${a.name}:ToDo`)}`,
      `/api/resource/${enc(`${schemaA()}.tabToDo`)}/${aName}`,
      `/api/resource/ToDo/${enc(`../${aName}`)}`,
      `/api/resource/ToDo/..%2F..%2F${schemaA()}%2FtabToDo%2F${aName}`,
      `/api/resource/ToDo/${enc(`${schemaA()}.${aName}`)}`,
      `/api/resource/ToDo/${aName}`,
    ];
    for (const p of paths) {
      const res = await b.call('GET', p);
      expectRefused(res, 404, 'DoesNotExistError');
    }
    for (const doctype of [`${schemaA()}.tabToDo`, `${schemaA()}"."tabToDo`, `../${schemaA()}/ToDo`]) {
      const res = await b.call('GET', '/api/method/frappe.client.get_count', { query: { doctype } });
      expectRefused(res, 404, 'DoesNotExistError');
      const list = await b.call('GET', '/api/method/frappe.client.get_list', { query: { doctype } });
      expectRefused(list, 404, 'DoesNotExistError');
    }
  });

  it("refuses DocType definitions that reach for another tenant's tables with 417", async () => {
    const definitions = [
      { name: `${schemaA()}.Note`, fields: [{ fieldname: 'title', fieldtype: 'Data' }] },
      { name: 'Probe', fields: [{ fieldname: 'todo', fieldtype: 'Link', options: `${schemaA()}"."tabToDo` }] },
      { name: 'Probe', fields: [{ fieldname: 'todo', fieldtype: 'Link', options: `../${a.name}/ToDo` }] },
      { name: 'Probe', fields: [{ fieldname: 'rows', fieldtype: 'Table', options: `${schemaA()}.tabToDo` }] },
    ];
    const tablesOfA = async () =>
      (await server.db.query(`SELECT table_name FROM information_schema.tables WHERE table_schema = $1 ORDER BY 1`, [schemaA()])).rows;
    const before = await tablesOfA();
    for (const definition of definitions) {
      const res = await b.call('POST', '/api/resource/DocType', { json: definition });
      expectRefused(res, 417, 'ValidationError');
    }
    expect(await tablesOfA()).toEqual(before);
    expect(await descriptions(a)).toEqual([secret]);
  });

  it('answers hostile site names with 404', async () => {
    for (const site of [schemaA(), `../${a.name}`, `${a.name}/..`, `${a.name}; drop schema ${schemaA()}`, `"${schemaA()}"`]) {
      const res = await call(server.url, site, 'GET', '/api/resource/ToDo', { auth: a.auth });
      expectError(res, 404, 'DoesNotExistError');
      expect(res.text).not.toContain(secret);
    }
    // A is intact
    expect(await descriptions(a)).toEqual([secret]);
  });
});

describe('quire CLI', () => {
  it('`tenant create` prints name, schema, hosts and a working Administrator key', async () => {
    const name = uniqueName('cli');
    const res = await quire(['tenant', 'create', name]);
    expect(res.code).toBe(0);
    expect(Object.keys(res.json).sort()).toEqual(['admin_password', 'api_key', 'api_secret', 'cluster', 'hosts', 'name', 'plan', 'schema']);
    // Without QUIRE_PLANS nothing is limited: no plan.
    expect(res.json).toMatchObject({ name, schema: `t_${name}`, hosts: [`${name}.localhost`], plan: null });
    expect(res.json.api_key).toMatch(/^[0-9a-f]{15}$/);
    expect(typeof res.json.api_secret).toBe('string');
    const auth = `token ${res.json.api_key}:${res.json.api_secret}`;
    await untilServedBySite(name, auth);
    const who = await call(server.url, name, 'GET', '/api/method/frappe.auth.get_logged_user', { auth });
    expect([who.status, who.body]).toEqual([200, { message: 'Administrator' }]);
    // a duplicate name is refused, printing one JSON object
    const again = await quire(['tenant', 'create', name]);
    expect(again.code).not.toBe(0);
    expect(again.json).toMatchObject({ error: { exc_type: 'DuplicateEntryError' } });
  });

  it('`tenant create` without --admin-password prints a generated Administrator password that signs in', async () => {
    const name = uniqueName('cli');
    const res = await quire(['tenant', 'create', name]);
    expect(res.code).toBe(0);
    const password = res.json.admin_password as string;
    expect(password).toMatch(/^[A-Za-z0-9_-]{24}$/);
    await untilServedBySite(name, `token ${res.json.api_key}:${res.json.api_secret}`);
    const login = await call(server.url, name, 'POST', '/api/method/login', { auth: null, json: { usr: 'Administrator', pwd: password } });
    expect([login.status, login.body]).toEqual([200, expect.objectContaining({ message: 'Logged In' })]);
    const wrong = await call(server.url, name, 'POST', '/api/method/login', { auth: null, json: { usr: 'Administrator', pwd: `${password}x` } });
    expect(wrong.status).toBe(401);
    // Each tenant its own; one given is set and not echoed back.
    const other = await quire(['tenant', 'create', uniqueName('cli')]);
    expect(other.json.admin_password).not.toBe(password);
    const given = await quire(['tenant', 'create', uniqueName('cli'), '--admin-password', 'correct horse battery staple']);
    expect(given.code).toBe(0);
    expect(given.json).not.toHaveProperty('admin_password');
    expect(given.stdout).not.toContain('correct horse');
  });

  it('`tenant list` includes a created tenant', async () => {
    const name = uniqueName('cli');
    expect((await quire(['tenant', 'create', name])).code).toBe(0);
    const res = await quire(['tenant', 'list']);
    expect(res.code).toBe(0);
    expect(res.json.tenants).toEqual(
      expect.arrayContaining([{ name, schema: `t_${name}`, status: 'active', cluster: 'default', plan: null, hosts: [`${name}.localhost`] }]),
    );
  });

  it('`user create` and `keys generate` give a user a working key with its roles', async () => {
    const t = await server.tenant();
    await createRole(t, 'Clerk');
    const user = await quire(['user', 'create', '--tenant', t.name, '--email', 'Clerk@Example.com', '--roles', 'Clerk']);
    expect(user.code).toBe(0);
    expect(user.json).toMatchObject({ tenant: t.name, name: 'clerk@example.com', email: 'clerk@example.com', roles: ['Clerk'] });
    const keys = await quire(['keys', 'generate', '--tenant', t.name, '--user', 'clerk@example.com']);
    expect(keys.code).toBe(0);
    expect(keys.json).toMatchObject({ tenant: t.name, user: 'clerk@example.com' });
    const auth = `token ${keys.json.api_key}:${keys.json.api_secret}`;
    const who = await t.call('GET', '/api/method/frappe.auth.get_logged_user', { auth });
    expect([who.status, who.body]).toEqual([200, { message: 'clerk@example.com' }]);
    const created = await t.call('POST', '/api/resource/ToDo', { auth, json: { description: 'mine' } });
    expectOk(created);
    expect(created.body.data.owner).toBe('clerk@example.com');
    const roles = await t.call('GET', '/api/resource/User/clerk@example.com');
    expect(roles.body.data.roles.map((r: { role: string }) => r.role)).toEqual(['Clerk']);
  });

  it('`tenant drop --yes` removes the tenant and its webhook events: its host then answers 404', async () => {
    const name = uniqueName('cli');
    const created = await quire(['tenant', 'create', name]);
    expect(created.code).toBe(0);
    const auth = `token ${created.json.api_key}:${created.json.api_secret}`;
    await untilServed(server.port, { Host: `${name}.localhost`, Authorization: auth });
    const host = { Host: `${name}.localhost`, Authorization: auth, 'Content-Type': 'application/json' };
    const webhook = {
      name: 'on-todo',
      webhook_doctype: 'ToDo',
      webhook_docevent: 'after_insert',
      request_url: 'http://127.0.0.1:9/hook',
      request_structure: 'Form URL-Encoded',
    };
    const saved = await rawRequest(server.port, 'POST', '/api/resource/Webhook', host, JSON.stringify(webhook));
    expect(saved.status, saved.text).toBe(200);
    expect((await rawRequest(server.port, 'POST', '/api/resource/ToDo', host, JSON.stringify({ description: 'raises an event' }))).status).toBe(200);
    const events = () => server.db.query(`SELECT 1 FROM quire.webhook_events WHERE "tenant" = $1`, [name]);
    expect((await events()).rows).toHaveLength(1);
    const refused = await quire(['tenant', 'drop', name]);
    expect(refused.code).not.toBe(0);
    expect(refused.json).toMatchObject({ error: { exc_type: 'UsageError' } });
    const dropped = await quire(['tenant', 'drop', name, '--yes']);
    expect(dropped.code).toBe(0);
    expect(dropped.json).toEqual({ dropped: name });
    const ms = await pollUntil(
      async () => (await rawRequest(server.port, 'GET', '/api/resource/ToDo', { Host: `${name}.localhost`, Authorization: auth })).status === 404,
      5_000,
    );
    expect(ms).toBeLessThan(5_000);
    const gone = await rawRequest(server.port, 'GET', '/api/resource/ToDo', { Host: `${name}.localhost`, Authorization: auth });
    expect({ status: gone.status, exc_type: gone.body?.exc_type }).toEqual({ status: 404, exc_type: 'DoesNotExistError' });
    const { rows } = await server.db.query(`SELECT 1 FROM information_schema.schemata WHERE schema_name = $1`, [`t_${name}`]);
    expect(rows).toEqual([]);
    expect((await events()).rows).toEqual([]);
    expect((await quire(['tenant', 'list'])).json.tenants.map((x: { name: string }) => x.name)).not.toContain(name);
  });

  it('`migrate` is idempotent: a second run reports no changes', async () => {
    await server.tenant();
    const first = await quire(['migrate']);
    expect(first.code).toBe(0);
    expect(first.json).toHaveProperty('platform');
    expect(first.json).toHaveProperty('tenants');
    const second = await quire(['migrate']);
    expect(second.code).toBe(0);
    expect(second.json.platform).toEqual([]);
    const changed = Object.entries(second.json.tenants as Record<string, string[]>).filter(([, c]) => c.length > 0);
    expect(changed).toEqual([]);
    expect(Object.keys(second.json.tenants).length).toBeGreaterThan(0);
  });
});
