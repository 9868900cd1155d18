export * from './whitelist';
export { loadApps, type AppSource, type LoadedApps } from './loader';
