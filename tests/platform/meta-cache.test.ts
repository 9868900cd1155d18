import { allIn } from '@quire/db';
import { MetaRegistry } from '@quire/meta';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer, type TestTenant } from '../support/server';

/**
 * Metadata with thousands of tenants: loaded on a tenant's first request, bounded in count, dropped
 * when idle, and one parsed copy of each standard DocType shared by every tenant of a release.
 */

let server: TestServer;
let tenants: TestTenant[];
beforeAll(async () => {
  server = await startTestServer();
  tenants = [await server.tenant('mc'), await server.tenant('mc'), await server.tenant('mc')];
});
afterAll(() => server.close());

const ref = (t: TestTenant) => ({ name: t.name, schema: t.schema });

describe('the metadata cache', () => {
  it('keeps at most maxTenants tenants, least recently used dropped first', async () => {
    const metas = new MetaRegistry(allIn(server.db), { maxTenants: 2 });
    for (const t of tenants) await metas.get(ref(t));
    expect(metas.size).toBe(2);
    expect(metas.peek(ref(tenants[0]!))).toBeUndefined();
    expect(metas.peek(ref(tenants[2]!))).toBeDefined();
    // Dropped only means reloaded on the next use.
    expect((await metas.get(ref(tenants[0]!))).require('ToDo').name).toBe('ToDo');
  });

  it('drops tenants unused for idleMs, and keeps the ones in use', async () => {
    const metas = new MetaRegistry(allIn(server.db), { idleMs: 300 });
    for (const t of tenants) await metas.get(ref(t));
    await new Promise((r) => setTimeout(r, 400));
    const inUse = await metas.get(ref(tenants[1]!));
    metas.purgeIdle();
    expect(metas.size).toBe(1);
    expect(metas.peek(ref(tenants[1]!))).toBe(inUse);
  });

  it('shares one parsed definition of each standard DocType between tenants of a release', async () => {
    const metas = new MetaRegistry(allIn(server.db));
    const [a, b] = [await metas.get(ref(tenants[0]!)), await metas.get(ref(tenants[1]!))];
    expect(a.require('ToDo')).not.toBe(b.require('ToDo')); // each tenant's own tables
    expect(a.require('ToDo').table).not.toBe(b.require('ToDo').table);
    expect(a.require('ToDo').definition).toBe(b.require('ToDo').definition);
    expect(a.require('User').columns).toBe(b.require('User').columns);
  });

  it('does not share a DocType one tenant changed', async () => {
    const [t] = tenants;
    const res = await t!.call('POST', '/api/resource/DocType', {
      json: { name: 'Gadget', module: 'Custom', custom: 1, fields: [{ fieldname: 'title', fieldtype: 'Data', label: 'Title' }] },
    });
    expect(res.status).toBe(200);
    const metas = new MetaRegistry(allIn(server.db));
    const [a, b] = [await metas.get(ref(t!)), await metas.get(ref(tenants[1]!))];
    expect(a.get('Gadget')).toBeDefined();
    expect(b.get('Gadget')).toBeUndefined();
    expect(a.require('ToDo').definition).toBe(b.require('ToDo').definition);
  });
});
