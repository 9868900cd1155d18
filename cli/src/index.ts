export { main } from './main';
export { openRuntime, appSources, type Runtime } from './runtime';
