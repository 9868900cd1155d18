import { loadApps } from '@quire/apps';
import { frappeApp } from '@quire/frappe';
import { releaseOf, releaseStatus } from '@quire/tenancy';
import { describe, expect, it } from 'vitest';
import {
  blockTenant,
  eventually,
  freshDatabasePerTest,
  migrateJson,
  startQuire,
  statuses,
  tenantsAtRelease,
  tenantsFromPreviousRelease,
  waitingLocks,
} from './migrate-support';

/**
 * Two `quire migrate` runs at once (a Helm hook Job retried while its first pod still runs, or a
 * plain Job next to an old one): the second waits on the global advisory lock for the first,
 * then finds every tenant already at the release. Both exit 0.
 */

const TENANTS = ['alpha', 'bravo', 'charlie'];
const databases = freshDatabasePerTest();

describe('concurrent quire migrate', () => {
  it('the second run waits for the first, then has nothing to do; the release is complete', { timeout: 120_000 }, async () => {
    const fresh = await databases.create();
    await tenantsFromPreviousRelease(fresh, TENANTS);
    const release = releaseOf(await loadApps([frappeApp]));
    expect(await releaseStatus(fresh.db, release)).toEqual({ platformReady: true, releaseComplete: false, pendingTenants: 3 });

    // Both runs must be in flight together: the first is held at its first tenant by a lock of the
    // test's, and the test goes on only once the other is seen waiting for the global lock.
    const blocker = await blockTenant(fresh, 'alpha');
    const runs = [startQuire(['migrate', '--json'], fresh.url), startQuire(['migrate', '--json'], fresh.url)];
    try {
      await eventually(async () => {
        const waiting = await waitingLocks(fresh);
        return waiting.includes('relation') && waiting.includes('advisory');
      }, 'one run blocked at tenant alpha and the other waiting for the migrate lock');
      expect(await tenantsAtRelease(fresh, release)).toEqual([]);
    } finally {
      await blocker.release();
    }
    const [first, second] = await Promise.all(runs.map((r) => r.finished));
    expect(first!.code, first!.stdout + first!.stderr).toBe(0);
    expect(second!.code, second!.stdout + second!.stderr).toBe(0);

    const reports = [migrateJson(first!), migrateJson(second!)];
    const worker = reports.find((r) => Object.values(r.tenants).some((t) => t.status === 'migrated'));
    const waiter = reports.find((r) => r !== worker);
    expect(worker, JSON.stringify(reports)).toBeDefined();
    expect(statuses(worker!)).toEqual({ alpha: 'migrated', bravo: 'migrated', charlie: 'migrated' });
    expect(worker!.tenants.alpha!.changes).toEqual(['ToDo']);
    expect(statuses(waiter!)).toEqual({ alpha: 'already at this release', bravo: 'already at this release', charlie: 'already at this release' });
    expect(waiter!.platform).toEqual([]);
    expect(reports.map((r) => r.release)).toEqual([release, release]);

    expect(await tenantsAtRelease(fresh, release)).toEqual(TENANTS);
    expect(await releaseStatus(fresh.db, release)).toEqual({ platformReady: true, releaseComplete: true, pendingTenants: 0 });
    const { rows } = await fresh.db.query<{ completed: boolean }>(`SELECT "completed_at" IS NOT NULL AS "completed" FROM quire.releases WHERE "release" = $1`, [
      release,
    ]);
    expect(rows).toEqual([{ completed: true }]);
  });
});
