export * from './whitelist';
export { loadApps, docMethodOf, type AppSource, type LoadedApps, type SchedulerEvent } from './loader';
