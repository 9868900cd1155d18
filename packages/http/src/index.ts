export { requestCookies, setCookie, clearCookie, type CookieOptions } from './cookies';
export { parseBasicCredentials, authorizationOf, type BasicCredentials } from './basic';
export { localsOf, requestId } from './request-state';
export { listen, type Listening, type ListenOptions } from './listen';
export { healthEndpoint, operationsListener, type MetricsSource } from './operations';
export { Readiness, type AdvisoryChecks, type ReadinessCheck, type ReadinessReport, type ReadinessOptions } from './readiness';
export { withOperations, type ServiceOperations } from './service-operations';
export { contentSecurityPolicy, pageSecurityHeaders } from './page-security';
export { finishesWithin } from './finishes-within';
