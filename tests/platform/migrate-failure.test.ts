import { loadApps } from '@quire/apps';
import { frappeApp } from '@quire/frappe';
import { releaseOf, releaseStatus } from '@quire/tenancy';
import { beforeAll, describe, expect, it } from 'vitest';
import { errorJson, freshDatabasePerTest, migrateJson, runQuire, statuses, tenantsAtRelease, tenantsFromPreviousRelease } from './migrate-support';

/**
 * One tenant's failure stops `quire migrate` (the Job fails, naming the tenant); the tenants
 * before it stay at the release, and once the cause is fixed the next run does the rest.
 */

const TENANTS = ['alpha', 'bravo', 'charlie'];
let release: string;
const databases = freshDatabasePerTest();

beforeAll(async () => {
  release = releaseOf(await loadApps([frappeApp]));
});

describe('a tenant whose migration fails', () => {
  it('stops the run with exit 1 naming the tenant; the tenants before it stay recorded', { timeout: 120_000 }, async () => {
    const fresh = await databases.create();
    await tenantsFromPreviousRelease(fresh, TENANTS);
    // A schema the migration cannot work with: the table of its DocTypes is gone.
    await fresh.db.query(`ALTER TABLE t_bravo."tabDocType" RENAME TO "tabDocType_moved"`);

    const text = await runQuire(['migrate'], fresh.url);
    expect(text.code).toBe(1);
    expect(text.stdout).toMatch(/^alpha: migrated \(ToDo\)$/m);
    expect(text.stdout).not.toMatch(/^(bravo|charlie):/m);
    expect(text.stderr).toMatch(/^quire: Tenant bravo failed to migrate to release [0-9a-f]{64}: relation "t_bravo.tabDocType" does not exist/m);
    expect(await tenantsAtRelease(fresh, release)).toEqual(['alpha']);
    expect(await releaseStatus(fresh.db, release)).toEqual({ platformReady: true, releaseComplete: false, pendingTenants: 2 });

    // With --json the failure is still one JSON object on stdout, naming the tenant.
    const json = await runQuire(['migrate', '--json'], fresh.url);
    expect(json.code).toBe(1);
    const { error } = errorJson(json);
    expect(error.exc_type).toBe('TenantMigrationError');
    expect(error.message).toContain('Tenant bravo failed to migrate');
    // The report comes with it: what was done before the failure, and the failure.
    expect(json.json).toMatchObject({ release, tenants: { alpha: { status: 'already at this release' } }, failed: { tenant: 'bravo' } });

    // Once the cause is fixed, the next run finishes the release.
    await fresh.db.query(`ALTER TABLE t_bravo."tabDocType_moved" RENAME TO "tabDocType"`);
    const fixed = await runQuire(['migrate', '--json'], fresh.url);
    expect(fixed.code, fixed.stdout + fixed.stderr).toBe(0);
    expect(statuses(migrateJson(fixed))).toEqual({ alpha: 'already at this release', bravo: 'migrated', charlie: 'migrated' });
    expect(await releaseStatus(fresh.db, release)).toEqual({ platformReady: true, releaseComplete: true, pendingTenants: 0 });
  });
});
