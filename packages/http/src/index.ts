export { requestCookies, setCookie, clearCookie, type CookieOptions } from './cookies';
export { parseBasicCredentials, authorizationOf, type BasicCredentials } from './basic';
export { localsOf, requestId } from './request-state';
export { listen, type Listening, type ListenOptions } from './listen';
export { healthz, metricsEndpoint, operationsListener, type MetricsSource } from './operations';
