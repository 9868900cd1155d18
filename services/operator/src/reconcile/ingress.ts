import { createHash } from 'node:crypto';
import type { V1HTTPIngressPath, V1Ingress, V1OwnerReference, V1ServiceBackendPort } from '@kubernetes/client-node';
import type { OperatorConfig } from '../config';
import { MANAGED_BY, TENANT_LABEL } from '../tenant-resource';
import { canonicalJson } from './canonical';

export type IngressConfig = Pick<
  OperatorConfig,
  | 'apiService'
  | 'apiServicePort'
  | 'authService'
  | 'authServicePort'
  | 'ingressClassName'
  | 'certIssuer'
  | 'certIssuerKind'
  | 'tlsSecretName'
  | 'ingressAnnotations'
>;

const APPLIED_HASH = 'quire.dev/applied-hash';

/** `<tenant>-domains`: the one Ingress of a tenant's custom domains (the wildcard host is the chart's). */
export function ingressNameOf(tenant: string): string {
  return `${tenant}-domains`;
}

function port(value: string): V1ServiceBackendPort {
  return /^\d+$/.test(value) ? { number: Number(value) } : { name: value };
}

/** With a cert-manager issuer and no TLS Secret name configured, the Secret cert-manager fills. */
function tlsSecretOf(tenant: string, config: IngressConfig): string | undefined {
  const template = config.tlsSecretName ?? (config.certIssuer ? '{tenant}-domains-tls' : undefined);
  return template?.replaceAll('{tenant}', tenant);
}

/**
 * The Ingress for a tenant's custom domains, routed as the chart's Ingress routes the wildcard:
 * OAuth and OpenID discovery to the auth Service (when it runs on its own), everything else to the API.
 */
export function desiredIngress(tenant: string, domains: readonly string[], owner: V1OwnerReference, config: IngressConfig): V1Ingress {
  const api = { service: { name: config.apiService, port: port(config.apiServicePort) } };
  const auth = config.authService ? { service: { name: config.authService, port: port(config.authServicePort) } } : api;
  const paths: V1HTTPIngressPath[] = [
    { path: '/oauth', pathType: 'Prefix', backend: auth },
    { path: '/.well-known', pathType: 'Prefix', backend: auth },
    { path: '/', pathType: 'Prefix', backend: api },
  ];
  const annotations: Record<string, string> = { ...config.ingressAnnotations };
  if (config.certIssuer) annotations[config.certIssuerKind === 'Issuer' ? 'cert-manager.io/issuer' : 'cert-manager.io/cluster-issuer'] = config.certIssuer;
  const tlsSecret = tlsSecretOf(tenant, config);
  return withAppliedHash({
    apiVersion: 'networking.k8s.io/v1',
    kind: 'Ingress',
    metadata: {
      name: ingressNameOf(tenant),
      labels: { ...MANAGED_BY, [TENANT_LABEL]: tenant },
      annotations,
      ownerReferences: [owner],
    },
    spec: {
      ...(config.ingressClassName ? { ingressClassName: config.ingressClassName } : {}),
      ...(tlsSecret ? { tls: [{ hosts: [...domains], secretName: tlsSecret }] } : {}),
      rules: domains.map((host) => ({ host, http: { paths } })),
    },
  });
}

/**
 * Whether the Ingress in the cache is what the operator would apply: same applied hash (so a changed
 * operator setting, e.g. a removed annotation, is applied again) and routes nobody has edited since.
 */
export function ingressUpToDate(current: V1Ingress | undefined, desired: V1Ingress): boolean {
  if (!current) return false;
  const routes = (i: V1Ingress) => canonicalJson({ ingressClassName: i.spec?.ingressClassName, tls: i.spec?.tls, rules: i.spec?.rules });
  return current.metadata?.annotations?.[APPLIED_HASH] === desired.metadata?.annotations?.[APPLIED_HASH] && routes(current) === routes(desired);
}

/** Stamps `ingress` with the hash of everything in it. */
function withAppliedHash(ingress: V1Ingress): V1Ingress {
  const hash = createHash('sha256').update(canonicalJson(ingress)).digest('hex').slice(0, 16);
  return { ...ingress, metadata: { ...ingress.metadata, annotations: { ...ingress.metadata?.annotations, [APPLIED_HASH]: hash } } };
}
