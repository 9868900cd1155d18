import { findResourceType, type ResourceType } from './resources';

/** A request path resolved to a resource: `/api/v1/namespaces/{ns}/{resource}[/{name}[/status]]`, `/apis/{g}/{v}/...`, or an all-namespaces path. */
export interface ResourceRoute {
  kind: 'resource';
  type: ResourceType;
  namespace: string | undefined;
  name: string | undefined;
  subresource: string | undefined;
}

/** Discovery: `/api`, `/apis`, `/api/v1`, `/apis/{group}/{version}`. */
export interface DiscoveryRoute {
  kind: 'discovery';
  group: string | undefined;
  version: string | undefined;
  legacy: boolean;
}

export type Route = ResourceRoute | DiscoveryRoute | undefined;

export function parseRoute(pathname: string): Route {
  const segments = pathname
    .split('/')
    .filter((s) => s !== '')
    .map(decodeURIComponent);
  let group: string;
  let rest: string[];
  if (segments[0] === 'api') {
    if (segments.length === 1) return { kind: 'discovery', group: undefined, version: undefined, legacy: true };
    group = '';
    rest = segments.slice(1);
  } else if (segments[0] === 'apis') {
    if (segments.length === 1) return { kind: 'discovery', group: undefined, version: undefined, legacy: false };
    if (segments.length === 2) return undefined;
    group = segments[1] ?? '';
    rest = segments.slice(2);
  } else {
    return undefined;
  }
  const [version, ...path] = rest;
  if (version === undefined) return undefined;
  if (path.length === 0) return { kind: 'discovery', group, version, legacy: group === '' };
  let namespace: string | undefined;
  if (path[0] === 'namespaces' && path.length >= 3) {
    namespace = path[1];
    path.splice(0, 2);
  }
  const [resource, name, subresource, ...extra] = path;
  if (resource === undefined || extra.length > 0) return undefined;
  const type = findResourceType(group, version, resource);
  if (!type) return undefined;
  return { kind: 'resource', type, namespace, name, subresource };
}
