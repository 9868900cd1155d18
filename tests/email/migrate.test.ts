import type { LoadedApps } from '@quire/apps';
import { ident } from '@quire/db';
import { installTenant, migrateTenant } from '@quire/tenancy';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { columnsOf } from '../platform/helpers';
import { startTestServer, uniqueName, type TestServer } from '../support/server';

/**
 * A tenant installed by the release before outgoing email (no Email Account, an Email Queue without
 * `retry`, `email_account` and `message_id`) gets them from `quire migrate`'s per-tenant step, the
 * same way every new standard DocType reaches existing tenants, and keeps its queued emails.
 */

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
}, 60_000);
afterAll(async () => {
  await server.close();
});

const NEW_QUEUE_FIELDS = new Set(['retry', 'email_account', 'message_id']);

/** The loaded apps as the release before this one had them. */
function previousRelease(apps: LoadedApps): LoadedApps {
  return {
    ...apps,
    doctypes: apps.doctypes
      .filter((d) => d.name !== 'Email Account')
      .map((d) => (d.name === 'Email Queue' ? { ...d, fields: d.fields.filter((f) => !NEW_QUEUE_FIELDS.has(f.fieldname)) } : d)),
  };
}

describe('migrating a tenant from before outgoing email', () => {
  it('adds the Email Account DocType and table and Email Queue’s new columns; queued rows are kept with retry 0', async () => {
    const { db, apps, changes, files, secrets } = server.platform;
    const name = uniqueName('em');
    const tenant = { name, schema: `t_${name}` };
    const services = { changes, files, secrets, lockMigrations: true };
    await installTenant(db, tenant, previousRelease(apps), services);
    try {
      expect(await columnsOf(server, tenant.schema, 'tabEmail Account')).toEqual({});
      await db.query(`INSERT INTO ${ident(tenant.schema)}."tabEmail Queue" ("name", "recipients", "status") VALUES ('old-1', 'a@example.com', 'Not Sent')`);

      const changed = await migrateTenant(db, tenant, apps, services);

      expect(changed).toEqual(expect.arrayContaining(['Email Account', 'Email Queue']));
      expect(Object.keys(await columnsOf(server, tenant.schema, 'tabEmail Account'))).toEqual(
        expect.arrayContaining(['email_id', 'smtp_server', 'smtp_port', 'use_tls', 'use_ssl_for_outgoing', 'password', 'default_outgoing']),
      );
      expect(Object.keys(await columnsOf(server, tenant.schema, 'tabEmail Queue'))).toEqual(expect.arrayContaining([...NEW_QUEUE_FIELDS]));
      const { rows } = await db.query(`SELECT "name", "status", "retry", "email_account" FROM ${ident(tenant.schema)}."tabEmail Queue"`);
      expect(rows).toEqual([{ name: 'old-1', status: 'Not Sent', retry: 0, email_account: null }]);
      // And the next migration has nothing left to do.
      expect(await migrateTenant(db, tenant, apps, services)).toEqual([]);
    } finally {
      await db.query(`DROP SCHEMA ${ident(tenant.schema)} CASCADE`);
    }
  });
});
