/**
 * The Tenant operator in charts/quire (operator.enabled): the Deployment that runs
 * `quire serve operator` with the operator's settings, its ServiceAccount and least-privilege Role,
 * its metrics Service, PDB and NetworkPolicy, and nothing of it when it is off. Then the CRD in
 * charts/quire/crds/: its shape, its openAPIV3Schema compiled with ajv against deploy/tenant-example.yaml
 * and against specs the API server must refuse, and the tenant-name rule (CEL) evaluated as a regex.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Ajv, type ValidateFunction } from 'ajv';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import { describe, expect, it } from 'vitest';
import {
  CHART,
  CHART_CHECK,
  DEPLOY_DIR,
  RENDERER,
  REPO_ROOT,
  beforeAllRendered,
  describeRendered,
  expectValid,
  itRendered,
  itValidates,
  ofKind,
  one,
  renderChart,
  selects,
  type K8sObject,
  type Rendered,
} from './support';

const MINIMAL = ['-f', 'deploy/values-minimal.yaml'];
const PRODUCTION = ['-f', 'deploy/values-production.yaml'];
const ON = ['--set', 'operator.enabled=true'];
const CRDS = ['--include-crds'];
const CUSTOM = [
  ...MINIMAL,
  ...ON,
  '--set-string',
  'fullnameOverride=erp',
  '--set-string',
  'operator.ingress.className=traefik',
  '--set-string',
  'operator.ingress.certIssuer.name=acme-issuer',
  '--set-string',
  'operator.ingress.certIssuer.kind=Issuer',
  '--set-string',
  'operator.ingress.tlsSecretName=',
  '--set-json',
  'operator.ingress.annotations={"traefik.ingress.kubernetes.io/router.tls":"true"}',
  '--set',
  'operator.workers=4',
  '--set',
  'operator.resyncSeconds=0',
  '--set',
  'operator.leaderElection.leaseDurationSeconds=30',
  '--set',
  'networkPolicy.enabled=true',
  '--set-json',
  'operator.networkPolicy.apiServerCidrs=["172.20.0.1/32"]',
];

const SCENARIOS = {
  'values-minimal.yaml, operator on': [...MINIMAL, ...ON],
  'values-production.yaml (operator on, 2 replicas)': PRODUCTION,
  'values-production.yaml, --include-crds': [...PRODUCTION, ...CRDS],
  'values-minimal.yaml, operator on, custom settings': CUSTOM,
  'values-minimal.yaml (operator off)': MINIMAL,
  'values-minimal.yaml (operator off), --include-crds': [...MINIMAL, ...CRDS],
  'values-production.yaml, operator off': [...PRODUCTION, '--set', 'operator.enabled=false'],
} as const satisfies Record<string, readonly string[]>;
type Scenario = keyof typeof SCENARIOS;
const OPERATOR_ON: Scenario[] = [
  'values-minimal.yaml, operator on',
  'values-production.yaml (operator on, 2 replicas)',
  'values-production.yaml, --include-crds',
  'values-minimal.yaml, operator on, custom settings',
];
const OPERATOR_OFF: Scenario[] = [
  'values-minimal.yaml (operator off)',
  'values-minimal.yaml (operator off), --include-crds',
  'values-production.yaml, operator off',
];

const FAILURES: Record<string, { args: string[]; message: RegExp }> = {
  'a renew deadline as long as the lease': {
    args: [...MINIMAL, ...ON, '--set', 'operator.leaderElection.renewDeadlineMs=15000'],
    message: /operator\.leaderElection\.renewDeadlineMs=15000 must be below leaseDurationSeconds \(15s\)/,
  },
  'a retry period as long as the renew deadline': {
    args: [...MINIMAL, ...ON, '--set', 'operator.leaderElection.retryPeriodMs=10000'],
    message: /retryPeriodMs=10000 must be below renewDeadlineMs=10000/,
  },
  'a tenant TLS Secret name without {tenant}': {
    args: [...MINIMAL, ...ON, '--set-string', 'operator.ingress.tlsSecretName=domains-tls'],
    message: /operator\.ingress\.tlsSecretName="domains-tls" must contain \{tenant\}/,
  },
  'an operator grace period below the shutdown drain': {
    args: [...MINIMAL, ...ON, '--set', 'operator.terminationGracePeriodSeconds=10'],
    message: /operator\.terminationGracePeriodSeconds=10 is too low/,
  },
};

const rendered = new Map<string, Rendered>();
const failed = new Map<string, Rendered>();

function get(name: Scenario): K8sObject[] {
  const r = rendered.get(name);
  if (!r) throw new Error(`scenario ${name} was not rendered`);
  return r.objects;
}

const container = (d: K8sObject): any => d.spec.template.spec.containers[0];
const podLabels = (objects: readonly K8sObject[]): Record<string, string>[] => ofKind(objects, 'Deployment').map((d) => d.spec.template.metadata.labels);
/** The Deployments whose pods a label selector picks. */
const selected = (objects: readonly K8sObject[], selector: Record<string, string>): string[] =>
  ofKind(objects, 'Deployment')
    .filter((d) => selects(selector, d.spec.template.metadata.labels))
    .map((d) => d.metadata.name);

/** chart-check's ERROR lines: [file, object, message]. */
function errorLines(output: string): [string, string, string][] {
  return output.split('\n').flatMap((line) => {
    const m = /^ERROR (\S+): ([^:]+): (.*)$/.exec(line);
    return m ? [[m[1]!, m[2]!, m[3]!] as [string, string, string]] : [];
  });
}

/**
 * chart-check validates a CRD against kubernetes-models' JSONSchemaProps, whose compiled schema
 * never reads `description` nor the `x-kubernetes-*` extensions (both are real JSONSchemaProps
 * fields: apiextensions.k8s.io/v1/JSONSchemaProps.d.ts lists them), so it reports them as unknown
 * fields. Those findings, and only those, are the validator's; everything else must be clean.
 */
const isValidatorBlindSpot = ([file, object, message]: [string, string, string]): boolean =>
  file === 'quire/crds/tenants.quire.dev.yaml' &&
  object === 'CustomResourceDefinition/tenants.quire.dev' &&
  /^spec\.versions\[0\]\.schema\.openAPIV3Schema\S*: unknown field "(description|x-kubernetes-[a-z-]+)"$/.test(message);

/** `description` and `x-kubernetes-*` keys dropped from a schema, as kubernetes-models sees it (and before ajv). */
function stripExtensions(node: unknown, dropDescriptions: boolean): unknown {
  if (Array.isArray(node)) return node.map((n) => stripExtensions(n, dropDescriptions));
  if (typeof node !== 'object' || node === null) return node;
  return Object.fromEntries(
    Object.entries(node)
      .filter(([k]) => !k.startsWith('x-kubernetes-') && !(dropDescriptions && k === 'description'))
      .map(([k, v]) => [k, stripExtensions(v, dropDescriptions)]),
  );
}

function runValidator(file: string): Promise<{ status: number; output: string }> {
  const validator = path.join(path.dirname(CHART_CHECK), 'validate.mjs');
  return new Promise((resolve) => {
    execFile(process.execPath, [validator, file], { cwd: REPO_ROOT }, (error, stdout, stderr) => {
      resolve({ status: error ? (typeof error.code === 'number' ? error.code : 1) : 0, output: `${stdout}${stderr}` });
    });
  });
}

beforeAllRendered(async () => {
  await Promise.all([
    ...Object.entries(SCENARIOS).map(async ([name, args]) => rendered.set(name, await renderChart(args))),
    ...Object.entries(FAILURES).map(async ([name, f]) => failed.set(name, await renderChart(f.args))),
  ]);
}, 300_000);

describeRendered(`${RENDERER ?? 'chart-check'} with the operator`, () => {
  it.each(Object.keys(SCENARIOS).filter((n) => !n.includes('--include-crds')))('passes: %s', (name) => {
    expectValid(rendered.get(name)!);
  });

  // chart-check's findings on the CRD; that --include-crds adds it is checked below for every renderer.
  itValidates.each(Object.keys(SCENARIOS).filter((n) => n.includes('--include-crds')))(
    'renders the CRD with --include-crds, with no finding but the validator blind spot: %s',
    (name) => {
      const r = rendered.get(name)!;
      const errors = errorLines(r.output);
      expect(
        errors.filter((e) => !isValidatorBlindSpot(e)),
        r.output,
      ).toEqual([]);
      expect(r.status, r.output).toBe(errors.length === 0 ? 0 : 1);
      const crd = one(r.objects, 'CustomResourceDefinition', 'tenants.quire.dev');
      expect(crd.apiVersion).toBe('apiextensions.k8s.io/v1');
      expect(ofKind(r.objects, 'CustomResourceDefinition')).toHaveLength(1);
    },
  );

  itValidates('validates the CRD cleanly once the fields kubernetes-models cannot see are set aside', async () => {
    const crd = parseYaml(fs.readFileSync(path.join(REPO_ROOT, CHART, 'crds/tenants.quire.dev.yaml'), 'utf8'));
    for (const v of crd.spec.versions) v.schema.openAPIV3Schema = stripExtensions(v.schema.openAPIV3Schema, true);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'quire-crd-'));
    const file = path.join(dir, 'crd.yaml');
    fs.writeFileSync(file, stringifyYaml(crd));
    const r = await runValidator(file);
    fs.rmSync(dir, { recursive: true, force: true });
    expect(r.status, r.output).toBe(0);
    expect(r.output).toMatch(/1 manifests, 0 errors/);
  });

  it.each(Object.keys(FAILURES))('refuses %s', (name) => {
    const r = failed.get(name)!;
    expect(r.status, r.output).not.toBe(0);
    expect(r.output).toMatch(FAILURES[name]!.message);
  });

  it('checks operator settings only when the operator is on', async () => {
    const r = await renderChart([...MINIMAL, '--set-string', 'operator.ingress.tlsSecretName=domains-tls']);
    expect(r.status, r.output).toBe(0);
  }, 60_000);
});

describeRendered.each(OPERATOR_ON)('operator on: %s', (name) => {
  const custom = name === 'values-minimal.yaml, operator on, custom settings';
  const production = name.startsWith('values-production.yaml');
  const full = custom ? 'erp' : 'quire';
  const operatorName = `${full}-operator`;

  it('runs `quire serve operator` as a hardened Deployment probed on the metrics port', () => {
    const objects = get(name);
    expect(ofKind(objects, 'Deployment')).toHaveLength(5);
    const d = one(objects, 'Deployment', operatorName);
    expect(d.metadata.labels?.['app.kubernetes.io/component']).toBe('operator');
    expect(d.spec.replicas).toBe(production ? 2 : 1);
    expect(d.spec.strategy).toEqual({ type: 'RollingUpdate', rollingUpdate: { maxSurge: '25%', maxUnavailable: 0 } });
    const pod = d.spec.template.spec;
    const ctr = container(d);
    expect(ctr.name).toBe('operator');
    expect(ctr.args).toEqual(['serve', 'operator']);
    expect(ctr.image).toBe(container(one(objects, 'Deployment', `${full}-api`)).image);
    expect(ctr.ports).toEqual([{ name: 'metrics', containerPort: 9464, protocol: 'TCP' }]);
    expect(ctr.startupProbe.httpGet).toEqual({ path: '/healthz', port: 'metrics' });
    expect(ctr.livenessProbe.httpGet).toEqual({ path: '/healthz', port: 'metrics' });
    expect(ctr.readinessProbe.httpGet).toEqual({ path: '/readyz', port: 'metrics' });
    expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 10001, seccompProfile: { type: 'RuntimeDefault' } });
    expect(ctr.securityContext).toMatchObject({
      runAsNonRoot: true,
      readOnlyRootFilesystem: true,
      allowPrivilegeEscalation: false,
      capabilities: { drop: ['ALL'] },
      seccompProfile: { type: 'RuntimeDefault' },
    });
    expect(pod.volumes).toEqual([{ name: 'tmp', emptyDir: {} }]);
    expect(ctr.volumeMounts).toEqual([{ name: 'tmp', mountPath: '/tmp' }]);
    expect(ctr.resources.requests).toBeDefined();
    expect(ctr.resources.limits).toBeDefined();
  });

  it('uses its own ServiceAccount with the token mounted; every other pod keeps it unmounted', () => {
    const objects = get(name);
    const pod = one(objects, 'Deployment', operatorName).spec.template.spec;
    expect(pod.serviceAccountName).toBe(operatorName);
    expect(pod.automountServiceAccountToken).toBe(true);
    const sa = one(objects, 'ServiceAccount', operatorName);
    expect(sa.automountServiceAccountToken).toBeUndefined();
    for (const d of ofKind(objects, 'Deployment').filter((x) => x.metadata.name !== operatorName)) {
      expect(d.spec.template.spec.serviceAccountName, d.metadata.name).not.toBe(operatorName);
      expect(d.spec.template.spec.automountServiceAccountToken, d.metadata.name).toBe(false);
    }
    for (const p of [...ofKind(objects, 'Job'), ...ofKind(objects, 'Pod')]) {
      const spec = p.kind === 'Pod' ? p.spec : p.spec.template.spec;
      expect(spec.automountServiceAccountToken).toBe(false);
    }
  });

  it('reads the database settings like the other processes and carries the operator env contract', () => {
    const objects = get(name);
    const ctr = container(one(objects, 'Deployment', operatorName));
    const api = container(one(objects, 'Deployment', `${full}-api`));
    expect(ctr.envFrom).toEqual(api.envFrom);
    const names: string[] = ctr.env.map((e: any) => e.name);
    expect(new Set(names).size, names.join(', ')).toBe(names.length);
    const env = new Map<string, any>(ctr.env.map((e: any) => [e.name, e]));
    for (const e of api.env) expect(env.get(e.name), e.name).toEqual(e);
    expect(env.get('DATABASE_URL').valueFrom.secretKeyRef).toBeDefined();

    const value = (n: string): string | undefined => env.get(n)?.value;
    expect(env.get('OPERATOR_NAMESPACE')).toEqual({ name: 'OPERATOR_NAMESPACE', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } });
    expect(env.get('OPERATOR_IDENTITY')).toEqual({ name: 'OPERATOR_IDENTITY', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } });
    expect(value('OPERATOR_LEASE_NAME')).toBe(operatorName);
    expect(value('OPERATOR_LEASE_DURATION_SECONDS')).toBe(custom ? '30' : '15');
    expect(value('OPERATOR_RENEW_DEADLINE_MS')).toBe('10000');
    expect(value('OPERATOR_RETRY_PERIOD_MS')).toBe('2000');
    expect(value('OPERATOR_WORKERS')).toBe(custom ? '4' : '2');
    expect(value('OPERATOR_RESYNC_SECONDS')).toBe(custom ? '0' : '600');
    expect(value('OPERATOR_USAGE_REFRESH_SECONDS')).toBe('60');

    // Tenant Ingresses route like the chart's: the api and auth Services, on their `http` port.
    for (const c of ['api', 'auth']) {
      const service = value(`OPERATOR_${c.toUpperCase()}_SERVICE`);
      expect(service).toBe(`${full}-${c}`);
      expect(value(`OPERATOR_${c.toUpperCase()}_SERVICE_PORT`)).toBe('http');
      const svc = one(objects, 'Service', service);
      expect(svc.spec.ports.map((p: any) => p.name)).toContain('http');
      expect(selected(objects, svc.spec.selector)).toEqual([`${full}-${c}`]);
    }

    expect(value('OPERATOR_INGRESS_CLASS')).toBe(custom ? 'traefik' : 'nginx');
    if (custom) {
      expect(value('OPERATOR_CERT_ISSUER')).toBe('acme-issuer');
      expect(value('OPERATOR_CERT_ISSUER_KIND')).toBe('Issuer');
      expect(env.has('OPERATOR_TLS_SECRET_NAME')).toBe(false);
      expect(JSON.parse(value('OPERATOR_INGRESS_ANNOTATIONS')!)).toEqual({ 'traefik.ingress.kubernetes.io/router.tls': 'true' });
    } else if (production) {
      expect(value('OPERATOR_CERT_ISSUER')).toBe('letsencrypt-http01');
      expect(value('OPERATOR_CERT_ISSUER_KIND')).toBe('ClusterIssuer');
      expect(value('OPERATOR_TLS_SECRET_NAME')).toBe('{tenant}-domains-tls');
      expect(JSON.parse(value('OPERATOR_INGRESS_ANNOTATIONS')!)).toEqual({ 'nginx.ingress.kubernetes.io/proxy-body-size': '32m' });
    } else {
      for (const n of ['OPERATOR_CERT_ISSUER', 'OPERATOR_CERT_ISSUER_KIND', 'OPERATOR_INGRESS_ANNOTATIONS']) expect(env.has(n), n).toBe(false);
      expect(value('OPERATOR_TLS_SECRET_NAME')).toBe('{tenant}-domains-tls');
    }
  });

  it('binds exactly the least-privilege namespaced Role to its ServiceAccount, and no cluster-wide rights', () => {
    const objects = get(name);
    expect(ofKind(objects, 'ClusterRole')).toEqual([]);
    expect(ofKind(objects, 'ClusterRoleBinding')).toEqual([]);
    const role = one(objects, 'Role', operatorName);
    expect(role.apiVersion).toBe('rbac.authorization.k8s.io/v1');
    const granted = role.rules.flatMap((r: any) => {
      expect(Object.keys(r).sort()).toEqual(['apiGroups', 'resources', 'verbs']);
      return r.apiGroups.flatMap((g: string) => r.resources.flatMap((res: string) => r.verbs.map((v: string) => `${g}|${res}|${v}`)));
    });
    const wanted = [
      ['quire.dev', 'tenants', ['get', 'list', 'watch', 'patch']],
      ['quire.dev', 'tenants/status', ['get', 'patch']],
      ['quire.dev', 'tenants/finalizers', ['update']],
      ['networking.k8s.io', 'ingresses', ['get', 'list', 'watch', 'create', 'patch', 'delete']],
      ['', 'secrets', ['get', 'list', 'watch', 'create', 'delete']],
      ['events.k8s.io', 'events', ['create', 'patch']],
      ['coordination.k8s.io', 'leases', ['get', 'create', 'update']],
    ] as const;
    expect(new Set(granted)).toEqual(new Set(wanted.flatMap(([g, res, verbs]) => verbs.map((v) => `${g}|${res}|${v}`))));
    expect(granted).toHaveLength(new Set(granted).size);
    expect(granted.some((t: string) => t.includes('*'))).toBe(false);

    const binding = one(objects, 'RoleBinding', operatorName);
    expect(binding.roleRef).toEqual({ apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: operatorName });
    expect(binding.subjects).toEqual([{ kind: 'ServiceAccount', name: operatorName, namespace: 'quire' }]);
    expect(ofKind(objects, 'RoleBinding')).toHaveLength(1);
    expect(ofKind(objects, 'Role')).toHaveLength(1);
  });

  it('exposes the metrics port through a Service that selects only the operator pods', () => {
    const objects = get(name);
    const svc = one(objects, 'Service', operatorName);
    expect(svc.spec.type).toBe('ClusterIP');
    expect(svc.spec.ports).toEqual([{ name: 'metrics', port: 9464, targetPort: 'metrics', protocol: 'TCP', appProtocol: 'http' }]);
    expect(selected(objects, svc.spec.selector)).toEqual([operatorName]);
    const pdb = one(objects, 'PodDisruptionBudget', operatorName);
    expect(selected(objects, pdb.spec.selector.matchLabels)).toEqual([operatorName]);
    expect(pdb.spec.maxUnavailable).toBe(1);
    expect(podLabels(objects).filter((l) => l['app.kubernetes.io/component'] === 'operator')).toHaveLength(1);
  });

  it.runIf(production)('is scraped by the ServiceMonitor and watched by QuirePodsNotReady', () => {
    const objects = get(name);
    const sm = one(objects, 'ServiceMonitor');
    expect(sm.spec.selector.matchExpressions[0].values).toContain('operator');
    expect(selects(sm.spec.selector.matchLabels, one(objects, 'Service', operatorName).metadata.labels)).toBe(true);
    const rules = one(objects, 'PrometheusRule').spec.groups.flatMap((g: any) => g.rules);
    expect(rules.find((r: any) => r.alert === 'QuirePodsNotReady').expr).toMatch(/deployment=~"quire-\([a-z|]*\boperator\b[a-z|]*\)"/);
  });

  it.runIf(production || custom)('lets the operator reach DNS, Postgres, Redis and the API server, and be reached only on metrics', () => {
    const objects = get(name);
    const np = one(objects, 'NetworkPolicy', operatorName);
    expect(selected(objects, np.spec.podSelector.matchLabels)).toEqual([operatorName]);
    expect(np.spec.policyTypes).toEqual(['Ingress', 'Egress']);
    expect(np.spec.ingress).toEqual([
      { from: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } } }], ports: [{ port: 'metrics', protocol: 'TCP' }] },
    ]);
    const ports = np.spec.egress.flatMap((r: any) => r.ports.map((p: any) => `${p.protocol}/${p.port}`)).sort();
    expect(ports).toEqual(['TCP/443', 'TCP/53', 'TCP/5432', 'TCP/6379', 'TCP/6443', 'UDP/53']);
    const apiServer = np.spec.egress.find((r: any) => r.ports.some((p: any) => p.port === 6443));
    expect(apiServer.ports.map((p: any) => p.port)).toEqual([443, 6443]);
    expect(apiServer.to).toEqual(custom ? [{ ipBlock: { cidr: '172.20.0.1/32' } }] : undefined);
  });
});

describeRendered.each(OPERATOR_OFF)('operator off: %s', (name) => {
  it('renders nothing of the operator (the CRD only with --include-crds)', () => {
    const objects = get(name);
    const crds = ofKind(objects, 'CustomResourceDefinition');
    expect(crds.map((c) => c.metadata.name)).toEqual(name.includes('--include-crds') ? ['tenants.quire.dev'] : []);
    const rest = objects.filter((o) => o.kind !== 'CustomResourceDefinition');
    expect(rest.filter((o) => o.metadata.labels?.['app.kubernetes.io/component'] === 'operator')).toEqual([]);
    for (const kind of ['Role', 'RoleBinding', 'ClusterRole', 'ClusterRoleBinding']) expect(ofKind(rest, kind), kind).toEqual([]);
    expect(ofKind(rest, 'ServiceAccount').map((o) => o.metadata.name)).toEqual(['quire']);
    expect(
      ofKind(rest, 'Deployment')
        .map((d) => d.metadata.name)
        .sort(),
    ).toEqual(['quire-api', 'quire-auth', 'quire-webhooks', 'quire-worker']);
    const text = JSON.stringify(rest);
    for (const needle of ['OPERATOR_', 'quire-operator', 'quire.dev', 'serve operator']) expect(text).not.toContain(needle);
    for (const d of ofKind(rest, 'Deployment')) expect(d.spec.template.spec.automountServiceAccountToken).toBe(false);
    for (const sm of ofKind(rest, 'ServiceMonitor')) expect(sm.spec.selector.matchExpressions[0].values).toEqual(['api', 'auth', 'webhooks', 'worker']);
  });
});

itRendered('with --include-crds adds the CRD and nothing else', () => {
  const key = (o: K8sObject): string => `${o.kind}/${o.metadata.name}`;
  const pairs: [Scenario, Scenario][] = [
    ['values-minimal.yaml (operator off), --include-crds', 'values-minimal.yaml (operator off)'],
    ['values-production.yaml, --include-crds', 'values-production.yaml (operator on, 2 replicas)'],
  ];
  for (const [withCrds, without] of pairs) {
    const base = get(without).map(key);
    expect(get(withCrds).map(key).sort()).toEqual([...base, 'CustomResourceDefinition/tenants.quire.dev'].sort());
  }
});

// ---------------------------------------------------------------------------- the CRD

const crdFile = path.join(REPO_ROOT, CHART, 'crds/tenants.quire.dev.yaml');
const crd = parseYaml(fs.readFileSync(crdFile, 'utf8'));
const version = crd.spec.versions[0];
const openAPI = version.schema.openAPIV3Schema;
const example = parseYaml(fs.readFileSync(path.join(DEPLOY_DIR, 'tenant-example.yaml'), 'utf8'));

/** The schema's nodes with their paths (properties and items), for the structural checks. */
function nodes(schema: any, at = ''): [string, any][] {
  const out: [string, any][] = [[at || '(root)', schema]];
  for (const [k, v] of Object.entries<any>(schema.properties ?? {})) out.push(...nodes(v, `${at}.${k}`));
  if (schema.items) out.push(...nodes(schema.items, `${at}[]`));
  return out;
}

/** The CRD's schema as the API server applies it (less CEL, list types), compiled with ajv. */
function compileTenantSchema(): ValidateFunction {
  const ajv = new Ajv({ strict: false, allErrors: true, useDefaults: true });
  ajv.addFormat('email', /^[^\s@]+@[^\s@]+\.[^\s@]+$/);
  ajv.addFormat('date-time', {
    type: 'string',
    validate: (s: string) => /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/i.test(s) && !Number.isNaN(Date.parse(s)),
  });
  ajv.addFormat('int64', { type: 'number', validate: (n: number) => Number.isSafeInteger(n) });
  return ajv.compile(stripExtensions(openAPI, false) as object);
}

describe('the Tenant CRD (charts/quire/crds/tenants.quire.dev.yaml)', () => {
  const validate = compileTenantSchema();
  const tenant = (spec: unknown, status?: unknown): Record<string, unknown> => ({
    apiVersion: 'quire.dev/v1alpha1',
    kind: 'Tenant',
    metadata: { name: 'acme' },
    spec,
    ...(status === undefined ? {} : { status }),
  });
  const errorsOf = (obj: unknown): string => (validate(obj) ? '' : (validate.errors ?? []).map((e) => `${e.instancePath} ${e.message}`).join('\n'));

  it('names a namespaced quire.dev/v1alpha1 Tenant with its status subresource', () => {
    expect(crd.apiVersion).toBe('apiextensions.k8s.io/v1');
    expect(crd.kind).toBe('CustomResourceDefinition');
    expect(crd.metadata.name).toBe('tenants.quire.dev');
    expect(crd.spec.group).toBe('quire.dev');
    expect(crd.spec.scope).toBe('Namespaced');
    expect(crd.spec.names).toEqual({
      kind: 'Tenant',
      listKind: 'TenantList',
      plural: 'tenants',
      singular: 'tenant',
      shortNames: ['qt'],
      categories: ['quire'],
    });
    expect(crd.spec.versions).toHaveLength(1);
    expect(version).toMatchObject({ name: 'v1alpha1', served: true, storage: true, subresources: { status: {} } });
  });

  it('prints Ready, Plan, Cluster, Hosts and Age (and Reason and Schema with -o wide)', () => {
    expect(version.additionalPrinterColumns).toEqual([
      { name: 'Ready', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].status' },
      { name: 'Reason', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].reason', priority: 1 },
      { name: 'Plan', type: 'string', jsonPath: '.status.usage.plan' },
      { name: 'Cluster', type: 'string', jsonPath: '.status.cluster' },
      { name: 'Hosts', type: 'string', jsonPath: '.status.hosts' },
      { name: 'Schema', type: 'string', jsonPath: '.status.schema', priority: 1 },
      { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
    ]);
  });

  it('has a structural schema: every node typed, every field described, conditions a map keyed by type', () => {
    for (const [at, node] of nodes(openAPI)) {
      expect(typeof node.type, at).toBe('string');
      if (at !== '.metadata' && !at.endsWith('[]')) expect(node.description, `${at} has no description (kubectl explain)`).toMatch(/\S/);
    }
    const spec = openAPI.properties.spec;
    expect(spec.default).toEqual({});
    expect(Object.keys(spec.properties).sort()).toEqual([
      'adminEmail',
      'allowCorsOrigins',
      'cluster',
      'deletionPolicy',
      'domains',
      'plan',
      'readOnly',
      'suspended',
    ]);
    expect(spec.properties.cluster).toMatchObject({ type: 'string', maxLength: 40 });
    expect(spec.properties.deletionPolicy).toMatchObject({ enum: ['Retain', 'Delete'], default: 'Retain' });
    for (const list of ['domains', 'allowCorsOrigins']) expect(spec.properties[list]).toMatchObject({ 'x-kubernetes-list-type': 'set', maxItems: 100 });
    const status = openAPI.properties.status;
    expect(Object.keys(status.properties).sort()).toEqual(['adminSecretName', 'cluster', 'conditions', 'hosts', 'observedGeneration', 'schema', 'usage']);
    expect(Object.keys(status.properties.usage.properties).sort()).toEqual([
      'databaseBytes',
      'databaseSecondsToday',
      'fileBytes',
      'measuredAt',
      'plan',
      'requestSecondsToday',
      'requestsToday',
      'users',
    ]);
    const conditions = status.properties.conditions;
    expect(conditions['x-kubernetes-list-type']).toBe('map');
    expect(conditions['x-kubernetes-list-map-keys']).toEqual(['type']);
    expect(conditions.items.required).toEqual(expect.arrayContaining(conditions['x-kubernetes-list-map-keys']));
    expect(conditions.items.required.sort()).toEqual(['lastTransitionTime', 'message', 'reason', 'status', 'type']);
    expect(conditions.items.properties.status.enum).toEqual(['True', 'False', 'Unknown']);
  });

  it('accepts deploy/tenant-example.yaml, in this CRD group and version', () => {
    expect(example.apiVersion).toBe(`${crd.spec.group}/${version.name}`);
    expect(example.kind).toBe(crd.spec.names.kind);
    expect(example.metadata.name).toBe('acme');
    expect(example.spec.domains).toHaveLength(2);
    expect(example.spec.deletionPolicy).toBe('Retain');
    expect(example.spec.adminEmail).toBeTruthy();
    expect(example.spec.allowCorsOrigins.length).toBeGreaterThan(0);
    expect(errorsOf(example)).toBe('');
  });

  it('defaults an empty or missing spec to deletionPolicy Retain', () => {
    const empty = tenant({});
    expect(errorsOf(empty)).toBe('');
    expect(empty.spec).toEqual({ deletionPolicy: 'Retain' });
    const none: Record<string, unknown> = { apiVersion: 'quire.dev/v1alpha1', kind: 'Tenant', metadata: { name: 'acme' } };
    expect(errorsOf(none)).toBe('');
    expect(none.spec).toEqual({ deletionPolicy: 'Retain' });
  });

  it('accepts a status as the operator writes it', () => {
    const status = {
      observedGeneration: 3,
      schema: 't_acme',
      cluster: 'quire-db-b',
      hosts: ['acme.quire.example.com', 'erp.acme.example'],
      adminSecretName: 'acme-admin-credentials',
      conditions: [
        {
          type: 'Ready',
          status: 'False',
          observedGeneration: 3,
          lastTransitionTime: '2026-05-01T10:00:00Z',
          reason: 'DomainConflict',
          message: 'erp.acme.example: taken',
        },
        { type: 'SchemaReady', status: 'True', lastTransitionTime: '2026-05-01T09:59:58Z', reason: 'Created', message: '' },
        {
          type: 'ClusterReady',
          status: 'False',
          lastTransitionTime: '2026-05-01T10:00:00Z',
          reason: 'Moving',
          message: 'Moving tenant acme from cluster quire-db-b to cluster default: copying its tables (step 1 of 4)',
        },
      ],
    };
    expect(errorsOf(tenant({}, status))).toBe('');
  });

  const badSpecs: [string, unknown, RegExp][] = [
    ['an unknown deletionPolicy', { deletionPolicy: 'Archive' }, /allowed values/],
    ['a lower-case deletionPolicy', { deletionPolicy: 'delete' }, /allowed values/],
    ['a domain with upper case', { domains: ['ERP.acme.example'] }, /must match pattern/],
    ['a domain with a space', { domains: ['erp acme.example'] }, /must match pattern/],
    ['a domain with a scheme', { domains: ['https://erp.acme.example'] }, /must match pattern/],
    ['a domain without a dot', { domains: ['localhost'] }, /must match pattern/],
    ['a wildcard domain', { domains: ['*.acme.example'] }, /must match pattern/],
    ['a domain label over 63 characters', { domains: [`${'a'.repeat(64)}.example`] }, /must match pattern/],
    ['domains as a string', { domains: 'erp.acme.example' }, /must be array/],
    ['101 domains', { domains: Array.from({ length: 101 }, (_, i) => `d${i}.acme.example`) }, /must NOT have more than 100 items/],
    ['an adminEmail that is no address', { adminEmail: 'admin' }, /must match format "email"/],
    ['a CORS origin with a path', { allowCorsOrigins: ['https://app.acme.example/'] }, /must match pattern/],
    ['a CORS origin without a scheme', { allowCorsOrigins: ['app.acme.example'] }, /must match pattern/],
    ['a cluster name with upper case', { cluster: 'Quire-DB-B' }, /must match pattern/],
    ['a cluster name with an underscore', { cluster: 'quire_db_b' }, /must match pattern/],
    ['a cluster name starting with a digit', { cluster: '2nd' }, /must match pattern/],
    ['a cluster name ending with a hyphen', { cluster: 'quire-db-' }, /must match pattern/],
    ['a cluster name of 41 characters', { cluster: 'a'.repeat(41) }, /must NOT have more than 40 characters/],
    ['a cluster as a number', { cluster: 2 }, /must be string/],
  ];

  it.each(badSpecs)('refuses %s', (_what, spec, message) => {
    const result = errorsOf(tenant(spec));
    expect(result).not.toBe('');
    expect(result).toMatch(message);
  });

  it.each(['default', 'quire-db-b', 'b', `a${'b'.repeat(38)}9`, ''])('accepts the cluster %j (empty: placed by weight)', (cluster) => {
    expect(errorsOf(tenant({ cluster }))).toBe('');
  });

  it('accepts "*" and origins with a port as CORS origins', () => {
    expect(errorsOf(tenant({ allowCorsOrigins: ['*', 'http://localhost:3000', 'https://app.acme.example'] }))).toBe('');
  });

  const condition = { type: 'Ready', status: 'True', lastTransitionTime: '2026-05-01T10:00:00Z', reason: 'Created', message: '' };
  const badConditions: [string, Record<string, unknown>][] = [
    ['a status other than True/False/Unknown', { ...condition, status: 'Yes' }],
    ['a reason with a space', { ...condition, reason: 'Not ready' }],
    ['an empty reason', { ...condition, reason: '' }],
    ['a lastTransitionTime that is no date-time', { ...condition, lastTransitionTime: 'yesterday' }],
    ['no lastTransitionTime', { type: 'Ready', status: 'True', reason: 'Created', message: '' }],
  ];

  it.each(badConditions)('refuses a condition with %s', (_what, bad) => {
    expect(errorsOf(tenant({}, { conditions: [bad] }))).not.toBe('');
  });

  describe('the tenant-name rule (x-kubernetes-validations, CEL)', () => {
    const rules = openAPI['x-kubernetes-validations'];
    const rule: string = rules[0].rule;
    const match = /^self\.metadata\.name\.matches\('([^']+)'\)$/.exec(rule);
    // CEL's matches() is RE2; this pattern uses nothing RE2 and JavaScript read differently.
    const nameRe = new RegExp(match?.[1] ?? '(?!)');

    it('is one rule on metadata.name, with a message naming the limits', () => {
      expect(rules).toHaveLength(1);
      expect(match).not.toBeNull();
      expect(rules[0].message).toBe("metadata.name must be a DNS label of at most 40 characters that starts with a letter (it is the tenant's name)");
    });

    it.each(['acme', 'a', 'acme-corp', 'a1', 'x'.repeat(40), `a${'-'.repeat(38)}b`])('accepts %s', (n) => {
      expect(nameRe.test(n)).toBe(true);
    });

    it.each(['1acme', '-x', 'acme-', 'x'.repeat(41), 'Acme', 'ac_me', 'acme.corp', ''])('refuses %j', (n) => {
      expect(nameRe.test(n)).toBe(false);
    });

    it('accepts the example Tenant name', () => {
      expect(nameRe.test(example.metadata.name)).toBe(true);
    });
  });
});
