export { loadAuthConfig, type AuthConfig } from './config';
export { createAuthMount, startAuthService, type AuthMount, type AuthService } from './service';
export { AuthMetrics } from './metrics';
