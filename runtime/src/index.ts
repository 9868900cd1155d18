export { createRuntime, appSources, SERVICES, type Runtime, type RuntimeOptions, type ServiceName } from './runtime';
export { loadRuntimeConfig, type RuntimeConfig } from './config';
