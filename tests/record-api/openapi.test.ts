import path from 'node:path';
import { validate } from '@readme/openapi-parser';
import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../support/process';
import { call, startTestServer, type CallResult, type TestServer, type TestTenant } from '../support/server';
import { createUser } from '../platform/helpers';

/**
 * GET /api/openapi.json: the tenant's API described as OpenAPI 3.1 from its DocTypes and
 * whitelisted methods, as the caller may use it. The description validates as OpenAPI 3.1, and
 * every operation it describes for a DocType made at run time answers what its schema says.
 */

const LAB_APP = path.join(ROOT, 'tests/fixtures/apps/lab_app');
let server: TestServer;

beforeAll(async () => {
  server = await startTestServer({ apps: [LAB_APP] });
});
afterAll(() => server.close());

type Spec = Record<string, any>;

const GIZMO_PART = {
  name: 'Gizmo Part',
  module: 'Custom',
  istable: 1,
  fields: [
    { fieldname: 'part', fieldtype: 'Data', label: 'Part', reqd: 1 },
    { fieldname: 'qty', fieldtype: 'Int', label: 'Quantity' },
  ],
};

const GIZMO = {
  name: 'Gizmo',
  module: 'Custom',
  description: 'A thing made of parts',
  fields: [
    { fieldname: 'title', fieldtype: 'Data', label: 'Title', reqd: 1, length: 80 },
    { fieldname: 'kind', fieldtype: 'Select', label: 'Kind', options: 'Small\nLarge' },
    { fieldname: 'keeper', fieldtype: 'Link', label: 'Keeper', options: 'User' },
    { fieldname: 'built_on', fieldtype: 'Date', label: 'Built On' },
    { fieldname: 'checked_at', fieldtype: 'Datetime', label: 'Checked At' },
    { fieldname: 'opens_at', fieldtype: 'Time', label: 'Opens At' },
    { fieldname: 'active', fieldtype: 'Check', label: 'Active' },
    { fieldname: 'weight', fieldtype: 'Float', label: 'Weight' },
    { fieldname: 'settings', fieldtype: 'JSON', label: 'Settings' },
    { fieldname: 'code', fieldtype: 'Data', label: 'Code', read_only: 1 },
    { fieldname: 'secret_note', fieldtype: 'Small Text', label: 'Secret Note', permlevel: 1 },
    { fieldname: 'parts', fieldtype: 'Table', label: 'Parts', options: 'Gizmo Part' },
  ],
  permissions: [
    { role: 'System Manager', read: 1, write: 1, create: 1, delete: 1 },
    { role: 'System Manager', permlevel: 1, read: 1, write: 1 },
    { role: 'Gizmo Viewer', read: 1, write: 0, create: 0, delete: 0 },
  ],
};

async function tenantWithGizmos(): Promise<TestTenant> {
  const t = await server.tenant('oas');
  expect((await t.call('POST', '/api/resource/Role', { json: { role_name: 'Gizmo Viewer' } })).status).toBe(200);
  for (const def of [GIZMO_PART, GIZMO]) {
    const res = await t.call('POST', '/api/resource/DocType', { json: def });
    expect(res.status, res.text).toBe(200);
  }
  return t;
}

async function specOf(t: TestTenant, auth?: string): Promise<Spec> {
  const res = await call(server.url, t.name, 'GET', '/api/openapi.json', auth === undefined ? { auth: t.auth } : auth === '' ? {} : { auth });
  expect(res.status, res.text).toBe(200);
  return res.body as Spec;
}

/** A validator of response bodies against the description's schemas (JSON Schema 2020-12, formats checked). */
function responseValidator(spec: Spec) {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  ajv.addSchema({ $id: 'spec', components: spec.components });
  /** `$ref`s into the description, rewritten to the schema added above. */
  const rebase = (schema: unknown): unknown => JSON.parse(JSON.stringify(schema).replace(/"#\/components\//g, '"spec#/components/'));
  return (res: CallResult, operation: Spec): string[] => {
    let described = operation.responses[String(res.status)];
    if (!described) return [`status ${res.status} is not described: ${res.text}`];
    if (described.$ref) described = spec.components.responses[(described.$ref as string).split('/').pop()!];
    const schema = described.content?.['application/json']?.schema;
    if (!schema) return res.text === '' ? [] : [`status ${res.status} has no described body`];
    const check = ajv.compile(rebase(schema) as object);
    return check(res.body) ? [] : (check.errors ?? []).map((e) => `${e.instancePath} ${e.message ?? ''} ${JSON.stringify(e.params)}`);
  };
}

describe('GET /api/openapi.json', () => {
  it('validates as OpenAPI 3.1, and maps each fieldtype precisely', async () => {
    const t = await tenantWithGizmos();
    const spec = await specOf(t);
    expect(spec.openapi).toBe('3.1.0');
    const result = await validate(structuredClone(spec) as never);
    expect(result.valid, JSON.stringify(result, null, 1).slice(0, 3000)).toBe(true);

    const gizmo = spec.components.schemas.Gizmo;
    const p = gizmo.properties;
    expect(p.title).toMatchObject({ type: 'string', maxLength: 80 });
    expect(p.kind).toMatchObject({ type: 'string', enum: ['Small', 'Large', ''] });
    expect(p.keeper).toMatchObject({ type: 'string', 'x-frappe-link': 'User' });
    expect(p.keeper.description).toContain('User');
    expect(p.built_on).toMatchObject({ type: 'string', format: 'date' });
    expect(p.checked_at.pattern).toBeTruthy();
    expect(p.active).toMatchObject({ type: 'integer', enum: [0, 1] });
    expect(p.weight).toMatchObject({ type: 'number' });
    expect(p.code).toMatchObject({ readOnly: true });
    expect(p.parts).toMatchObject({ type: 'array', items: { $ref: '#/components/schemas/Gizmo_Part' } });
    expect(gizmo.required).toEqual(expect.arrayContaining(['name', 'title', 'parts', 'active', 'weight']));
    expect(gizmo.required).not.toContain('kind');
    expect(spec.components.schemas.Gizmo_Part.properties.part).toMatchObject({ type: 'string' });
    expect(spec.components.schemas.Gizmo_Write.properties.code).toBeUndefined();
    // The administrator sees the permlevel-1 field; the error bodies and auth schemes are there.
    expect(p.secret_note).toBeTruthy();
    expect(Object.keys(spec.components.securitySchemes).sort()).toEqual(['basic', 'oauth2', 'openIdConnect', 'sid', 'token']);
    expect(spec.components.securitySchemes.openIdConnect.openIdConnectUrl).toMatch(/\/\.well-known\/openid-configuration$/);
    expect(spec.components.securitySchemes.oauth2.flows.clientCredentials.scopes).toHaveProperty('gizmo:read');
    expect(spec.paths['/api/resource/Gizmo'].get.parameters.find((x: Spec) => x.name === 'filters').content['application/json']).toBeTruthy();
  });

  it('every operation described for a DocType made at run time answers as described (v1 and v2)', async () => {
    const t = await tenantWithGizmos();
    const spec = await specOf(t);
    const check = responseValidator(spec);
    const body = {
      title: 'Clock',
      kind: 'Small',
      keeper: 'Administrator',
      built_on: '2026-01-02',
      checked_at: '2026-01-02 03:04:05',
      opens_at: '08:30:00',
      active: 1,
      weight: 1.5,
      settings: { a: [1, 2] },
      secret_note: 'hush',
      parts: [{ part: 'spring', qty: 2 }],
    };
    const seen: string[] = [];
    for (const version of ['v1', 'v2']) {
      const base = version === 'v1' ? '/api/resource/Gizmo' : '/api/v2/document/Gizmo';
      const collection = spec.paths[base];
      const item = spec.paths[`${base}/{name}`];
      const send = async (method: string, url: string, operation: Spec, options: Record<string, unknown> = {}) => {
        const res = await t.call(method, url, options);
        expect(check(res, operation), `${method} ${url}`).toEqual([]);
        seen.push(operation.operationId as string);
        return res;
      };
      const created = await send('POST', base, collection.post, { json: body });
      expect(created.status).toBe(200);
      const name = created.body.data.name as string;
      const etag = created.headers.get('etag')!;
      await send('GET', `${base}/${name}`, item.get);
      expect((await send('GET', `${base}/${name}`, item.get, { headers: { 'If-None-Match': etag } })).status).toBe(304);
      await send('GET', base, collection.get, {
        query: { fields: '["name","title","kind","checked_at","active"]', filters: '[["kind","=","Small"]]', order_by: 'creation asc' },
      });
      await send('PUT', `${base}/${name}`, item.put, { json: { title: 'Clock 2' } });
      if (item.patch) await send('PATCH', `${base}/${name}`, item.patch, { json: { weight: 2 }, headers: { 'If-Match': etag } }); // stale: 412, described
      expect((await send('GET', `${base}/no-such-gizmo`, item.get)).status).toBe(404);
      expect((await send('POST', base, collection.post, { json: { kind: 'Small' } })).status).toBe(417);
      await send('DELETE', `${base}/${name}`, item.delete);
    }
    await (async () => {
      const meta = spec.paths['/api/v2/doctype/Gizmo/meta'].get;
      const res = await t.call('GET', '/api/v2/doctype/Gizmo/meta');
      expect(check(res, meta)).toEqual([]);
      const count = spec.paths['/api/v2/doctype/Gizmo/count'].get;
      expect(check(await t.call('GET', '/api/v2/doctype/Gizmo/count'), count)).toEqual([]);
    })();
    // Every operation of the Gizmo paths was sent.
    const described = Object.entries(spec.paths as Record<string, Spec>)
      .filter(([p]) => /\/(resource|document)\/Gizmo(\/|$)/.test(p))
      .flatMap(([, ops]) => Object.values(ops).map((o: Spec) => o.operationId as string));
    expect([...new Set(seen)].sort()).toEqual([...new Set(described)].sort());
  });

  it('a DocType created after the first fetch appears in the next one', async () => {
    const t = await tenantWithGizmos();
    const before = await specOf(t);
    expect(before.paths['/api/resource/Widget']).toBeUndefined();
    const made = await t.call('POST', '/api/resource/DocType', {
      json: { name: 'Widget', module: 'Custom', fields: [{ fieldname: 'size', fieldtype: 'Int' }] },
    });
    expect(made.status).toBe(200);
    const after = await specOf(t);
    expect(after.paths['/api/resource/Widget'].get).toBeTruthy();
    expect(after.components.schemas.Widget.properties.size).toMatchObject({ type: 'integer' });
  });

  it('describes the API as the caller may use it: only DocTypes they may read, without fields they may not see, only rights they hold', async () => {
    const t = await tenantWithGizmos();
    const viewer = await createUser(server, t, 'viewer@example.com', ['Gizmo Viewer']);
    const spec = await specOf(t, viewer.auth);
    expect(spec.components.schemas.Gizmo.properties.secret_note).toBeUndefined();
    expect(spec.components.schemas.Gizmo.properties.title).toBeTruthy();
    expect(Object.keys(spec.paths['/api/resource/Gizmo'])).toEqual(['get']); // no create
    expect(Object.keys(spec.paths['/api/resource/Gizmo/{name}'])).toEqual(['get']); // no update, no delete
    expect(spec.paths['/api/resource/DocType']).toBeUndefined();
    expect(spec.paths['/api/resource/Webhook']).toBeUndefined();

    const guest = await specOf(t, '');
    expect(Object.keys(guest.paths).filter((p) => p.startsWith('/api/resource/'))).toEqual([]);
    expect(guest.paths['/api/method/ping'].get.security).toEqual([{}]);
    expect(guest.paths['/api/method/lab_app.api.hello']).toBeUndefined(); // not for Guests
    expect((await validate(structuredClone(guest) as never)).valid).toBe(true);
  });

  it('a method that declares its arguments is described by them, and its calls are checked against them', async () => {
    const t = await server.tenant('oas');
    const spec = await specOf(t);
    const check = responseValidator(spec);
    const add = spec.paths['/api/method/lab_app.api.add'];
    expect(add.get.parameters.map((x: Spec) => [x.name, x.required, x.schema.type])).toEqual([
      ['a', true, 'number'],
      ['b', false, 'number'],
    ]);
    expect(add.post.requestBody.content['application/json'].schema.properties.a.type).toBe('number');
    expect(add.get.responses['200'].content['application/json'].schema.properties.message).toEqual({ type: 'number' });
    const ok = await t.call('GET', '/api/method/lab_app.api.add', { query: { a: 2, b: 3 } });
    expect(ok.body).toEqual({ message: 5 });
    expect(check(ok, add.get)).toEqual([]);
    const refused = await t.call('GET', '/api/method/lab_app.api.add', { query: { a: 'two' } });
    expect([refused.status, refused.body.exc_type]).toEqual([417, 'ValidationError']);
    expect(check(refused, add.get)).toEqual([]);
    const v2 = await t.call('POST', '/api/v2/method/lab_app.api.add', { json: { a: 1 } });
    expect(v2.body).toEqual({ data: 1 });
    expect(check(v2, spec.paths['/api/v2/method/lab_app.api.add'].post)).toEqual([]);
    // A method without a declared schema takes free-form arguments.
    expect(spec.paths['/api/method/lab_app.api.echo'].post.requestBody.content['application/json'].schema).toMatchObject({
      type: 'object',
      additionalProperties: true,
    });
  });

  it("describes frappe.handler's commands once, at the bare paths clients call, beside frappe.ping", async () => {
    const t = await server.tenant('oas');
    const spec = await specOf(t);
    const paths: Spec = spec.paths;
    const verbs = ['get', 'post', 'put', 'delete'];
    for (const prefix of ['/api/method/', '/api/v2/method/']) {
      for (const [cmd, described] of Object.entries({ ping: verbs, version: verbs, login: verbs, logout: verbs, upload_file: ['post'] })) {
        expect(Object.keys(paths[`${prefix}${cmd}`] ?? {}), `${prefix}${cmd}`).toEqual(described);
        expect(paths[`${prefix}frappe.handler.${cmd}`], `${prefix}frappe.handler.${cmd}`).toBeUndefined();
      }
    }
    expect(Object.keys(paths).filter((p) => p.includes('frappe.handler'))).toEqual([]);
    expect(paths['/api/method/ping'].get).toMatchObject({ summary: 'Answers pong: the API is up', tags: ['frappe.handler'] });
    expect(paths['/api/method/login'].post.summary).toBe('frappe.handler.login');
    expect(paths['/api/v2/method/upload_file'].post.summary).toBe('frappe.handler.upload_file');
    // frappe/__init__'s ping stays at its own path, and no two operations share an id.
    expect(paths['/api/method/frappe.ping'].get).toMatchObject({ summary: 'Answers pong: the API is up', tags: ['frappe'] });
    const ids = Object.values(paths).flatMap((item: Spec) => Object.values(item).map((op: Spec) => op.operationId as string));
    expect(ids.length - new Set(ids).size).toBe(0);
    expect((await validate(structuredClone(spec) as never)).valid).toBe(true);
    // The bare paths answer as described.
    const check = responseValidator(spec);
    const pong = await t.call('GET', '/api/method/ping');
    expect(pong.body).toEqual({ message: 'pong' });
    expect(check(pong, paths['/api/method/ping'].get)).toEqual([]);
    const v2 = await t.call('POST', '/api/v2/method/ping');
    expect(v2.body).toEqual({ data: 'pong' });
    expect(check(v2, paths['/api/v2/method/ping'].post)).toEqual([]);
  });

  it('/api/docs is the API reference page, served from our own assets', async () => {
    const t = await server.tenant('oas');
    const res = await fetch(new URL('/api/docs', server.url), { headers: { 'X-Frappe-Site-Name': t.name } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    const html = await res.text();
    expect(html).toContain('/assets/desk/');
    expect(html).not.toMatch(/https?:\/\//);
  });
});
