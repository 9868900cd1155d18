export { generateApiKey, generateApiSecret, hashApiSecret, verifyApiSecret, hashPassword, verifyPassword } from './secrets';
export { AUTH_TABLE, authTableDDL, storeSecretHash, readSecretHash, deleteSecrets } from './auth-table';
export { ApiKeyAuthenticator, loadPrincipal, type TenantRef, type PrincipalCacheOptions } from './principals';
export { generateKeys, type ApiCredentials } from './keys';
