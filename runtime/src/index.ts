export { createRuntime, appSources, SERVICES, ALL_IN_ONE, type Runtime, type RuntimeOptions, type ServiceName } from './runtime';
export { loadRuntimeConfig, type RuntimeConfig } from './config';
