import { RESOURCE_TYPES } from './resources';
import type { JsonObject } from './types';
import type { DiscoveryRoute } from './routes';

const VERBS = ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'];

/** The discovery documents `KubernetesObjectApi` reads to map a kind to its resource. */
export function discovery(route: DiscoveryRoute): JsonObject | undefined {
  if (route.version === undefined) {
    if (route.legacy) return { kind: 'APIVersions', apiVersion: 'v1', versions: ['v1'], serverAddressByClientCIDRs: [] };
    const groups = [...new Set(RESOURCE_TYPES.filter((t) => t.group !== '').map((t) => t.group))];
    return {
      kind: 'APIGroupList',
      apiVersion: 'v1',
      groups: groups.map((name) => {
        const versions = [...new Set(RESOURCE_TYPES.filter((t) => t.group === name).map((t) => t.version))].map((version) => ({
          groupVersion: `${name}/${version}`,
          version,
        }));
        return { name, versions, preferredVersion: versions[0] ?? null };
      }),
    };
  }
  const types = RESOURCE_TYPES.filter((t) => t.group === route.group && t.version === route.version);
  if (types.length === 0) return undefined;
  return {
    kind: 'APIResourceList',
    apiVersion: 'v1',
    groupVersion: route.group === '' ? route.version : `${route.group ?? ''}/${route.version}`,
    resources: types.flatMap((t) => [
      { name: t.resource, singularName: t.singular, namespaced: t.namespaced, kind: t.kind, verbs: VERBS },
      ...(t.status ? [{ name: `${t.resource}/status`, singularName: '', namespaced: t.namespaced, kind: t.kind, verbs: ['get', 'patch', 'update'] }] : []),
    ]),
  };
}
