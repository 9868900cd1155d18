/** The resource kinds the fake serves, as the real API server's discovery documents describe them. */
export interface ResourceType {
  group: string; // '' for the core group
  version: string;
  resource: string; // plural, as in the URL
  singular: string;
  kind: string;
  namespaced: boolean;
  /** Has a `/status` subresource: main writes ignore status, status writes change only status. */
  status: boolean;
  /** Keeps `metadata.generation`, bumped on every change outside metadata and status. */
  generation: boolean;
  /** PUT without `metadata.resourceVersion` is allowed (false for custom resources, as on the real server). */
  unconditionalUpdate: boolean;
}

export const RESOURCE_TYPES: readonly ResourceType[] = [
  {
    group: 'quire.dev',
    version: 'v1alpha1',
    resource: 'tenants',
    singular: 'tenant',
    kind: 'Tenant',
    namespaced: true,
    status: true,
    generation: true,
    unconditionalUpdate: false,
  },
  {
    group: '',
    version: 'v1',
    resource: 'secrets',
    singular: 'secret',
    kind: 'Secret',
    namespaced: true,
    status: false,
    generation: false,
    unconditionalUpdate: true,
  },
  {
    group: '',
    version: 'v1',
    resource: 'events',
    singular: 'event',
    kind: 'Event',
    namespaced: true,
    status: false,
    generation: false,
    unconditionalUpdate: true,
  },
  {
    group: 'events.k8s.io',
    version: 'v1',
    resource: 'events',
    singular: 'event',
    kind: 'Event',
    namespaced: true,
    status: false,
    generation: false,
    unconditionalUpdate: true,
  },
  {
    group: 'networking.k8s.io',
    version: 'v1',
    resource: 'ingresses',
    singular: 'ingress',
    kind: 'Ingress',
    namespaced: true,
    status: true,
    generation: true,
    unconditionalUpdate: true,
  },
  {
    group: 'coordination.k8s.io',
    version: 'v1',
    resource: 'leases',
    singular: 'lease',
    kind: 'Lease',
    namespaced: true,
    status: false,
    generation: false,
    unconditionalUpdate: true,
  },
];

export function apiVersionOf(type: ResourceType): string {
  return type.group === '' ? type.version : `${type.group}/${type.version}`;
}

/** `tenants.quire.dev`, `secrets`: how the real server names a resource in error messages. */
export function qualifiedResource(type: ResourceType): string {
  return type.group === '' ? type.resource : `${type.resource}.${type.group}`;
}

export function findResourceType(group: string, version: string, resource: string): ResourceType | undefined {
  return RESOURCE_TYPES.find((t) => t.group === group && t.version === version && t.resource === resource);
}
