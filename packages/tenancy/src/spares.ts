import { randomBytes } from 'node:crypto';
import { ident, type Database, type Queryable, type Transaction } from '@quire/db';
import type { TenantRef } from '@quire/meta';
import type { InstallServices } from './install';
import { copyTemplate, readPlan, restampStatements, type TemplatePlan, type TenantTemplates } from './template';

/**
 * Spare tenant schemas. Most of what provisioning a tenant costs is its DDL (some 140 relations:
 * tables, their indexes and TOAST tables), and none of it depends on the tenant. So a few schemas
 * are copied from the release's template ahead of time, and a new tenant takes one: the schema is
 * renamed (ALTER SCHEMA changes one catalog row) and its rows stamped with the time now, inside
 * the provisioning transaction, so a rollback puts the spare back.
 *
 * After a tenant took a spare (or found none), the process that made it makes new ones in the
 * background, one process at a time (a transaction-level advisory lock), up to the configured
 * count; `quire migrate` does the same for a new release, and drops the spares of older ones.
 * When none is ready (a burst of sign-ups, or spares turned off) a tenant is copied from the
 * template as before: the same schema either way, only sooner.
 */

const SPARES_LOCK = 'quire:tenant-spares';

/** A spare's schema (never a tenant's: those start with `t_`). */
function spareSchema(): string {
  return `quire_spare_${randomBytes(8).toString('hex')}`;
}

export interface SpareOptions {
  /** How many spares to keep ready (0: none, every tenant is copied from the template when made). */
  count: number;
  /** A background refill failed (the next one tries again). */
  onError?: (error: unknown) => void;
}

/** Provisioning's claims so far, as plain numbers (read into metrics at scrape time); a claim counts even if its provisioning then rolls back. */
export interface SpareClaims {
  /** A new tenant took a spare. */
  readonly taken: number;
  /** None was ready (or spares are off): the tenant was copied from the template. */
  readonly missed: number;
}

export class TenantSpares {
  private filling: Promise<void> | undefined;
  private readonly claims = { taken: 0, missed: 0 };

  constructor(
    private readonly db: Database,
    private readonly templates: TenantTemplates,
    private readonly options: SpareOptions,
  ) {}

  get count(): number {
    return this.options.count;
  }

  get stats(): SpareClaims {
    return this.claims;
  }

  /** Spares of `release` ready now, across every process (a query: metrics read it through a cache). */
  async ready(release: string): Promise<number> {
    return this.options.count === 0 ? 0 : countReady(this.db, release);
  }

  /**
   * Inside the provisioning transaction: renames a spare of the plan's release to `tenant`'s
   * schema. False when none is ready (or another transaction holds each).
   */
  async claim(tx: Transaction, plan: TemplatePlan, tenant: TenantRef): Promise<boolean> {
    if (this.options.count === 0) {
      this.claims.missed++;
      return false;
    }
    const { rows } = await tx.query<{ schema: string }>(
      `DELETE FROM quire.tenant_spares WHERE "schema" = (
         SELECT "schema" FROM quire.tenant_spares WHERE "release" = $1 ORDER BY "created_at" LIMIT 1 FOR UPDATE SKIP LOCKED)
       RETURNING "schema"`,
      [plan.release],
    );
    const spare = rows[0]?.schema;
    if (spare === undefined) {
      this.claims.missed++;
      return false;
    }
    await tx.script([`ALTER SCHEMA ${ident(spare)} RENAME TO ${ident(tenant.schema)}`, ...restampStatements(plan, tenant.schema)].join(';\n'));
    this.claims.taken++;
    return true;
  }

  /** Makes spares until the configured count is ready, in the background (at most one refill per process at a time). */
  replenish(services: InstallServices): void {
    if (this.options.count === 0 || this.filling) return;
    this.filling = this.fill(services)
      .catch((e: unknown) => this.options.onError?.(e))
      .finally(() => {
        this.filling = undefined;
      });
  }

  /** Settles once no refill is running (a process waits for it before it closes the pool). */
  async idle(): Promise<void> {
    await this.filling;
  }

  private async fill(services: InstallServices): Promise<void> {
    const plan = await this.templates.get(services);
    if (!plan) return;
    while (await this.makeOne(plan)) {
      // Each spare in its own transaction: a tenant can take the first while the next is made.
    }
  }

  /** Makes one spare if fewer than the count are ready; whether it made one. */
  private makeOne(plan: TemplatePlan): Promise<boolean> {
    return this.db.transaction(async (tx) => {
      // Processes take turns, each counting after the one before it committed.
      if (this.db.supportsAdvisoryLocks) await tx.query(`SELECT pg_advisory_xact_lock(hashtext($1))`, [SPARES_LOCK]);
      // A newer release's migrate dropped the template: its spares would never be taken.
      if (!(await readPlan(tx, plan.release, true))) return false;
      if ((await countReady(tx, plan.release)) >= this.options.count) return false;
      const schema = spareSchema();
      await copyTemplate(tx, plan, schema);
      await tx.query(`INSERT INTO quire.tenant_spares ("schema", "release") VALUES ($1, $2)`, [schema, plan.release]);
      return true;
    });
  }
}

/** Spares of `release` in quire.tenant_spares. */
async function countReady(q: Queryable, release: string): Promise<number> {
  const { rows } = await q.query<{ ready: number }>(`SELECT count(*)::int AS "ready" FROM quire.tenant_spares WHERE "release" = $1`, [release]);
  return rows[0]?.ready ?? 0;
}
