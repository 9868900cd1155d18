import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { TenantUsageStatus } from '@quire/operator-service';
import { createRuntime, loadRuntimeConfig, type Runtime } from '@quire/runtime';
import pino from 'pino';
import { hostFetch } from '../support/host-fetch';
import { writeKubeconfig, type FakeKubeApiServer } from '../support/kube-api';
import type { KubeObject } from '../support/kube-api/types';
import { findResourceType } from '../support/kube-api';
import { platformEnv } from '../support/server';

export const NS = 'quire';
export const TENANTS = findResourceType('quire.dev', 'v1alpha1', 'tenants')!;
export const SECRETS = findResourceType('', 'v1', 'secrets')!;
export const INGRESSES = findResourceType('networking.k8s.io', 'v1', 'ingresses')!;
export const EVENTS = findResourceType('events.k8s.io', 'v1', 'events')!;
export const LEASES = findResourceType('coordination.k8s.io', 'v1', 'leases')!;

export interface OperatorOptions {
  identity?: string;
  /** More OPERATOR_* settings. */
  env?: Record<string, string>;
  /** Another database than the suite's. */
  databaseUrl?: string;
}

/**
 * The environment `quire serve operator` reads in these tests: the suite's database (or the given one), a kubeconfig
 * for the fake API server, short leader-election and backoff timings.
 */
export function operatorEnv(kube: FakeKubeApiServer, options: OperatorOptions = {}): NodeJS.ProcessEnv {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'quire-operator-'));
  return {
    ...platformEnv(options.databaseUrl === undefined ? {} : { databaseUrl: options.databaseUrl }),
    KUBECONFIG: writeKubeconfig(kube, dir, NS),
    OPERATOR_NAMESPACE: NS,
    OPERATOR_IDENTITY: options.identity ?? 'operator-0',
    OPERATOR_LEASE_DURATION_SECONDS: '2',
    OPERATOR_RENEW_DEADLINE_MS: '1500',
    OPERATOR_RETRY_PERIOD_MS: '200',
    OPERATOR_BACKOFF_BASE_MS: '100',
    OPERATOR_BACKOFF_MAX_MS: '1000',
    OPERATOR_API_SERVICE: 'quire-api',
    OPERATOR_AUTH_SERVICE: 'quire-auth',
    OPERATOR_INGRESS_CLASS: 'nginx',
    OPERATOR_CERT_ISSUER: 'letsencrypt',
    ...options.env,
  };
}

/** `quire serve operator` in this process, started the one way Quire starts (createRuntime). */
export function startOperator(kube: FakeKubeApiServer, options: OperatorOptions = {}): Promise<Runtime> {
  return createRuntime({
    config: loadRuntimeConfig(operatorEnv(kube, options)),
    serve: ['operator'],
    name: 'quire-operator-test',
    logger: pino({ level: 'silent' }),
  });
}

export function tenantManifest(name: string, spec: Record<string, unknown> = {}): Record<string, unknown> {
  return { apiVersion: 'quire.dev/v1alpha1', kind: 'Tenant', metadata: { name, namespace: NS }, spec };
}

/** `kubectl apply` of a new Tenant, straight into the fake's store. */
export function applyTenant(kube: FakeKubeApiServer, name: string, spec: Record<string, unknown> = {}): KubeObject {
  return kube.store.create(TENANTS, NS, tenantManifest(name, spec) as never);
}

export function tenantObject(kube: FakeKubeApiServer, name: string): KubeObject | undefined {
  return kube.store.tryGet(TENANTS, NS, name);
}

export function condition(
  obj: KubeObject | undefined,
  type: string,
): { status: string; reason: string; message: string; observedGeneration?: number } | undefined {
  const status = obj?.status as { conditions?: { type: string; status: string; reason: string; message: string; observedGeneration?: number }[] } | undefined;
  return status?.conditions?.find((c) => c.type === type);
}

/** Polls until `check` returns a value (not undefined), or fails naming `what`. */
export async function eventually<T>(what: string, check: () => T | undefined | Promise<T | undefined>, ms = 20_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

export function isReady(obj: KubeObject | undefined): boolean {
  const ready = condition(obj, 'Ready');
  return ready?.status === 'True' && ready.observedGeneration === obj?.metadata.generation;
}

export function secretData(obj: KubeObject | undefined): Record<string, string> {
  const data = (obj?.data ?? {}) as Record<string, string>;
  return Object.fromEntries(Object.entries(data).map(([k, v]) => [k, Buffer.from(v, 'base64').toString('utf8')]));
}

/** An API call as a client on `host` sends it (Host header), to the API's port. */
export async function apiAt(port: number, host: string, pathname: string, auth?: string): Promise<{ status: number; body: any }> {
  const res = await hostFetch(`http://${host}:${port}${pathname}`, { headers: { Accept: 'application/json', ...(auth ? { Authorization: auth } : {}) } });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON
  }
  return { status: res.status, body };
}

/** Events recorded about a Tenant, oldest first: `reason` and who reported them. */
export function eventsFor(kube: FakeKubeApiServer, name: string): { reason: string; type: string; note: string; instance: string }[] {
  return kube.store
    .all(EVENTS)
    .filter((e) => (e.regarding as { name?: string } | undefined)?.name === name)
    .map((e) => ({ reason: e.reason as string, type: e.type as string, note: e.note as string, instance: e.reportingInstance as string }));
}

/** status.usage as the operator writes it (figures not measured yet are absent). */
export function usageIn(obj: KubeObject | undefined): TenantUsageStatus | undefined {
  return (obj?.status as { usage?: TenantUsageStatus } | undefined)?.usage;
}
