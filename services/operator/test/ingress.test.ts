import { describe, expect, it } from 'vitest';
import { desiredIngress, ingressUpToDate, type IngressConfig } from '../src/reconcile/ingress';

const owner = { apiVersion: 'quire.dev/v1alpha1', kind: 'Tenant', name: 'acme', uid: 'u-1', controller: true, blockOwnerDeletion: true };
const config: IngressConfig = {
  apiService: 'quire-api',
  apiServicePort: 'http',
  authService: undefined,
  authServicePort: 'http',
  ingressClassName: undefined,
  certIssuer: undefined,
  certIssuerKind: 'ClusterIssuer',
  tlsSecretName: undefined,
  ingressAnnotations: {},
};

describe('the tenant Ingress', () => {
  it('sends everything to the API when auth does not run on its own, and has no TLS without an issuer or Secret name', () => {
    const ingress = desiredIngress('acme', ['erp.acme.example'], owner, { ...config, apiServicePort: '8000' });
    expect(ingress.spec?.tls).toBeUndefined();
    expect(ingress.spec?.ingressClassName).toBeUndefined();
    expect(ingress.spec?.rules?.[0]?.http?.paths.map((p) => [p.path, p.backend.service?.name, p.backend.service?.port])).toEqual([
      ['/oauth', 'quire-api', { number: 8000 }],
      ['/.well-known', 'quire-api', { number: 8000 }],
      ['/', 'quire-api', { number: 8000 }],
    ]);
  });

  it('annotates for a namespaced Issuer and names the TLS Secret from the template', () => {
    const ingress = desiredIngress('acme', ['a.example', 'b.example'], owner, {
      ...config,
      certIssuer: 'acme-http01',
      certIssuerKind: 'Issuer',
      tlsSecretName: 'tls-{tenant}',
      ingressAnnotations: { 'nginx.ingress.kubernetes.io/proxy-body-size': '25m' },
    });
    expect(ingress.metadata?.annotations).toMatchObject({ 'cert-manager.io/issuer': 'acme-http01', 'nginx.ingress.kubernetes.io/proxy-body-size': '25m' });
    expect(ingress.spec?.tls).toEqual([{ hosts: ['a.example', 'b.example'], secretName: 'tls-acme' }]);
  });

  it('is up to date only with the same applied hash and untouched routes', () => {
    const desired = desiredIngress('acme', ['a.example'], owner, config);
    expect(ingressUpToDate(undefined, desired)).toBe(false);
    expect(ingressUpToDate(structuredClone(desired), desired)).toBe(true);
    const edited = structuredClone(desired);
    edited.spec!.rules![0]!.host = 'evil.example';
    expect(ingressUpToDate(edited, desired)).toBe(false);
    const reconfigured = desiredIngress('acme', ['a.example'], owner, { ...config, ingressAnnotations: { x: 'y' } });
    expect(ingressUpToDate(desired, reconfigured)).toBe(false);
  });
});
