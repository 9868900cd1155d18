import type { LoadedApps } from '@quire/apps';
import { ident } from '@quire/db';
import { insertDoc, updateDoc, type DocContext } from '@quire/documents';
import { buildTenantMeta } from '@quire/meta';
import { makePrincipal } from '@quire/permissions';
import { installTenant, migrateTenant } from '@quire/tenancy';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { columnsOf } from '../platform/helpers';
import { startTestServer, uniqueName, type TestServer } from '../support/server';

/**
 * A tenant installed by the release before a document's history (no Version, no Comment) gets both
 * from `quire migrate`'s per-tenant step, and a tracked ToDo saved afterwards records its Version.
 */

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
}, 60_000);
afterAll(async () => {
  await server.close();
});

const NEW_DOCTYPES = new Set(['Version', 'Comment']);

function previousRelease(apps: LoadedApps): LoadedApps {
  return { ...apps, doctypes: apps.doctypes.filter((d) => !NEW_DOCTYPES.has(d.name)) };
}

describe('migrating a tenant from before Versions and Comments', () => {
  it('adds the Version and Comment DocTypes and tables; saves before the migration record nothing, saves after it do', async () => {
    const { db, apps, changes, files, secrets } = server.platform;
    const name = uniqueName('hm');
    const tenant = { name, schema: `t_${name}` };
    const services = { changes, files, secrets, lockMigrations: true };
    const before = previousRelease(apps);
    /** The platform's context for this tenant as a release with these DocTypes runs it. */
    const contextOf = (release: LoadedApps): DocContext => ({
      db,
      tenant,
      meta: buildTenantMeta(tenant.schema, release.doctypes),
      principal: makePrincipal('Administrator', ['Administrator', 'System Manager']),
      controllers: apps.controllers,
      changes,
      files,
      secrets,
    });
    await installTenant(db, tenant, before, services);
    try {
      expect(await columnsOf(server, tenant.schema, 'tabVersion')).toEqual({});
      expect(await columnsOf(server, tenant.schema, 'tabComment')).toEqual({});
      // A tracked ToDo saved while there is no Version DocType saves, recording nothing.
      const todo = await insertDoc(contextOf(before), 'ToDo', { description: 'Older than history' });
      await updateDoc(contextOf(before), 'ToDo', todo.name, { priority: 'High' });

      const changed = await migrateTenant(db, tenant, apps, services);

      expect(changed).toEqual(expect.arrayContaining(['Version', 'Comment']));
      expect(Object.keys(await columnsOf(server, tenant.schema, 'tabVersion'))).toEqual(expect.arrayContaining(['ref_doctype', 'docname', 'data']));
      expect(Object.keys(await columnsOf(server, tenant.schema, 'tabComment'))).toEqual(
        expect.arrayContaining([
          'comment_type',
          'comment_email',
          'comment_by',
          'reference_doctype',
          'reference_name',
          'reference_owner',
          'content',
          'published',
          'seen',
          'ip_address',
        ]),
      );
      const { rows } = await db.query(`SELECT "name" FROM ${ident(tenant.schema)}."tabDocType" WHERE "name" IN ('Version', 'Comment') ORDER BY "name"`);
      expect(rows).toEqual([{ name: 'Comment' }, { name: 'Version' }]);
      expect(await migrateTenant(db, tenant, apps, services)).toEqual([]);

      await updateDoc(contextOf(apps), 'ToDo', todo.name, { priority: 'Low' });
      const versions = await db.query<{ data: string }>(`SELECT "data" FROM ${ident(tenant.schema)}."tabVersion" WHERE "docname" = $1`, [todo.name]);
      expect(versions.rows.map((v) => JSON.parse(v.data).changed)).toEqual([[['priority', 'High', 'Low']]]);
    } finally {
      await db.query(`DROP SCHEMA ${ident(tenant.schema)} CASCADE`);
    }
  });
});
