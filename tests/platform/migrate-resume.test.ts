import { loadApps } from '@quire/apps';
import { frappeApp } from '@quire/frappe';
import { releaseOf, releaseStatus } from '@quire/tenancy';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  blockTenant,
  eventually,
  freshDatabasePerTest,
  migrateJson,
  runQuire,
  startQuire,
  statuses,
  tenantsAtRelease,
  tenantsFromPreviousRelease,
  waitingLocks,
} from './migrate-support';

/**
 * `quire migrate` keeps each finished tenant: killed halfway (a Job's pod evicted, a deadline
 * hit), the next run does only the tenants not yet at the release.
 */

const TENANTS = ['alpha', 'bravo', 'charlie'];
let release: string;
const databases = freshDatabasePerTest();

beforeAll(async () => {
  release = releaseOf(await loadApps([frappeApp]));
});

describe('a killed quire migrate', () => {
  it('keeps the tenants it finished; the next run migrates only the rest', { timeout: 120_000 }, async () => {
    const fresh = await databases.create();
    await tenantsFromPreviousRelease(fresh, TENANTS);

    // Held at bravo by the test's lock, so exactly alpha is done when the process is killed.
    const blocker = await blockTenant(fresh, 'bravo');
    const run = startQuire(['migrate'], fresh.url);
    try {
      await run.process.waitFor(/^alpha: migrated \(ToDo\)$/m);
      await eventually(async () => (await waitingLocks(fresh)).includes('relation'), 'the run to wait at tenant bravo');
      expect(await run.process.stop('SIGKILL')).toBeNull();
    } finally {
      await blocker.release();
    }
    expect(run.process.stdout()).not.toMatch(/^(bravo|charlie):/m);
    expect(await tenantsAtRelease(fresh, release)).toEqual(['alpha']);
    expect(await releaseStatus(fresh.db, release)).toEqual({ platformReady: true, releaseComplete: false, pendingTenants: 2 });

    const again = await runQuire(['migrate', '--json'], fresh.url);
    expect(again.code, again.stdout + again.stderr).toBe(0);
    expect(statuses(migrateJson(again))).toEqual({ alpha: 'already at this release', bravo: 'migrated', charlie: 'migrated' });
    expect(await tenantsAtRelease(fresh, release)).toEqual(TENANTS);
    expect(await releaseStatus(fresh.db, release)).toEqual({ platformReady: true, releaseComplete: true, pendingTenants: 0 });
  });
});
