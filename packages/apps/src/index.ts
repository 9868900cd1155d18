export { whitelist, whitelistedOf, type HttpVerb, type WhitelistOptions, type WhitelistedMethod, type MethodArgs, type MethodContext, type MethodFunction, type MethodSettings } from './whitelist';
export { loadApps, type AppSource, type LoadedApps } from './loader';
