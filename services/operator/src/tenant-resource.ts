import type { KubernetesObject } from '@kubernetes/client-node';
import { z } from 'zod';

/** The Tenant custom resource (charts/quire/crds/tenants.quire.dev.yaml). */
export const GROUP = 'quire.dev';
export const VERSION = 'v1alpha1';
export const PLURAL = 'tenants';
export const KIND = 'Tenant';
export const API_VERSION = `${GROUP}/${VERSION}`;

/** Holds a Tenant until its Ingress, Secret and (with `Delete`) its data are gone. */
export const FINALIZER = 'quire.dev/tenant';
/** Marks what the operator made (Ingresses, Secrets), which is what its informers watch. */
export const MANAGED_BY = { 'app.kubernetes.io/managed-by': 'quire-operator' } as const;
export const TENANT_LABEL = 'quire.dev/tenant';
export const FIELD_MANAGER = 'quire-operator';
/** A cluster name as the CRD's pattern allows it (empty: none given). */
const CLUSTER_NAME_RE = /^(?:[a-z](?:[-a-z0-9]{0,38}[a-z0-9])?)?$/;

export type ConditionType = 'Ready' | 'SchemaReady' | 'DomainsReady' | 'PlanReady' | 'ClusterReady';

/** metav1.Condition. */
export interface Condition {
  type: ConditionType;
  status: 'True' | 'False' | 'Unknown';
  reason: string;
  message: string;
  lastTransitionTime: string;
  observedGeneration?: number;
}

/**
 * What the tenant used and keeps, as `quire tenant usage` shows it. A figure not measured yet is left
 * out rather than null: a merge patch removes a key it sets to null, so null could never be stored.
 */
export interface TenantUsageStatus {
  /** Its effective plan (its own, else the default); left out when QUIRE_PLANS defines none. */
  plan?: string;
  requestsToday: number;
  requestSecondsToday: number;
  databaseSecondsToday: number;
  databaseBytes?: number;
  fileBytes?: number;
  users?: number;
  measuredAt?: string;
}

export interface TenantStatus {
  observedGeneration?: number;
  schema?: string;
  /** The Postgres cluster its schema is on (`default`: the platform database). */
  cluster?: string;
  hosts?: string[];
  adminSecretName?: string;
  conditions?: Condition[];
  usage?: TenantUsageStatus;
}

export interface TenantResource extends KubernetesObject {
  spec?: unknown;
  status?: TenantStatus;
}

/** The spec as the controller reads it: the CRD schema checks it too, but a cache may hold anything. */
export const tenantSpecSchema = z.object({
  domains: z.array(z.string()).max(100).default([]),
  adminEmail: z.string().max(254).optional(),
  allowCorsOrigins: z
    .array(
      z
        .string()
        .max(2048)
        .refine((o) => o === '*' || isOrigin(o), { message: 'must be * or an origin such as https://app.example.com' }),
    )
    .max(100)
    .default([]),
  deletionPolicy: z.enum(['Retain', 'Delete']).default('Retain'),
  /** Every request answered 503 (`quire tenant suspend`). */
  suspended: z.boolean().default(false),
  /** Reads served, writes answered 503 (`quire tenant suspend --read-only`); `suspended` wins. */
  readOnly: z.boolean().default(false),
  /** One of QUIRE_PLANS' plans (`quire tenant set --plan`); empty or left out: the default plan. */
  plan: z
    .string()
    .max(63)
    .optional()
    .transform((v) => (v === '' ? undefined : v)),
  /** The Postgres cluster its schema is created on (`quire tenant create --cluster`); empty or left out: placed by weight. */
  cluster: z
    .string()
    .max(40)
    .regex(CLUSTER_NAME_RE, { message: 'a cluster name is lower-case letters, digits and hyphens, starting with a letter, at most 40' })
    .optional()
    .transform((v) => (v === '' ? undefined : v)),
});

export type TenantSpec = z.output<typeof tenantSpecSchema>;

function isOrigin(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === 'https:' || url.protocol === 'http:') && url.origin === value;
  } catch {
    return false;
  }
}

/** The spec, or what is wrong with it (a condition message). */
export function readSpec(tenant: TenantResource): { spec: TenantSpec } | { invalid: string } {
  const parsed = tenantSpecSchema.safeParse(tenant.spec ?? {});
  if (parsed.success) return { spec: parsed.data };
  return { invalid: parsed.error.issues.map((i) => `spec.${i.path.join('.')}: ${i.message}`).join('; ') };
}

/** `namespace/name`, the workqueue's key. */
export function keyOf(obj: KubernetesObject): string {
  return `${obj.metadata?.namespace ?? ''}/${obj.metadata?.name ?? ''}`;
}
