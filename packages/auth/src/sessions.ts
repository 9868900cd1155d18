import { createHash, randomBytes } from 'node:crypto';
import { qualified, type Queryable } from '@quire/db';
import type { Principal } from '@quire/permissions';
import { loadPrincipal, type TenantRef } from './principals';

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

export function hashSessionId(sid: string): string {
  return createHash('sha256').update(sid, 'utf8').digest('hex');
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
  const { rows } = await q.query<{ user: string }>(
    `DELETE FROM ${qualified(tenant.schema, SESSIONS_TABLE)} WHERE "sid_hash" = $1 RETURNING "user"`,
    [sidHash],
  );
  return rows[0]?.user;
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

interface SessionEntry extends ActiveSession {
  tenant: string;
  expiresAt: number;
  checkedAt: number;
}

/**
 * `sid` -> Principal, cached briefly per process. A session is read from the database at most
 * every `recheckMs`; doing so also slides its expiry (Frappe refreshes `lastupdate` the same way).
 * Logout and user changes drop entries through the invalidation bus.
 */
export class SessionAuthenticator {
  private readonly entries = new Map<string, SessionEntry>();
  private generation = 0;

  constructor(
    private readonly db: Queryable,
    private readonly options: { recheckMs?: number; expirySeconds: number; maxEntries?: number },
  ) {}

  async authenticate(tenant: TenantRef, sid: string): Promise<ActiveSession | undefined> {
    const sidHash = hashSessionId(sid);
    const key = `${tenant.name}\0${sidHash}`;
    const now = Date.now();
    const cached = this.entries.get(key);
    if (cached && now - cached.checkedAt < (this.options.recheckMs ?? 30_000) && cached.expiresAt > now) return cached;
    this.entries.delete(key);
    const generation = this.generation;
    const entry = await this.load(tenant, sidHash);
    if (!entry) return undefined;
    if (generation === this.generation) {
      if (this.entries.size >= (this.options.maxEntries ?? 50_000)) this.entries.delete(this.entries.keys().next().value as string);
      this.entries.set(key, entry);
    }
    return entry;
  }

  private async load(tenant: TenantRef, sidHash: string): Promise<SessionEntry | undefined> {
    const { rows } = await this.db.query<{ user: string; csrf_token: string | null; expires_at: string }>(
      `UPDATE ${qualified(tenant.schema, SESSIONS_TABLE)}
       SET "last_active" = (now() at time zone 'utc'), "expires_at" = (now() at time zone 'utc') + make_interval(secs => $2)
       WHERE "sid_hash" = $1 AND "expires_at" > (now() at time zone 'utc')
       RETURNING "user", "csrf_token", "expires_at"`,
      [sidHash, this.options.expirySeconds],
    );
    const row = rows[0];
    if (!row) return undefined;
    const principal = await loadPrincipal(this.db, tenant.schema, row.user);
    if (!principal) return undefined;
    return {
      tenant: tenant.name,
      sidHash,
      principal,
      csrfToken: row.csrf_token ?? undefined,
      expiresAt: Date.now() + this.options.expirySeconds * 1000,
      checkedAt: Date.now(),
    };
  }

  /** Drops cached sessions: one (by hash), a user's, or a whole tenant's. */
  invalidate(tenant: string, match?: { sidHash?: string; user?: string }): void {
    this.generation++;
    for (const [k, e] of this.entries) {
      if (e.tenant !== tenant) continue;
      if (match?.sidHash && e.sidHash !== match.sidHash) continue;
      if (match?.user && e.principal.user !== match.user) continue;
      this.entries.delete(k);
    }
  }

  clear(): void {
    this.generation++;
    this.entries.clear();
  }
}
