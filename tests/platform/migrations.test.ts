import { qualified } from '@quire/db';
import { migrateTenant, tenantMigrations } from '@quire/tenancy';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server';

/** Tenant schemas are versioned by the same migration runner as the platform schema. */

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server.close();
});

async function appliedIds(schema: string): Promise<string[]> {
  const { rows } = await server.db.query<{ id: string }>(`SELECT "id" FROM ${qualified(schema, 'migrations')} ORDER BY "id"`);
  return rows.map((r) => r.id);
}

function migrate(name: string): Promise<string[]> {
  const tenant = server.platform.tenants.get(name)!;
  const { changes, files, secrets, apps } = server.platform;
  return migrateTenant(server.db, tenant, apps, { changes, files, secrets, lockMigrations: true });
}

describe('tenant migrations', () => {
  it('a new tenant records every tenant migration as applied, and migrating it again changes nothing', async () => {
    const t = await server.tenant('mig');
    expect(await appliedIds(t.schema)).toEqual(tenantMigrations.map((m) => m.id).sort());
    expect(await migrate(t.name)).toEqual([]);
  });

  it('a tenant installed before migrations were versioned adopts the baseline without losing data', async () => {
    const t = await server.tenant('mig');
    const todo = await t.call('POST', '/api/resource/ToDo', { json: { description: 'kept' } });
    expect(todo.status).toBe(200);
    await server.db.query(`DROP TABLE ${qualified(t.schema, 'migrations')}`);

    expect(await migrate(t.name)).toEqual(tenantMigrations.map((m) => m.id).sort());
    expect(await appliedIds(t.schema)).toEqual(tenantMigrations.map((m) => m.id).sort());
    const again = await t.call('GET', `/api/resource/ToDo/${todo.body.data.name}`);
    expect(again.body.data.description).toBe('kept');
  });
});
