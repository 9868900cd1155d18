export { generateApiKey, generateApiSecret, hashApiSecret, verifyApiSecret, hashPassword, verifyPassword } from './secrets';
export { AUTH_TABLE, authTableDDL, storeSecretHash, storeEncryptedSecret, readSecretHash, deleteSecrets } from './auth-table';
export { ApiKeyAuthenticator, loadPrincipal, type TenantRef, type PrincipalCacheOptions } from './principals';
export {
  SESSIONS_TABLE,
  sessionsTableDDL,
  hashSessionId,
  createSession,
  deleteSession,
  endSession,
  SESSION_COOKIES,
  sessionCsrfToken,
  SessionAuthenticator,
  type ActiveSession,
  type NewSession,
} from './sessions';
export { LOGIN_ATTEMPTS_TABLE, loginAttemptsTableDDL, authenticatePassword, DEFAULT_LOGIN_POLICY, type LoginPolicy, type LoggedInUser } from './login';
export { createSecretBox, encryptionKey, type SecretBox } from './secret-box';
export { authMigrations } from './schema';
