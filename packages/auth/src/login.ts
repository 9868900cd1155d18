import { qualified, type Queryable } from '@quire/db';
import { AuthenticationError, TooManyRequestsError } from '@quire/errors';
import { clientBucket } from '@quire/limits';
import { AUTH_TABLE } from './auth-table';
import type { TenantRef } from './principals';
import { verifyPassword } from './secrets';

/**
 * Password login (frappe/auth.py::LoginManager.authenticate) and its throttle: consecutive
 * failures per user and per client address lock both out for a while (LoginAttemptTracker),
 * answered 429. Failures are counted in the database so every API process sees them.
 */
export const LOGIN_ATTEMPTS_TABLE = '__LoginAttempts';

export function loginAttemptsTableDDL(schema: string): string {
  return `CREATE TABLE IF NOT EXISTS ${qualified(schema, LOGIN_ATTEMPTS_TABLE)} (
    "key" text PRIMARY KEY,
    "failures" integer NOT NULL DEFAULT 0,
    "locked_until" timestamp(6)
  )`;
}

export interface LoginPolicy {
  /** Consecutive failures allowed before a lock (Frappe's allow_consecutive_login_attempts: 10). */
  maxFailures: number;
  /** How long a lock lasts (Frappe's allow_login_after_fail: 60 s). */
  lockSeconds: number;
}

export const DEFAULT_LOGIN_POLICY: LoginPolicy = { maxFailures: 10, lockSeconds: 60 };

export interface LoggedInUser {
  user: string;
  fullName: string;
  userType: string;
  userImage: string;
}

function fail(message: string): never {
  throw new AuthenticationError(message, { extra: { message } });
}

async function lockedFor(q: Queryable, schema: string, keys: string[]): Promise<number> {
  const { rows } = await q.query<{ seconds: number | null }>(
    `SELECT max(extract(epoch FROM "locked_until" - (now() at time zone 'utc')))::float8 AS seconds
     FROM ${qualified(schema, LOGIN_ATTEMPTS_TABLE)} WHERE "key" = ANY($1::text[]) AND "locked_until" > (now() at time zone 'utc')`,
    [keys],
  );
  return Math.ceil(rows[0]?.seconds ?? 0);
}

async function recordFailure(q: Queryable, schema: string, keys: string[], policy: LoginPolicy): Promise<void> {
  const table = qualified(schema, LOGIN_ATTEMPTS_TABLE);
  await q.query(
    `INSERT INTO ${table} AS a ("key", "failures") SELECT unnest($1::text[]), 1
     ON CONFLICT ("key") DO UPDATE SET "failures" = CASE WHEN a."locked_until" IS NOT NULL AND a."locked_until" <= (now() at time zone 'utc') THEN 1 ELSE a."failures" + 1 END,
       "locked_until" = CASE
         WHEN a."locked_until" IS NOT NULL AND a."locked_until" <= (now() at time zone 'utc') THEN NULL
         WHEN a."failures" + 1 >= $2 THEN (now() at time zone 'utc') + make_interval(secs => $3)
         ELSE a."locked_until" END`,
    [keys, policy.maxFailures, policy.lockSeconds],
  );
}

async function clearFailures(q: Queryable, schema: string, keys: string[]): Promise<void> {
  await q.query(`DELETE FROM ${qualified(schema, LOGIN_ATTEMPTS_TABLE)} WHERE "key" = ANY($1::text[])`, [keys]);
}

/** Checks a user's password; throws Frappe's 401 (or 429 while locked). Does not create a session. */
export async function authenticatePassword(
  q: Queryable,
  tenant: TenantRef,
  input: { usr: unknown; pwd: unknown; ip: string },
  policy: LoginPolicy = DEFAULT_LOGIN_POLICY,
): Promise<LoggedInUser> {
  const usr = typeof input.usr === 'string' ? input.usr.trim() : '';
  const pwd = typeof input.pwd === 'string' ? input.pwd : '';
  if (!usr || !pwd) fail('Incomplete login details');
  if (pwd.length > 512) fail('Password size exceeded the maximum allowed size');
  // An IPv6 client counts by its /64, or it could take a fresh address (and a fresh count) per try.
  const keys = [`user:${usr.toLowerCase()}`, `ip:${clientBucket(input.ip)}`];
  const wait = await lockedFor(q, tenant.schema, keys);
  if (wait > 0) {
    throw new TooManyRequestsError(`Your account has been locked and will resume after ${wait} seconds`, {
      title: 'Too Many Attempts',
      extra: { message: `Your account has been locked and will resume after ${wait} seconds` },
    });
  }
  const { rows } = await q.query<{
    name: string;
    enabled: number;
    full_name: string | null;
    user_type: string | null;
    user_image: string | null;
    password: string | null;
  }>(
    `SELECT u."name", u."enabled", u."full_name", u."user_type", u."user_image", a."password"
     FROM ${qualified(tenant.schema, 'tabUser')} u
     LEFT JOIN ${qualified(tenant.schema, AUTH_TABLE)} a ON a."doctype" = 'User' AND a."name" = u."name" AND a."fieldname" = 'password'
     WHERE lower(u."name") = lower($1) OR lower(u."email") = lower($1)
     ORDER BY u."name" = $1 DESC LIMIT 1`,
    [usr],
  );
  const row = rows[0];
  // Same work whether or not the user exists, so timing does not reveal which users exist.
  const ok = await verifyPassword(pwd, row?.password ?? DUMMY_HASH);
  if (!row || row.name === 'Guest' || !row.password || !ok) {
    await recordFailure(q, tenant.schema, keys, policy);
    fail('Invalid login credentials');
  }
  if (!row.enabled) {
    await recordFailure(q, tenant.schema, keys, policy);
    fail('User disabled or missing');
  }
  await clearFailures(q, tenant.schema, keys);
  return { user: row.name, fullName: row.full_name ?? row.name, userType: row.user_type ?? 'System User', userImage: row.user_image ?? '' };
}

/** A valid scrypt hash of a random password, verified against when the user does not exist. */
const DUMMY_HASH = 'scrypt$32768$8$1$AAAAAAAAAAAAAAAAAAAAAA==$Rm9yIHRpbWluZyBvbmx5LCBuZXZlciBtYXRjaGVzLiE=';
