export * from './whitelist';
export { loadApps, docMethodOf, type AppSource, type LoadedApps } from './loader';
