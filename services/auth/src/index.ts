export { loadAuthConfig, type AuthConfig } from './config';
export { createAuthMount, startAuthService, AUTH_ROUTES, type AuthMount, type AuthService } from './service';
export { AuthMetrics } from './metrics';
