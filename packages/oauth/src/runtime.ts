import { loadPrincipal } from '@quire/auth';
import type { TenantDatabases } from '@quire/db';
import { scopedPrincipal, type Principal } from '@quire/permissions';
import { LRUCache } from 'lru-cache';
import { RevocationCache, type RevocationCacheOptions } from './revocation-cache';
import { AccessTokenError, AccessTokenVerifier, type AccessTokenFailure, type VerifiedAccessToken, type VerifierOptions } from './verify';

/**
 * What one process needs to accept OAuth access tokens: the revocation sets, the verifier, and
 * the token users' principals (roles), each cached and kept current through the invalidation
 * bus (topic `oauth` for revocations and keys, `user` for roles and status). The Platform owns
 * one, as `platform.oauth`.
 */

export interface OAuthRuntimeOptions {
  revocations?: RevocationCacheOptions;
  verifier?: VerifierOptions;
  /** How long a token user's roles are trusted without asking the database again (0: not cached). */
  principalTtlMs?: number;
  /** Token users remembered (all tenants together); the least recently used goes first. */
  maxPrincipals?: number;
}

export interface OAuthTenant {
  name: string;
  schema: string;
}

export interface BearerAuthentication {
  /** The token user's principal, narrowed by the token's scopes. */
  principal: Principal;
  token: VerifiedAccessToken;
}

export type BearerOutcome = ({ ok: true } & BearerAuthentication) | { ok: false; reason: AccessTokenFailure; message: string };

interface UserEntry {
  tenant: string;
  user: string;
  /** undefined: the user is disabled or gone. */
  principal: Principal | undefined;
  /** The scoped principals made from it, by `scope` claim. */
  scoped: LRUCache<string, Principal>;
}

const MAX_SCOPED_PER_USER = 32;

export class OAuthRuntime {
  readonly revocations: RevocationCache;
  readonly verifier: AccessTokenVerifier;
  /** By tenant and user; expiry is checked on get (no timers). */
  private readonly users: LRUCache<string, UserEntry>;
  /** Loads under way, so concurrent requests of one user share one (not a cache: each ends). */
  private readonly loading = new Map<string, Promise<UserEntry>>();
  /** Bumped by every invalidation, so a load that started before one is never cached after it. */
  private generation = 0;
  private readonly principalTtlMs: number;
  private readonly keyListeners = new Set<(tenant: string | undefined) => void>();

  constructor(
    private readonly dbs: TenantDatabases,
    options: OAuthRuntimeOptions = {},
  ) {
    this.revocations = new RevocationCache(dbs, options.revocations);
    this.verifier = new AccessTokenVerifier(dbs, this.revocations, options.verifier);
    this.principalTtlMs = options.principalTtlMs ?? 60_000;
    // ttl 0 would mean "never expires" to LRUCache: with principalTtlMs <= 0 nothing is stored instead.
    this.users = new LRUCache({ max: options.maxPrincipals ?? 10_000, ttl: Math.max(0, this.principalTtlMs), ttlAutopurge: false });
  }

  /** Whether a token (by `jti`) or its grant is revoked; what every API process checks per request. */
  isRevoked(tenant: OAuthTenant, jti: string, grantId?: string): Promise<boolean> {
    return this.revocations.isRevoked(tenant, jti, grantId);
  }

  /**
   * The caller an access token stands for: verified (see AccessTokenVerifier), its user enabled,
   * its principal that user's roles narrowed by the token's scopes. Throws AccessTokenError.
   */
  async authenticate(tenant: OAuthTenant, token: string, issuerHosts: readonly string[]): Promise<BearerAuthentication> {
    const verified = await this.verifier.verify(token, tenant, issuerHosts);
    const entry = await this.userEntry(tenant, verified.user);
    if (!entry.principal) throw new AccessTokenError('user', `user ${verified.user} is disabled or does not exist`);
    let principal = entry.scoped.get(verified.scope);
    if (!principal) {
      principal = scopedPrincipal(entry.principal, verified.scopes);
      entry.scoped.set(verified.scope, principal);
    }
    return { principal, token: verified };
  }

  /** authenticate() with refusals as a value, for callers that answer them (the API's 401). */
  authenticateBearer(tenant: OAuthTenant, token: string, issuerHosts: readonly string[]): Promise<BearerOutcome> {
    return this.authenticate(tenant, token, issuerHosts).then(
      (auth): BearerOutcome => ({ ok: true, ...auth }),
      (e: unknown): BearerOutcome => {
        if (e instanceof AccessTokenError) return { ok: false, reason: e.reason, message: e.message };
        throw e;
      },
    );
  }

  /**
   * A message of the `oauth` topic: `token:<jti>` / `grant:<id>` (revoked), `keys` (the tenant's
   * signing keys changed), or no key (re-read everything of the tenant).
   */
  onMessage(tenant: string, key: string | undefined): void {
    const colon = key?.indexOf(':') ?? -1;
    const kind = key !== undefined && colon > 0 ? key.slice(0, colon) : key;
    const id = key !== undefined && colon > 0 ? key.slice(colon + 1) : undefined;
    if ((kind === 'token' || kind === 'grant') && id !== undefined) {
      this.revocations.apply(tenant, kind, id);
      return;
    }
    this.keysChanged(tenant);
    if (kind !== 'keys') void this.revocations.refresh(tenant).catch(() => {});
  }

  /**
   * Listens for a tenant's signing keys changing (rotation on any process; `undefined`: maybe
   * every tenant's, after missed notifications). The auth service rebuilds its issuers on it.
   */
  onKeysChanged(listener: (tenant: string | undefined) => void): () => void {
    this.keyListeners.add(listener);
    return () => this.keyListeners.delete(listener);
  }

  private keysChanged(tenant: string | undefined): void {
    this.verifier.invalidateKeys(tenant);
    for (const listener of this.keyListeners) listener(tenant);
  }

  /** A user's roles or status changed (or, without `user`, anything of the tenant's users). */
  invalidateUser(tenant: string, user?: string): void {
    this.generation++;
    if (user !== undefined) {
      this.users.delete(userKey(tenant, user));
    } else {
      // Collected first, as deleting while LRUCache iterates is not safe.
      const doomed: string[] = [];
      this.users.forEach((e, k) => {
        if (e.tenant === tenant) doomed.push(k);
      });
      for (const k of doomed) this.users.delete(k);
    }
    const prefix = user === undefined ? `${tenant}\0` : userKey(tenant, user);
    for (const k of this.loading.keys()) if (user === undefined ? k.startsWith(prefix) : k === prefix) this.loading.delete(k);
  }

  /** Drops everything cached for a tenant (it changed or went away). */
  forget(tenant: string): void {
    this.invalidateUser(tenant);
    this.keysChanged(tenant);
    this.revocations.forget(tenant);
  }

  /** Notifications may have been missed: re-read revocations, drop keys and principals. */
  reset(): void {
    this.generation++;
    this.users.clear();
    this.loading.clear();
    this.keysChanged(undefined);
    void this.revocations.reset().catch(() => {});
  }

  close(): void {
    this.revocations.close();
  }

  private async userEntry(tenant: OAuthTenant, user: string): Promise<UserEntry> {
    const key = userKey(tenant.name, user);
    const cached = this.users.get(key);
    if (cached) return cached;
    let pending = this.loading.get(key);
    if (!pending) {
      const generation = this.generation;
      pending = loadPrincipal(this.dbs.of(tenant), tenant.schema, user)
        .then((principal) => {
          const scoped = new LRUCache<string, Principal>({ max: MAX_SCOPED_PER_USER });
          const entry: UserEntry = { tenant: tenant.name, user, principal, scoped };
          if (generation === this.generation && this.principalTtlMs > 0) this.users.set(key, entry);
          return entry;
        })
        .finally(() => {
          if (this.loading.get(key) === pending) this.loading.delete(key);
        });
      this.loading.set(key, pending);
    }
    return pending;
  }
}

function userKey(tenant: string, user: string): string {
  return `${tenant}\0${user}`;
}
