export { createApiListener, type ApiAppOptions } from './app';
export { loadApiConfig, type ApiConfig } from './config';
export { startApiServer, type RunningServer, type MountedBefore } from './server';
export { API_ROUTES } from './app';
