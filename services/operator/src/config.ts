import { loadPlatformConfig, readSettings, type PlatformConfig, type Setting, type SettingsOf } from '@quire/config';
import { z } from 'zod';

const optionalText = z
  .string()
  .trim()
  .optional()
  .transform((v) => (v === '' ? undefined : v));

const annotations = z
  .string()
  .trim()
  .default('')
  .transform((v, ctx) => {
    if (v === '') return {};
    try {
      return z.record(z.string(), z.string()).parse(JSON.parse(v));
    } catch {
      ctx.addIssue({ code: 'custom', message: 'must be a JSON object of string values' });
      return z.NEVER;
    }
  });

/** The operator's settings: name -> environment variable and schema. */
const operatorSettings = {
  /** A kubeconfig file; unset: client-node's default (KUBECONFIG, ~/.kube/config, else the pod's service account). */
  kubeconfig: ['KUBECONFIG', optionalText],
  /** The namespace whose Tenants are reconciled (and where Ingresses, Secrets, Events and the Lease live). Default: the pod's, else the kubeconfig context's. */
  namespace: ['OPERATOR_NAMESPACE', optionalText],
  /** This replica's name in the Lease, used as is (the chart sets the pod name). Default: `<hostname>_<random>`, new for every process. */
  identity: ['OPERATOR_IDENTITY', optionalText],
  leaseName: ['OPERATOR_LEASE_NAME', z.string().trim().min(1).default('quire-operator')],
  /** How long a Lease holds without renewal before another replica may take it (client-go: 15 s). */
  leaseDurationSeconds: ['OPERATOR_LEASE_DURATION_SECONDS', z.coerce.number().int().min(1).max(3600).default(15)],
  /** A leader that could not renew for this long steps down (client-go: 10 s; below the lease duration). */
  renewDeadlineMs: ['OPERATOR_RENEW_DEADLINE_MS', z.coerce.number().int().min(100).default(10_000)],
  /** How often the leader renews and the others try to acquire (client-go: 2 s). */
  retryPeriodMs: ['OPERATOR_RETRY_PERIOD_MS', z.coerce.number().int().min(50).default(2_000)],
  /** Reconciles that run at once. */
  workers: ['OPERATOR_WORKERS', z.coerce.number().int().min(1).max(64).default(2)],
  /** Every Tenant is reconciled again this often even when nothing changed (drift repair). */
  resyncSeconds: ['OPERATOR_RESYNC_SECONDS', z.coerce.number().int().min(0).default(600)],
  /**
   * How often every Tenant's status.usage is read again (one query per 500 Tenants; only those whose
   * figures changed are reconciled and written). 0: read only when a Tenant is reconciled.
   */
  usageRefreshSeconds: ['OPERATOR_USAGE_REFRESH_SECONDS', z.coerce.number().int().min(0).max(86_400).default(60)],
  /** Per-Tenant retry backoff after a failure: doubles from base to max. */
  backoffBaseMs: ['OPERATOR_BACKOFF_BASE_MS', z.coerce.number().int().min(1).default(500)],
  backoffMaxMs: ['OPERATOR_BACKOFF_MAX_MS', z.coerce.number().int().min(1).default(300_000)],
  /**
   * How long a moved tenant's old copy is kept after the switch (processes that have not heard of the
   * move yet still read it) before it is dropped; unset: the move's own default (10 s).
   */
  moveSourceGraceMs: ['OPERATOR_MOVE_SOURCE_GRACE_MS', z.coerce.number().int().min(0).max(3_600_000).optional()],
  /** The Service custom-domain Ingresses send everything else to (port by name or number). */
  apiService: ['OPERATOR_API_SERVICE', z.string().trim().min(1).default('quire-api')],
  apiServicePort: ['OPERATOR_API_SERVICE_PORT', z.string().trim().min(1).default('http')],
  /** The Service for /oauth and /.well-known when the auth service runs on its own; unset: the API's. */
  authService: ['OPERATOR_AUTH_SERVICE', optionalText],
  authServicePort: ['OPERATOR_AUTH_SERVICE_PORT', z.string().trim().min(1).default('http')],
  ingressClassName: ['OPERATOR_INGRESS_CLASS', optionalText],
  /** cert-manager issuer for the custom domains' certificates (ingress-shim annotation); unset: none. */
  certIssuer: ['OPERATOR_CERT_ISSUER', optionalText],
  certIssuerKind: ['OPERATOR_CERT_ISSUER_KIND', z.enum(['ClusterIssuer', 'Issuer']).default('ClusterIssuer')],
  /** The TLS Secret of a tenant's custom domains; `{tenant}` is replaced by its name. Unset: no TLS block. */
  tlsSecretName: ['OPERATOR_TLS_SECRET_NAME', optionalText.refine((v) => v === undefined || v.includes('{tenant}'), 'must contain {tenant}')],
  /** More annotations on every tenant Ingress, as a JSON object (proxy body size, …). */
  ingressAnnotations: ['OPERATOR_INGRESS_ANNOTATIONS', annotations],
} as const satisfies Record<string, Setting>;

export type OperatorConfig = SettingsOf<typeof operatorSettings> & { platform: PlatformConfig };

export function loadOperatorConfig(env: NodeJS.ProcessEnv = process.env): OperatorConfig {
  return { platform: loadPlatformConfig(env), ...readSettings(operatorSettings, env) };
}
