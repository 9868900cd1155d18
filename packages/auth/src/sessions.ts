import { hash, randomBytes } from 'node:crypto';
import { pgErrorInfo, PG, qualified, type ChangeNotifier, type Executor, type Queryable, type TenantDatabases } from '@quire/db';
import type { Principal } from '@quire/permissions';
import { LRUCache } from 'lru-cache';
import { loadPrincipal, type TenantRef } from './principals';
import { spreadTtl } from './cache-ttl';

/**
 * Login sessions, stored durably in the tenant's schema so they survive any API process restart
 * and are shared by all of them. The session id is a bearer secret: only its SHA-256 is stored.
 */
export const SESSIONS_TABLE = '__Sessions';

export function sessionsTableDDL(schema: string): string[] {
  const t = qualified(schema, SESSIONS_TABLE);
  return [
    `CREATE TABLE IF NOT EXISTS ${t} (
      "sid_hash" text PRIMARY KEY,
      "user" varchar(140) NOT NULL,
      "created" timestamp(6) NOT NULL DEFAULT (now() at time zone 'utc'),
      "last_active" timestamp(6) NOT NULL DEFAULT (now() at time zone 'utc'),
      "expires_at" timestamp(6) NOT NULL,
      "ip" varchar(64),
      "device" varchar(32),
      "csrf_token" text
    )`,
    `CREATE INDEX IF NOT EXISTS "ix___Sessions_user" ON ${t} ("user")`,
  ];
}

/** Cookies Frappe sets on login and expires on logout (frappe/auth.py::CookieManager). */
export const SESSION_COOKIES = ['full_name', 'user_id', 'sid', 'user_image', 'user_lang', 'system_user'] as const;

export function hashSessionId(sid: string): string {
  return hash('sha256', sid, 'hex');
}

export interface NewSession {
  /** The value of the `sid` cookie: 56 hex characters, as Frappe's. */
  sid: string;
  expiresInSeconds: number;
}

export async function createSession(
  q: Queryable,
  tenant: TenantRef,
  user: string,
  options: { ip: string; device: string; expirySeconds: number },
): Promise<NewSession> {
  const sid = randomBytes(28).toString('hex');
  await q.query(
    `INSERT INTO ${qualified(tenant.schema, SESSIONS_TABLE)} ("sid_hash", "user", "expires_at", "ip", "device")
     VALUES ($1, $2, (now() at time zone 'utc') + make_interval(secs => $3), $4, $5)`,
    [hashSessionId(sid), user, options.expirySeconds, options.ip.slice(0, 64), options.device.slice(0, 32)],
  );
  return { sid, expiresInSeconds: options.expirySeconds };
}

/** Ends one session; returns its user, if it existed. */
export async function deleteSession(q: Queryable, tenant: TenantRef, sidHash: string): Promise<string | undefined> {
  const { rows } = await q.query<{ user: string }>(`DELETE FROM ${qualified(tenant.schema, SESSIONS_TABLE)} WHERE "sid_hash" = $1 RETURNING "user"`, [sidHash]);
  return rows[0]?.user;
}

/** Ends the session of a `sid` everywhere: its row, and (on commit) every process's cached copy. */
export async function endSession(db: Executor, tenant: TenantRef, changes: ChangeNotifier, sid: string): Promise<void> {
  const sidHash = hashSessionId(sid);
  await db.transaction(async (tx) => {
    await deleteSession(tx, tenant, sidHash);
    await changes.sessionChanged(tx, tenant, sidHash);
  });
}

/** The session's CSRF token, created the first time it is asked for (Frappe: when the desk loads). */
export async function sessionCsrfToken(q: Queryable, tenant: TenantRef, sidHash: string): Promise<string | undefined> {
  const token = randomBytes(24).toString('hex');
  const { rows } = await q.query<{ csrf_token: string }>(
    `UPDATE ${qualified(tenant.schema, SESSIONS_TABLE)} SET "csrf_token" = COALESCE("csrf_token", $2)
     WHERE "sid_hash" = $1 RETURNING "csrf_token"`,
    [sidHash, token],
  );
  return rows[0]?.csrf_token;
}

export interface ActiveSession {
  sidHash: string;
  principal: Principal;
  csrfToken: string | undefined;
}

/** The tenant of a session, and whether it is moving to another cluster (the directory's Tenant is one). */
export interface SessionTenant extends TenantRef {
  readonly movingTo?: string | null;
}

interface SessionRow {
  user: string;
  csrf_token: string | null;
}

interface SessionEntry extends ActiveSession {
  tenant: string;
}

/**
 * `sid` -> Principal, cached briefly per process. A session is read from the database at most
 * every `recheckMs` (and never trusted past its own expiry); doing so also slides its expiry
 * (Frappe refreshes `lastupdate` the same way). Logout and user changes drop entries through the
 * invalidation bus; beyond `maxEntries` the least recently used goes first.
 */
export class SessionAuthenticator {
  /** By tenant and sid hash; expiry is checked on get (no timers). */
  /** Lookups answered from the cache and from the database (the `quire_cache_requests_total` metric). */
  readonly stats = { hits: 0, misses: 0 };
  private readonly entries: LRUCache<string, SessionEntry>;
  /** How long an entry is used without reading the session again. */
  private readonly ttlMs: number;
  /** Bumped by every invalidation, so a load that started before one is never cached after it. */
  private generation = 0;

  constructor(
    private readonly dbs: TenantDatabases,
    private readonly options: { recheckMs?: number; expirySeconds: number; maxEntries?: number },
  ) {
    this.ttlMs = Math.floor(Math.min(options.recheckMs ?? 30_000, options.expirySeconds * 1000));
    // ttl 0 would mean "never expires" to LRUCache: with no time to trust, nothing is stored instead.
    this.entries = new LRUCache({ max: options.maxEntries ?? 50_000, ttl: Math.max(0, this.ttlMs), ttlAutopurge: false });
  }

  async authenticate(tenant: SessionTenant, sid: string): Promise<ActiveSession | undefined> {
    const sidHash = hashSessionId(sid);
    const key = sessionKey(tenant.name, sidHash);
    const cached = this.entries.get(key);
    if (cached) {
      this.stats.hits++;
      return cached;
    }
    this.stats.misses++;
    const generation = this.generation;
    const entry = await this.load(tenant, sidHash);
    if (!entry) return undefined;
    if (generation === this.generation && this.ttlMs > 0) this.entries.set(key, entry, { ttl: spreadTtl(this.ttlMs) });
    return entry;
  }

  private async load(tenant: SessionTenant, sidHash: string): Promise<SessionEntry | undefined> {
    const db = this.dbs.of(tenant);
    // While its tenant moves to another cluster a session is read, not slid: the write would wait
    // behind the move's locks (and hold up its switch), or meet the sealed old copy of a process
    // that has not heard of the move yet. Its expiry slides at its next read after the move.
    const row = tenant.movingTo
      ? await this.read(db, tenant, sidHash)
      : await this.slide(db, tenant, sidHash).catch((e: unknown) => {
          if (pgErrorInfo(e)?.code === PG.tenantMoved) return this.read(db, tenant, sidHash);
          throw e;
        });
    if (!row) return undefined;
    const principal = await loadPrincipal(db, tenant.schema, row.user);
    if (!principal) return undefined;
    return { tenant: tenant.name, sidHash, principal, csrfToken: row.csrf_token ?? undefined };
  }

  /** The session if it has not expired, its expiry moved on (as Frappe refreshes `lastupdate`). */
  private async slide(db: Queryable, tenant: TenantRef, sidHash: string): Promise<SessionRow | undefined> {
    const { rows } = await db.query<SessionRow>(
      `UPDATE ${qualified(tenant.schema, SESSIONS_TABLE)}
       SET "last_active" = (now() at time zone 'utc'), "expires_at" = (now() at time zone 'utc') + make_interval(secs => $2)
       WHERE "sid_hash" = $1 AND "expires_at" > (now() at time zone 'utc')
       RETURNING "user", "csrf_token"`,
      [sidHash, this.options.expirySeconds],
    );
    return rows[0];
  }

  /** The session if it has not expired, left as it is. */
  private async read(db: Queryable, tenant: TenantRef, sidHash: string): Promise<SessionRow | undefined> {
    const { rows } = await db.query<SessionRow>(
      `SELECT "user", "csrf_token" FROM ${qualified(tenant.schema, SESSIONS_TABLE)} WHERE "sid_hash" = $1 AND "expires_at" > (now() at time zone 'utc')`,
      [sidHash],
    );
    return rows[0];
  }

  /** Drops cached sessions: one (by hash), a user's, or a whole tenant's. */
  invalidate(tenant: string, match?: { sidHash?: string; user?: string }): void {
    this.generation++;
    if (match?.sidHash) {
      // One session: its key is known, no need to look at the others.
      const key = sessionKey(tenant, match.sidHash);
      const e = this.entries.peek(key, { allowStale: true });
      if (e && (!match.user || e.principal.user === match.user)) this.entries.delete(key);
      return;
    }
    // Collected first, as deleting while LRUCache iterates is not safe.
    const doomed: string[] = [];
    this.entries.forEach((e, k) => {
      if (e.tenant === tenant && (!match?.user || e.principal.user === match.user)) doomed.push(k);
    });
    for (const k of doomed) this.entries.delete(k);
  }

  clear(): void {
    this.generation++;
    this.entries.clear();
  }
}

function sessionKey(tenant: string, sidHash: string): string {
  return `${tenant}\0${sidHash}`;
}
