import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadApps } from '@quire/apps';
import { PgliteDatabase, runMigrations } from '@quire/db';
import { frappeApp } from '@quire/frappe';
import { PLATFORM_SCHEMA, platformMigrations, platformSchemaReady, releaseOf, releaseStatus } from '@quire/tenancy';
import { beforeAll, describe, expect, it } from 'vitest';
import { spawnQuire } from '../support/process';
import { freshDatabasePerTest, migrateJson, runQuire, statuses, type QuireRun } from './migrate-support';

/**
 * The release fingerprint and the readiness question built on it: is the platform schema at this
 * build's migrations, and is every tenant at this build's release.
 */

const LAB_APP = path.resolve(import.meta.dirname, '../fixtures/apps/lab_app');
let release: string;
const databases = freshDatabasePerTest();

beforeAll(async () => {
  release = releaseOf(await loadApps([frappeApp]));
});

describe('releaseOf', () => {
  it('is a sha256 that is the same for the same apps and differs when an app adds DocTypes', async () => {
    expect(release).toMatch(/^[0-9a-f]{64}$/);
    expect(releaseOf(await loadApps([frappeApp]))).toBe(release);
    expect(releaseOf(await loadApps([frappeApp, { name: 'lab_app', root: LAB_APP }]))).not.toBe(release);
  });
});

describe('releaseStatus', () => {
  it('moves from no schema, to a previous release, to complete, and back to pending', { timeout: 120_000 }, async () => {
    const fresh = await databases.create();
    const { db } = fresh;

    // Nothing at all yet: not ready, and no error.
    expect(await releaseStatus(db, release)).toEqual({ platformReady: false, releaseComplete: false, pendingTenants: 0 });
    expect(await platformSchemaReady(db)).toBe(false);

    // The platform schema of the release before this one (no release bookkeeping), with a tenant.
    const previous = platformMigrations.filter((m) => m.id !== '0004_release_progress');
    await runMigrations(db, PLATFORM_SCHEMA, previous, { lock: true });
    await db.query(`INSERT INTO quire.tenants ("name", "schema") VALUES ('old', 't_old')`);
    expect(await releaseStatus(db, release)).toEqual({ platformReady: false, releaseComplete: false, pendingTenants: 1 });
    expect(await platformSchemaReady(db)).toBe(false);
    await db.query(`DELETE FROM quire.tenants`);

    // `quire migrate` with no tenants completes the release.
    const migrated = await runQuire(['migrate', '--json'], fresh.url);
    expect(migrated.code, migrated.stdout + migrated.stderr).toBe(0);
    expect(migrateJson(migrated)).toEqual({ release, platform: expect.any(Array), clusters: {}, tenants: {} });
    expect(await releaseStatus(db, release)).toEqual({ platformReady: true, releaseComplete: true, pendingTenants: 0 });
    expect(await platformSchemaReady(db)).toBe(true);

    // A tenant created now is recorded at this release in its install transaction.
    const created = await runQuire(['tenant', 'create', 'fresh', '--json'], fresh.url);
    expect(created.code, created.stdout + created.stderr).toBe(0);
    expect(await releaseStatus(db, release)).toEqual({ platformReady: true, releaseComplete: true, pendingTenants: 0 });
    expect(await releaseStatus(db, 'f'.repeat(64))).toEqual({ platformReady: true, releaseComplete: false, pendingTenants: 1 });

    // Not recorded and the release not marked complete: pending; marked complete: complete.
    await db.query(`DELETE FROM quire.tenant_releases`);
    await db.query(`UPDATE quire.releases SET "completed_at" = NULL`);
    expect(await releaseStatus(db, release)).toEqual({ platformReady: true, releaseComplete: false, pendingTenants: 1 });
    await db.query(`UPDATE quire.releases SET "completed_at" = now()`);
    expect(await releaseStatus(db, release)).toEqual({ platformReady: true, releaseComplete: true, pendingTenants: 0 });
  });
});

/** Runs `quire <args> --json` on the embedded database in `dataDir` (no DATABASE_URL). */
async function embeddedQuire(args: string[], dataDir: string): Promise<QuireRun> {
  const p = spawnQuire([...args, '--json'], { QUIRE_DATA_DIR: dataDir, LOG_LEVEL: 'silent', NODE_ENV: 'test' });
  const code = await p.stop('SIGCONT');
  const stdout = p.stdout();
  return { code, stdout, stderr: '', json: JSON.parse(stdout.trim()) as unknown };
}

describe('quire migrate on the embedded database', () => {
  it('migrates a pending tenant without advisory locks and completes the release', { timeout: 180_000 }, async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'quire-migrate-embedded-'));
    try {
      expect((await embeddedQuire(['migrate'], dataDir)).code).toBe(0);
      expect((await embeddedQuire(['tenant', 'create', 'alpha'], dataDir)).code).toBe(0);
      // Made pending by hand, as a previous release would have left it.
      const before = await PgliteDatabase.open(dataDir);
      try {
        await before.query(`DELETE FROM quire.tenant_releases`);
        await before.query(`UPDATE quire.releases SET "completed_at" = NULL`);
        await before.query(`UPDATE t_alpha."tabDocType" SET "migration_hash" = 'previous' WHERE "name" = 'ToDo'`);
        expect(await releaseStatus(before, release)).toEqual({ platformReady: true, releaseComplete: false, pendingTenants: 1 });
      } finally {
        await before.close();
      }

      const run = await embeddedQuire(['migrate'], dataDir);
      expect(run.code, run.stdout).toBe(0);
      expect(statuses(migrateJson(run))).toEqual({ alpha: 'migrated' });

      const after = await PgliteDatabase.open(dataDir);
      try {
        expect(await releaseStatus(after, release)).toEqual({ platformReady: true, releaseComplete: true, pendingTenants: 0 });
      } finally {
        await after.close();
      }
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
