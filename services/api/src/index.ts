export { createApiApp, type ApiAppOptions } from './app';
export { loadApiConfig, type ApiConfig } from './config';
export { startApiServer, type RunningServer } from './server';
