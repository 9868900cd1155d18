export { createApiListener, type ApiAppOptions } from './app';
export { loadApiConfig, type ApiConfig } from './config';
export { startApiServer, type RunningServer, type MountedBefore, type RealtimeSettings } from './server';
export { API_ROUTES } from './app';
