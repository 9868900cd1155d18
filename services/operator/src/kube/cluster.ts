import {
  CoordinationV1Api,
  CoreV1Api,
  CustomObjectsApi,
  EventsV1Api,
  KubernetesObjectApi,
  NetworkingV1Api,
  PatchStrategy,
  setHeaderOptions,
  type EventsV1Event,
  type KubeConfig,
  type KubernetesListObject,
  type V1Ingress,
  type V1Lease,
  type V1Secret,
} from '@kubernetes/client-node';
import { FIELD_MANAGER, GROUP, PLURAL, VERSION, type TenantResource, type TenantStatus, type TenantUsageStatus } from '../tenant-resource';
import { isNotFound } from './errors';

const MERGE_PATCH = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
/**
 * Every status field but usage (merged on its own), each written at every status patch (null when
 * absent, which removes it). Exhaustive: a field TenantStatus gains must be added here, or it would
 * never be written.
 */
const STATUS_FIELD_SET = {
  observedGeneration: true,
  schema: true,
  cluster: true,
  hosts: true,
  adminSecretName: true,
  conditions: true,
} as const satisfies Record<Exclude<keyof TenantStatus, 'usage'>, true>;
const STATUS_FIELDS = Object.keys(STATUS_FIELD_SET) as (keyof typeof STATUS_FIELD_SET)[];
const USAGE_FIELDS = [
  'plan',
  'requestsToday',
  'requestSecondsToday',
  'databaseSecondsToday',
  'databaseBytes',
  'fileBytes',
  'users',
  'measuredAt',
] as const satisfies readonly (keyof TenantUsageStatus)[];

/**
 * Every Kubernetes API call the operator makes, in the one namespace it serves. Custom resources
 * are changed only by JSON merge patches (strategic merge does not apply to them); Ingresses by
 * server-side apply; writes that must not race carry `metadata.resourceVersion` (409 when stale).
 */
export class ClusterApi {
  private readonly custom: CustomObjectsApi;
  private readonly core: CoreV1Api;
  private readonly networking: NetworkingV1Api;
  private readonly events: EventsV1Api;
  private readonly coordination: CoordinationV1Api;
  private readonly objects: KubernetesObjectApi;

  constructor(
    readonly kubeConfig: KubeConfig,
    readonly namespace: string,
  ) {
    this.custom = kubeConfig.makeApiClient(CustomObjectsApi);
    this.core = kubeConfig.makeApiClient(CoreV1Api);
    this.networking = kubeConfig.makeApiClient(NetworkingV1Api);
    this.events = kubeConfig.makeApiClient(EventsV1Api);
    this.coordination = kubeConfig.makeApiClient(CoordinationV1Api);
    this.objects = KubernetesObjectApi.makeApiClient(kubeConfig);
  }

  get tenantsPath(): string {
    return `/apis/${GROUP}/${VERSION}/namespaces/${this.namespace}/${PLURAL}`;
  }

  get ingressesPath(): string {
    return `/apis/networking.k8s.io/v1/namespaces/${this.namespace}/ingresses`;
  }

  get secretsPath(): string {
    return `/api/v1/namespaces/${this.namespace}/secrets`;
  }

  private tenantRef(name: string) {
    return { group: GROUP, version: VERSION, namespace: this.namespace, plural: PLURAL, name };
  }

  listTenants(): Promise<KubernetesListObject<TenantResource>> {
    return this.custom.listNamespacedCustomObject({ group: GROUP, version: VERSION, namespace: this.namespace, plural: PLURAL }) as Promise<
      KubernetesListObject<TenantResource>
    >;
  }

  listIngresses(labelSelector: string): Promise<KubernetesListObject<V1Ingress>> {
    return this.networking.listNamespacedIngress({ namespace: this.namespace, labelSelector });
  }

  listSecrets(labelSelector: string): Promise<KubernetesListObject<V1Secret>> {
    return this.core.listNamespacedSecret({ namespace: this.namespace, labelSelector });
  }

  /** A merge patch of the Tenant (metadata and spec); include `metadata.resourceVersion` to make it conditional. */
  patchTenant(name: string, patch: object): Promise<TenantResource> {
    return this.custom.patchNamespacedCustomObject({ ...this.tenantRef(name), body: patch }, MERGE_PATCH) as Promise<TenantResource>;
  }

  /**
   * Makes the status subresource exactly `status` (changes nothing else, never bumps the generation).
   * A merge patch keeps what it does not mention, so each field left out is sent as null (removed).
   */
  patchTenantStatus(name: string, status: TenantStatus): Promise<TenantResource> {
    // A nested object is merged too: usage's fields left out are removed the same way.
    const body = { status: { ...withNulls(status, STATUS_FIELDS), usage: status.usage ? withNulls(status.usage, USAGE_FIELDS) : null } };
    return this.custom.patchNamespacedCustomObjectStatus({ ...this.tenantRef(name), body }, MERGE_PATCH) as Promise<TenantResource>;
  }

  async readSecret(name: string): Promise<V1Secret | undefined> {
    try {
      return await this.core.readNamespacedSecret({ name, namespace: this.namespace });
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  /** Creates the Secret; 409 AlreadyExists when it is there (it is never replaced). */
  createSecret(secret: V1Secret): Promise<V1Secret> {
    return this.core.createNamespacedSecret({ namespace: this.namespace, body: secret });
  }

  async deleteSecret(name: string): Promise<boolean> {
    try {
      await this.core.deleteNamespacedSecret({ name, namespace: this.namespace });
      return true;
    } catch (err) {
      if (isNotFound(err)) return false;
      throw err;
    }
  }

  /** Server-side apply: the Ingress becomes exactly this, as far as the operator's fields go. */
  applyIngress(ingress: V1Ingress): Promise<V1Ingress> {
    const body = { apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', ...ingress, metadata: { ...ingress.metadata, namespace: this.namespace } };
    return this.objects.patch(body, undefined, undefined, FIELD_MANAGER, true, PatchStrategy.ServerSideApply);
  }

  async deleteIngress(name: string): Promise<boolean> {
    try {
      await this.networking.deleteNamespacedIngress({ name, namespace: this.namespace });
      return true;
    } catch (err) {
      if (isNotFound(err)) return false;
      throw err;
    }
  }

  createEvent(event: EventsV1Event): Promise<EventsV1Event> {
    return this.events.createNamespacedEvent({ namespace: this.namespace, body: event });
  }

  async readLease(name: string): Promise<V1Lease | undefined> {
    try {
      return await this.coordination.readNamespacedLease({ name, namespace: this.namespace });
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  createLease(lease: V1Lease): Promise<V1Lease> {
    return this.coordination.createNamespacedLease({ namespace: this.namespace, body: lease });
  }

  /** PUT with the read resourceVersion: 409 when another replica wrote it first (compare-and-swap). */
  replaceLease(lease: V1Lease): Promise<V1Lease> {
    return this.coordination.replaceNamespacedLease({ name: lease.metadata?.name ?? '', namespace: this.namespace, body: lease });
  }
}

/** `fields` of `value`, each it leaves out as null (which a merge patch removes). */
function withNulls<T extends object>(value: T, fields: readonly (keyof T & string)[]): Record<string, unknown> {
  return Object.fromEntries(fields.map((field) => [field, value[field] ?? null]));
}
