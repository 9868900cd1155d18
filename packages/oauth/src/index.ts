export { KEYS_TABLE, SIGNING_ALG, keysTableDDL, publicKeys, privateKeys, createSigningKey, dropExpiredKeys, type PublicKey } from './keys';
export { REVOCATIONS_TABLE, revocationsTableDDL, recordRevocation, loadRevocations, type RevokedSets } from './revocations';
export {
  OIDC_TABLE,
  oidcTableDDL,
  upsertModel,
  findModel,
  findModelByUid,
  findModelByUserCode,
  consumeModel,
  destroyModel,
  revokeGrantModels,
  activeGrantCount,
  purgeExpiredModels,
  type StoredModel,
} from './oidc-store';
export { tenantAudience, TENANT_AUDIENCE_PREFIX } from './audience';
export { ALL_SCOPE, IDENTITY_SCOPES, parseScopes, doctypeScope, parseDoctypeScope, isKnownScope, isScopeRestricted, scopeAccess, scopeAllows } from './scopes';
export { RevocationCache, type RevocationCacheOptions, type RevocationTenant } from './revocation-cache';
export {
  AccessTokenVerifier,
  AccessTokenError,
  hostOfIssuer,
  type AccessTokenFailure,
  type VerifiedAccessToken,
  type VerifierOptions,
  type VerifierTenant,
} from './verify';
export { OAuthRuntime, type OAuthRuntimeOptions, type OAuthTenant, type BearerAuthentication, type BearerOutcome } from './runtime';
export { oauthMigrations } from './schema';
