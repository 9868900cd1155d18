import type { TenantDatabases } from '@quire/db';
import { createLocalJWKSet, errors as joseErrors, jwtVerify, type JWTPayload, type JWTVerifyGetKey } from 'jose';
import { LRUCache } from 'lru-cache';
import { tenantAudience } from './audience';
import { publicKeys, SIGNING_ALG } from './keys';
import type { RevocationCache } from './revocation-cache';
import { parseScopes } from './scopes';

/**
 * Verification of a tenant's access tokens (RFC 9068 JWTs) in the API process, against the
 * tenant's published keys (`__OAuthKeys`, retired ones included). Checked: the JWS (ES256 only,
 * `typ: at+jwt`, a `kid` of the tenant's JWKS), `aud` = the tenant's audience, `exp`/`nbf`/`iat`
 * with a few seconds' tolerance, the claims this API needs, the issuer's host (one of the
 * tenant's hosts, http or https, any port), and the revocation sets (token `jti`, grant `gid`).
 *
 * Cost: the JWKS is cached per tenant (5 min; re-read on an unknown `kid`, at most once per
 * `unknownKidCooldownMs` per tenant so garbage kids cannot hammer the database; the least recently
 * used of more than MAX_KEY_TENANTS tenants is dropped). A token whose signature and claims
 * verified is remembered (by its exact text, per tenant, until it expires or the tenant's key set
 * changes; the least recently used goes first beyond `maxVerified`), so a client's repeated
 * requests cost a cache lookup, the issuer and expiry checks and two Set lookups; only a token's
 * first request pays the ECDSA verify.
 */

export type AccessTokenFailure =
  'malformed' | 'unsupported_alg' | 'unknown_key' | 'signature' | 'type' | 'expired' | 'not_yet_valid' | 'audience' | 'claims' | 'issuer' | 'revoked' | 'user';

/** Why a token was refused (the API answers 401 for every reason). */
export class AccessTokenError extends Error {
  constructor(
    readonly reason: AccessTokenFailure,
    message: string = reason,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'AccessTokenError';
  }
}

export interface VerifiedAccessToken {
  /** `sub`: the user the token acts for. */
  user: string;
  scopes: Set<string>;
  /** The raw `scope` claim. */
  scope: string;
  clientId: string;
  jti: string;
  grantId?: string;
  issuer: string;
  /** `exp`, in seconds since the epoch. */
  expiresAt: number;
}

export interface VerifierOptions {
  /** How long a tenant's JWKS is used before it is read again. */
  jwksTtlMs?: number;
  /** Least time between two reads of a tenant's JWKS caused by unknown `kid`s. */
  unknownKidCooldownMs?: number;
  clockToleranceSeconds?: number;
  /** Verified tokens remembered (all tenants together). */
  maxVerified?: number;
  /** Longer Authorization values are refused unparsed. */
  maxTokenLength?: number;
}

export interface VerifierTenant {
  name: string;
  schema: string;
}

interface KeySet {
  fingerprint: string;
  kids: ReadonlySet<string>;
  resolve: JWTVerifyGetKey;
  expiresAt: number;
}

interface TenantKeys {
  schema: string;
  set: KeySet | undefined;
  loading: Promise<KeySet> | undefined;
  lastRead: number;
}

interface Verified {
  token: VerifiedAccessToken;
  /** Lower-cased issuer host. */
  issuerHost: string;
  keys: KeySet;
}

const COMPACT_JWS = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;
/** Tenants whose key sets are kept; one dropped is read again on its next token. */
const MAX_KEY_TENANTS = 10_000;
const REQUIRED_CLAIMS = ['iss', 'sub', 'aud', 'exp', 'iat', 'jti', 'client_id'];

export class AccessTokenVerifier {
  /**
   * By tenant. No LRU ttl: an expired set (`expiresAt`) is read again but its state is kept, so an
   * unchanged set keeps its identity (and its verified tokens) and `lastRead` keeps the cooldown.
   */
  private readonly keys = new LRUCache<string, TenantKeys>({ max: MAX_KEY_TENANTS });
  /** By tenant and token text, each until the token expires (a per-entry ttl, checked on get). */
  private readonly verified: LRUCache<string, Verified>;
  private readonly jwksTtlMs: number;
  private readonly cooldownMs: number;
  private readonly tolerance: number;
  private readonly maxTokenLength: number;

  constructor(
    private readonly dbs: TenantDatabases,
    private readonly revocations: RevocationCache,
    options: VerifierOptions = {},
  ) {
    this.jwksTtlMs = options.jwksTtlMs ?? 5 * 60_000;
    this.cooldownMs = options.unknownKidCooldownMs ?? 2000;
    this.tolerance = options.clockToleranceSeconds ?? 5;
    this.verified = new LRUCache({ max: options.maxVerified ?? 10_000, ttlAutopurge: false });
    this.maxTokenLength = options.maxTokenLength ?? 8192;
  }

  /**
   * The token's user, scopes, client and ids, or an AccessTokenError. `issuerHosts`: the hosts
   * the tenant's issuer may be at (lower-cased, no port).
   */
  async verify(token: string, tenant: VerifierTenant, issuerHosts: readonly string[]): Promise<VerifiedAccessToken> {
    if (typeof token !== 'string' || token.length > this.maxTokenLength || !COMPACT_JWS.test(token)) {
      throw new AccessTokenError('malformed', 'not a compact JWS');
    }
    const key = verifiedKey(tenant.name, token);
    let hit = this.verified.get(key);
    const now = Date.now();
    if (hit && (hit.keys !== this.keys.get(tenant.name)?.set || hit.keys.expiresAt <= now)) {
      this.verified.delete(key);
      hit = undefined;
    }
    if (hit && hit.token.expiresAt + this.tolerance <= now / 1000) throw new AccessTokenError('expired', 'token expired');
    if (!hit) {
      hit = await this.verifySignature(token, tenant);
      this.remember(key, hit);
    }
    if (!issuerHosts.includes(hit.issuerHost)) throw new AccessTokenError('issuer', `issuer ${hit.token.issuer} is not this tenant's`);
    if (await this.revocations.isRevoked(tenant, hit.token.jti, hit.token.grantId)) throw new AccessTokenError('revoked', 'token revoked');
    return hit.token;
  }

  /** Drops a tenant's cached JWKS (keys rotated or removed), or every tenant's. */
  invalidateKeys(tenant?: string): void {
    if (tenant === undefined) {
      this.keys.clear();
      this.verified.clear();
      return;
    }
    this.keys.delete(tenant);
    // Its tokens could no longer be used (their key set is gone, see verify); free their room now.
    // Collected first, as deleting while LRUCache iterates is not safe.
    const prefix = verifiedKey(tenant, '');
    const doomed: string[] = [];
    for (const k of this.verified.keys()) if (k.startsWith(prefix)) doomed.push(k);
    for (const k of doomed) this.verified.delete(k);
  }

  /** Remembers a verified token until it expires (`exp` plus the clock tolerance). */
  private remember(key: string, v: Verified): void {
    const ttl = Math.floor((v.token.expiresAt + this.tolerance) * 1000 - Date.now());
    if (ttl > 0) this.verified.set(key, v, { ttl }); // a ttl of 0 would mean "forever" to LRUCache
  }

  private async verifySignature(token: string, tenant: VerifierTenant): Promise<Verified> {
    let used: KeySet | undefined;
    const getKey: JWTVerifyGetKey = async (header, jws) => {
      const kid = header.kid;
      if (typeof kid !== 'string' || kid === '') throw new AccessTokenError('unknown_key', 'no kid');
      let set = await this.keySet(tenant);
      if (!set.kids.has(kid)) set = await this.afterUnknownKid(tenant, set);
      if (!set.kids.has(kid)) throw new AccessTokenError('unknown_key', `unknown kid ${kid}`);
      used = set;
      return set.resolve(header, jws);
    };
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, getKey, {
        algorithms: [SIGNING_ALG],
        typ: 'at+jwt',
        audience: tenantAudience(tenant.name),
        clockTolerance: this.tolerance,
        requiredClaims: REQUIRED_CLAIMS,
      }));
    } catch (e) {
      throw refusal(e);
    }
    const claims = payload as JWTPayload & { client_id?: unknown; scope?: unknown; gid?: unknown };
    const str = (v: unknown): v is string => typeof v === 'string' && v !== '';
    const { sub, jti, client_id: clientId, iss, iat, exp, scope = '', gid } = claims;
    if (!str(sub) || !str(jti) || !str(clientId) || !str(iss) || typeof iat !== 'number') {
      throw new AccessTokenError('claims', 'sub, jti, client_id and iss must be non-empty strings');
    }
    if (typeof scope !== 'string') throw new AccessTokenError('claims', 'scope must be a string');
    if (gid !== undefined && !str(gid)) throw new AccessTokenError('claims', 'gid must be a non-empty string');
    // jwtVerify has made sure of both: exp is a required claim, and verifying asked getKey for the key.
    if (typeof exp !== 'number') throw new AccessTokenError('claims', 'exp must be a number');
    if (used === undefined) throw new Error('jwtVerify accepted a token without asking for its key');
    const issuerHost = hostOfIssuer(iss);
    if (issuerHost === undefined) throw new AccessTokenError('issuer', 'the issuer must be an http(s) origin');
    const result: VerifiedAccessToken = {
      user: sub,
      scopes: parseScopes(scope),
      scope,
      clientId,
      jti,
      issuer: iss,
      expiresAt: exp,
    };
    if (gid !== undefined) result.grantId = gid;
    return { token: result, issuerHost, keys: used };
  }

  /** The tenant's key set: cached, read again after `jwksTtlMs`. */
  private keySet(tenant: VerifierTenant): Promise<KeySet> | KeySet {
    const state = this.stateOf(tenant);
    if (state.set && state.set.expiresAt > Date.now()) return state.set;
    return this.read(tenant, state);
  }

  /**
   * A token names a kid the cached set lacks (new key after a rotation, or garbage): read the set
   * again, but not sooner than `cooldownMs` after the last read; requests arriving meanwhile wait
   * for that one read.
   */
  private async afterUnknownKid(tenant: VerifierTenant, seen: KeySet): Promise<KeySet> {
    const state = this.stateOf(tenant);
    if (state.loading) return state.loading;
    if (state.set !== seen) return state.set ?? this.read(tenant, state);
    const wait = state.lastRead + this.cooldownMs - Date.now();
    if (wait <= 0) return this.read(tenant, state);
    const read = new Promise<void>((r) => setTimeout(r, wait).unref()).then(() => this.read(tenant, state, true));
    state.loading = read;
    return read;
  }

  private stateOf(tenant: VerifierTenant): TenantKeys {
    let state = this.keys.get(tenant.name);
    if (!state || state.schema !== tenant.schema) {
      // Tokens verified against an earlier state's set no longer match `state.set`: verify() drops
      // them as they come, and the LRU the rest.
      state = { schema: tenant.schema, set: undefined, loading: undefined, lastRead: 0 };
      this.keys.set(tenant.name, state);
    }
    return state;
  }

  private read(tenant: VerifierTenant, state: TenantKeys, scheduled = false): Promise<KeySet> {
    if (state.loading && !scheduled) return state.loading;
    const loading: Promise<KeySet> = (async () => {
      state.lastRead = Date.now();
      const keys = (await publicKeys(this.dbs.of(tenant), tenant.schema)).filter((k) => k.alg === SIGNING_ALG);
      const fingerprint = JSON.stringify(keys.map((k) => [k.kid, k.jwk]));
      const expiresAt = Date.now() + this.jwksTtlMs;
      if (state.set && state.set.fingerprint === fingerprint) {
        state.set.expiresAt = expiresAt; // unchanged: tokens verified against it stay verified
      } else {
        const jwks = keys.map((k) => ({ ...k.jwk, kid: k.kid, alg: SIGNING_ALG }));
        state.set = { fingerprint, kids: new Set(keys.map((k) => k.kid)), resolve: createLocalJWKSet({ keys: jwks }), expiresAt };
      }
      return state.set;
    })().finally(() => {
      if (state.loading === loading) state.loading = undefined;
    });
    state.loading = loading;
    return loading;
  }
}

/** A token's text has no NUL (COMPACT_JWS), so one separates it from the tenant's name. */
function verifiedKey(tenant: string, token: string): string {
  return `${tenant}\0${token}`;
}

/** The lower-cased host of an issuer that is an http(s) origin (no path, query, fragment or user), else undefined. */
export function hostOfIssuer(iss: string): string | undefined {
  if (!/^https?:\/\//i.test(iss)) return undefined;
  let url: URL;
  try {
    url = new URL(iss);
  } catch {
    return undefined;
  }
  if (url.username || url.password || url.search || url.hash || (url.pathname !== '/' && url.pathname !== '')) return undefined;
  if (iss.includes('?') || iss.includes('#')) return undefined;
  const host = url.hostname.toLowerCase();
  return host.endsWith('.') ? host.slice(0, -1) : host;
}

function refusal(e: unknown): unknown {
  if (e instanceof AccessTokenError) return e;
  if (e instanceof joseErrors.JWTExpired) return new AccessTokenError('expired', 'token expired', { cause: e });
  if (e instanceof joseErrors.JWTClaimValidationFailed) {
    const reason: AccessTokenFailure = e.claim === 'aud' ? 'audience' : e.claim === 'typ' ? 'type' : e.claim === 'nbf' ? 'not_yet_valid' : 'claims';
    return new AccessTokenError(reason, e.message, { cause: e });
  }
  if (e instanceof joseErrors.JWSSignatureVerificationFailed) return new AccessTokenError('signature', 'signature verification failed', { cause: e });
  if (e instanceof joseErrors.JOSEAlgNotAllowed || e instanceof joseErrors.JOSENotSupported) {
    return new AccessTokenError('unsupported_alg', e.message, { cause: e });
  }
  if (e instanceof joseErrors.JWKSNoMatchingKey || e instanceof joseErrors.JWKSMultipleMatchingKeys) {
    return new AccessTokenError('unknown_key', e.message, { cause: e });
  }
  if (e instanceof joseErrors.JOSEError) return new AccessTokenError('malformed', e.message, { cause: e });
  return e; // the database, not the token: let the caller answer 500
}
