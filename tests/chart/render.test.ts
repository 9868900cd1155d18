/**
 * charts/quire rendered by chart-check (an offline `helm template` plus Kubernetes schema and
 * policy validation; shared/tools/chart-check/README.md), or by `helm template` where helm is on the
 * PATH (rendering only: support.ts chooses), for the default values, every
 * deploy/values-*.yaml and the modes that change what is rendered (KEDA, hook/plain migration
 * Job, Kubernetes 1.30, the worker off), then read back with `yaml` to check what the validator cannot know:
 * the operations contract (probes, shutdown, ports, metric names) and the chart's own promises.
 */
import fs from 'node:fs';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import { describe, expect, it } from 'vitest';
import { KUBE_STATE_METRICS, isQuireSeries, metricNamesIn } from './contract-metrics';
import {
  CLUSTERS_VALUES,
  DEPLOY_DIR,
  PLANS_VALUES,
  REPO_ROOT,
  RENDERER,
  VALIDATES,
  beforeAllRendered,
  clusterVariable,
  clustersExample,
  deployValuesFiles,
  describeRendered,
  expectValid,
  itRendered,
  ofKind,
  one,
  renderChart,
  plansExample,
  selects,
  type K8sObject,
  type Rendered,
} from './support';

// Placeholders for the default-values renders: none of them may ever show up in a ConfigMap.
const ENCRYPTION_KEY = Buffer.from('chart-test-placeholder-32-bytes!').toString('base64');
const PLACEHOLDERS = {
  databaseUrl: 'postgres://quire:chart-test-db-password@db.chart-test.invalid:5432/quire',
  databaseDirectUrl: 'postgres://quire:chart-test-db-password@db-rw.chart-test.invalid:5432/quire',
  redisUrl: 'redis://:chart-test-redis-password@redis.chart-test.invalid:6379/0',
  encryptionKey: ENCRYPTION_KEY,
};
const SECRETS = Object.entries(PLACEHOLDERS).flatMap(([k, v]) => ['--set-string', `secrets.${k}=${v}`]);
const MINIMAL = ['-f', 'deploy/values-minimal.yaml'];
const PLANS = ['-f', PLANS_VALUES];
const CLUSTERS = ['-f', CLUSTERS_VALUES];
const PRODUCTION = ['-f', 'deploy/values-production.yaml'];
const KEDA = ['--set', 'keda.enabled=true', '--set-string', 'keda.prometheus.serverAddress=http://prometheus.monitoring.svc:9090'];
const EVERYTHING_ON = [
  '--set',
  'serviceMonitor.enabled=true',
  '--set',
  'prometheusRule.enabled=true',
  '--set',
  'networkPolicy.enabled=true',
  '--set',
  'ingress.enabled=true',
  '--set-string',
  'ingress.baseDomain=quire.chart-test.invalid',
  '--set-string',
  'ingress.customDomains[0]=erp.acme.invalid',
  '--set-string',
  'ingress.tls.secretName=quire-wildcard',
];

interface Scenario {
  args: string[];
  /** The kind expected to scale webhooks (HPA or KEDA), or null for fixed replicas. */
  webhooksScaler: 'HorizontalPodAutoscaler' | 'ScaledObject' | null;
  /** Whether KEDA scales the worker (its ScaledObject); without it the worker has fixed replicas. */
  workerScaled?: boolean;
  /** worker.enabled=false: no worker Deployment, Service, PDB or NetworkPolicy. */
  noWorker?: boolean;
  hooks: boolean;
  monitoring: boolean;
  kube130?: boolean;
  /** operator.enabled (values-production.yaml turns it on): a fourth Deployment, Service and NetworkPolicy. */
  operator?: boolean;
}

const SCENARIOS: Record<string, Scenario> = {
  'default values (secrets by --set)': { args: SECRETS, webhooksScaler: 'HorizontalPodAutoscaler', hooks: true, monitoring: false },
  'default values, KEDA': { args: [...SECRETS, ...KEDA], webhooksScaler: 'ScaledObject', workerScaled: true, hooks: true, monitoring: false },
  'default values, KEDA for webhooks only': {
    args: [...SECRETS, ...KEDA, '--set', 'worker.autoscaling.enabled=false'],
    webhooksScaler: 'ScaledObject',
    hooks: true,
    monitoring: false,
  },
  'default values, worker off (no Redis)': {
    args: [
      '--set-string',
      `secrets.databaseUrl=${PLACEHOLDERS.databaseUrl}`,
      '--set-string',
      `secrets.encryptionKey=${ENCRYPTION_KEY}`,
      '--set',
      'worker.enabled=false',
    ],
    webhooksScaler: 'HorizontalPodAutoscaler',
    noWorker: true,
    hooks: true,
    monitoring: false,
  },
  'default values, plain migration Job': {
    args: [...SECRETS, '--set', 'migrations.useHelmHooks=false'],
    webhooksScaler: 'HorizontalPodAutoscaler',
    hooks: false,
    monitoring: false,
  },
  'default values, Kubernetes 1.30': {
    args: [...SECRETS, '--kube-version', '1.30'],
    webhooksScaler: 'HorizontalPodAutoscaler',
    hooks: true,
    monitoring: false,
    kube130: true,
  },
  'default values, Kubernetes 1.27': {
    args: [...SECRETS, '--kube-version', '1.27'],
    webhooksScaler: 'HorizontalPodAutoscaler',
    hooks: true,
    monitoring: false,
  },
  'default values, everything on': {
    args: [...SECRETS, ...EVERYTHING_ON, ...KEDA],
    webhooksScaler: 'ScaledObject',
    workerScaled: true,
    hooks: true,
    monitoring: true,
  },
  'default values, everything on, worker off': {
    args: [...SECRETS, ...EVERYTHING_ON, ...KEDA, '--set', 'worker.enabled=false'],
    webhooksScaler: 'ScaledObject',
    noWorker: true,
    hooks: true,
    monitoring: true,
  },
  'existingSecret with keyMapping': {
    args: [
      '--set-string',
      'secrets.existingSecret=quire-db-app',
      '--set-string',
      'secrets.keyMapping.DATABASE_URL=pooler-uri',
      '--set-string',
      'secrets.keyMapping.QUIRE_ENCRYPTION_KEY=encryption-key',
      '--set',
      'webhooks.autoscaling.enabled=false',
    ],
    webhooksScaler: null,
    hooks: true,
    monitoring: false,
  },
  'values-minimal.yaml': { args: MINIMAL, webhooksScaler: null, hooks: true, monitoring: false },
  'values-minimal.yaml, KEDA': { args: [...MINIMAL, ...KEDA], webhooksScaler: 'ScaledObject', hooks: true, monitoring: false },
  'values-minimal.yaml, KEDA for webhooks and the worker': {
    args: [...MINIMAL, ...KEDA, '--set', 'worker.autoscaling.enabled=true'],
    webhooksScaler: 'ScaledObject',
    workerScaled: true,
    hooks: true,
    monitoring: false,
  },
  'values-minimal.yaml, plain migration Job': {
    args: [...MINIMAL, '--set', 'migrations.useHelmHooks=false'],
    webhooksScaler: null,
    hooks: false,
    monitoring: false,
  },
  'two plans (tests/chart/values-plans.yaml, operator on)': {
    args: [...SECRETS, ...PLANS],
    webhooksScaler: 'HorizontalPodAutoscaler',
    hooks: true,
    monitoring: false,
    operator: true,
  },
  'two more clusters (tests/chart/values-clusters.yaml, operator on)': {
    args: [...SECRETS, ...CLUSTERS],
    webhooksScaler: 'HorizontalPodAutoscaler',
    hooks: true,
    monitoring: false,
    operator: true,
  },
  'two more clusters, plain migration Job': {
    args: [...SECRETS, ...CLUSTERS, '--set', 'migrations.useHelmHooks=false'],
    webhooksScaler: 'HorizontalPodAutoscaler',
    hooks: false,
    monitoring: false,
    operator: true,
  },
  'values-production.yaml': { args: PRODUCTION, webhooksScaler: 'ScaledObject', workerScaled: true, hooks: true, monitoring: true, operator: true },
  'values-production.yaml, KEDA off': {
    args: [...PRODUCTION, '--set', 'keda.enabled=false'],
    webhooksScaler: 'HorizontalPodAutoscaler',
    hooks: true,
    monitoring: true,
    operator: true,
  },
  'values-production.yaml, plain migration Job': {
    args: [...PRODUCTION, '--set', 'migrations.useHelmHooks=false'],
    webhooksScaler: 'ScaledObject',
    workerScaled: true,
    hooks: false,
    monitoring: true,
    operator: true,
  },
  'values-production.yaml, Kubernetes 1.30': {
    args: [...PRODUCTION, '--kube-version', '1.30'],
    webhooksScaler: 'ScaledObject',
    workerScaled: true,
    hooks: true,
    monitoring: true,
    kube130: true,
    operator: true,
  },
};

/** One item of `clusters` whose URL is the key `uri` of the Secret `<name>-app`. */
function cluster(name: string): Record<string, unknown> {
  return { name, url: { secretKeyRef: { name: `${name.toLowerCase()}-app`, key: 'uri' } } };
}

/** Renders that must fail, with a message that tells the operator what to do. */
const FAILURES: Record<string, { args: string[]; message: RegExp }> = {
  'no secrets at all': { args: [], message: /secrets\.databaseUrl is required/ },
  'a database URL but no encryption key': {
    args: ['--set-string', `secrets.databaseUrl=${PLACEHOLDERS.databaseUrl}`],
    message: /secrets\.encryptionKey is required and is never generated/,
  },
  'a grace period below delay + timeout + 5 s': {
    args: [...SECRETS, '--set', 'api.terminationGracePeriodSeconds=29'],
    message: /api\.terminationGracePeriodSeconds=29 is too low.*30s/,
  },
  'a grace period that ignores the 1.30 preStop sleep': {
    args: [...SECRETS, '--set', 'webhooks.terminationGracePeriodSeconds=30', '--kube-version', '1.30'],
    message: /webhooks\.terminationGracePeriodSeconds=30 is too low.*35s/,
  },
  'a longer drain without a longer grace period': {
    args: [...SECRETS, '--set', 'shutdown.timeoutMs=60000', '--set', 'auth.terminationGracePeriodSeconds=30'],
    message: /auth\.terminationGracePeriodSeconds=30 is too low.*70s/,
  },
  'KEDA without a Prometheus address': { args: [...SECRETS, '--set', 'keda.enabled=true'], message: /keda\.prometheus\.serverAddress/ },
  'the worker without Redis (chart-made Secret)': {
    args: ['--set-string', `secrets.databaseUrl=${PLACEHOLDERS.databaseUrl}`, '--set-string', `secrets.encryptionKey=${ENCRYPTION_KEY}`],
    message: /worker\.enabled needs REDIS_URL: set secrets\.redisUrl/,
  },
  'a worker grace period below delay + its own shutdown timeout + 5 s': {
    args: [...SECRETS, '--set', 'worker.terminationGracePeriodSeconds=60'],
    message:
      /worker\.terminationGracePeriodSeconds=60 is too low: the process needs 310s \(preStop sleep \+ shutdown\.delayMs \+ worker\.shutdownTimeoutMs \+ 5 s\)/,
  },
  'a worker grace period that ignores the 1.30 preStop sleep': {
    args: [...SECRETS, '--set', 'worker.terminationGracePeriodSeconds=310', '--kube-version', '1.30'],
    message: /worker\.terminationGracePeriodSeconds=310 is too low.*315s/,
  },
  'a worker scaled to zero by KEDA': {
    args: [...SECRETS, ...KEDA, '--set', 'worker.autoscaling.minReplicaCount=0'],
    message: /worker\.autoscaling\.minReplicaCount must be at least 1/,
  },
  'a secret variable in config.extra': { args: [...SECRETS, '--set-string', 'config.extra.DATABASE_URL=postgres://x@y/z'], message: /never in the ConfigMap/ },
  'an Ingress without hosts': { args: [...SECRETS, '--set', 'ingress.enabled=true'], message: /ingress\.baseDomain/ },
  'a default plan that is not defined': {
    args: [...SECRETS, ...PLANS, '--set-string', 'plans.default=gold'],
    message: /plans\.default="gold" is not one of plans\.definitions \(business, starter\)/,
  },
  'a default plan without plans': {
    args: [...SECRETS, '--set-string', 'plans.default=starter'],
    message: /plans\.default="starter" is not one of plans\.definitions \(none are defined\)/,
  },
  'a plan rate limit of 0 seconds': {
    args: [...SECRETS, ...PLANS, '--set-string', 'plans.definitions.starter.rateLimit=0/3600'],
    message: /plans\.definitions\.starter\.rateLimit="0\/3600".*more than 0 seconds/,
  },
  'a plan rate limit window over 31 days': {
    args: [...SECRETS, ...PLANS, '--set-string', 'plans.definitions.business.rateLimit=60/2678401'],
    message: /plans\.definitions\.business\.rateLimit="60\/2678401".*31 days/,
  },
  'a cluster named default': {
    args: [...SECRETS, '--set-json', `clusters=${JSON.stringify([cluster('default')])}`],
    message: /clusters\[0\]\.name=default: `default` is the platform database/,
  },
  'two clusters of one name': {
    args: [...SECRETS, '--set-json', `clusters=${JSON.stringify([cluster('quire-db-b'), cluster('quire-db-b')])}`],
    message: /clusters\[1\]\.name="quire-db-b": clusters\[0\] has that name too/,
  },
  'a cluster name with upper case': {
    args: [...SECRETS, '--set-json', `clusters=${JSON.stringify([cluster('Quire-DB-B')])}`],
    message: /clusters\[0\]\.name="Quire-DB-B": a cluster name is lower-case letters, digits and hyphens/,
  },
  'a cluster without secretKeyRef': {
    args: [...SECRETS, '--set-json', 'clusters=[{"name":"quire-db-b","url":{"name":"quire-db-b-app","key":"uri"}}]'],
    message: /clusters\[0\]\.url needs secretKeyRef with name and key/,
  },
  'a cluster directUrl without a key': {
    args: [...SECRETS, '--set-json', `clusters=${JSON.stringify([{ ...cluster('quire-db-b'), directUrl: { secretKeyRef: { name: 'x' } } }])}`],
    message: /clusters\[0\]\.directUrl needs secretKeyRef with name and key/,
  },
  'a cluster in transaction mode without a direct URL': {
    args: [...SECRETS, '--set-json', `clusters=${JSON.stringify([{ ...cluster('quire-db-b'), poolMode: 'transaction' }])}`],
    message: /clusters\[0\] \(quire-db-b\): poolMode transaction needs directUrl/,
  },
  'a cluster weight of 0': {
    args: [...SECRETS, '--set-json', `clusters=${JSON.stringify([{ ...cluster('quire-db-b'), weight: 0 }])}`],
    message: /clusters\[0\]\.weight=0: a whole number from 1 to 1000/,
  },
  'a cluster URL variable in config.extra': {
    args: [...SECRETS, '--set-string', 'config.extra.QUIRE_CLUSTER_URL_QUIRE_DB_B=postgres://x@y/z'],
    message: /config\.extra\.QUIRE_CLUSTER_URL_QUIRE_DB_B: cluster URLs come from clusters\[\]\.url/,
  },
  'a wildcard Certificate without an issuer': {
    args: [...SECRETS, '--set', 'certManager.wildcard.enabled=true', '--set-string', 'ingress.baseDomain=quire.chart-test.invalid'],
    message: /DNS-01/,
  },
};

const rendered = new Map<string, Rendered>();
const failed = new Map<string, Rendered>();

function get(name: string): K8sObject[] {
  const r = rendered.get(name);
  if (!r) throw new Error(`scenario ${name} was not rendered`);
  return r.objects;
}

/** Secret values (placeholders) a scenario put into its values. */
function secretValues(name: string): string[] {
  const fromFiles = SCENARIOS[name]!.args.flatMap((a, i, all) => (all[i - 1] === '-f' ? [a] : []));
  const values = [...Object.values(PLACEHOLDERS)];
  for (const f of fromFiles) {
    const v = parseYaml(fs.readFileSync(path.join(DEPLOY_DIR, '..', f), 'utf8'));
    for (const key of ['databaseUrl', 'databaseDirectUrl', 'redisUrl', 'encryptionKey']) {
      const s = v?.secrets?.[key];
      if (typeof s === 'string' && s !== '') values.push(s);
    }
  }
  return values;
}

const COMPONENTS = ['api', 'auth', 'webhooks', 'worker'] as const;
/** The processes a scenario runs as Deployments, besides the operator: the worker unless it is off. */
const componentsOf = (s: Scenario): readonly string[] => COMPONENTS.filter((c) => c !== 'worker' || !s.noWorker);
/** Processes without a main port: no `http`, health and metrics on the metrics port. */
const METRICS_ONLY: readonly string[] = ['webhooks', 'worker', 'operator'];
const deploymentName = (c: string): string => `quire-${c}`;
const container = (d: K8sObject): any => d.spec.template.spec.containers[0];

/**
 * The plain environment of a workload's container as the kubelet builds it: its envFrom ConfigMaps,
 * then its env entries (a valueFrom entry hides a ConfigMap value of the same name and is left out).
 */
function environment(objects: readonly K8sObject[], workload: K8sObject): Record<string, string> {
  const ctr = container(workload);
  const env = new Map<string, string>();
  for (const from of ctr.envFrom ?? []) for (const [k, v] of Object.entries(one(objects, 'ConfigMap', from.configMapRef.name).data ?? {})) env.set(k, v);
  for (const e of ctr.env ?? []) {
    if (e.value !== undefined) env.set(e.name, e.value);
    else env.delete(e.name);
  }
  return Object.fromEntries(env);
}

/** Every Quire process of a render: its Deployments and the migration Job. */
const quireWorkloads = (objects: readonly K8sObject[]): K8sObject[] => [...ofKind(objects, 'Deployment'), one(objects, 'Job')];

beforeAllRendered(async () => {
  // chart-check's first run installs Go and the validator's packages (a minute or two); later ones reuse them.
  const runs = [
    ...Object.entries(SCENARIOS).map(async ([name, s]) => rendered.set(name, await renderChart(s.args))),
    ...Object.entries(FAILURES).map(async ([name, f]) => failed.set(name, await renderChart(f.args))),
    ...deployValuesFiles().map(async (f) => rendered.set(`file ${f}`, await renderChart(['-f', f]))),
  ];
  await Promise.all(runs);
}, 300_000);

describeRendered(`${RENDERER ?? 'chart-check'} renders${VALIDATES ? ' and validates' : ''}`, () => {
  it('every deploy/values-*.yaml', () => {
    const files = deployValuesFiles();
    expect(files).toEqual(expect.arrayContaining(['deploy/values-minimal.yaml', 'deploy/values-production.yaml']));
    for (const f of files) {
      const r = rendered.get(`file ${f}`)!;
      expectValid(r, `${f}:\n${r.output}`);
    }
  });

  it.each(Object.keys(SCENARIOS))('%s', (name) => {
    const r = rendered.get(name)!;
    expectValid(r);
    const s = SCENARIOS[name]!;
    expect(ofKind(r.objects, 'Deployment')).toHaveLength(componentsOf(s).length + (s.operator ? 1 : 0));
  });

  it.each(Object.keys(FAILURES))('refuses %s', (name) => {
    const r = failed.get(name)!;
    expect(r.status, r.output).not.toBe(0);
    expect(r.output).toMatch(FAILURES[name]!.message);
  });
});

describeRendered.each(Object.keys(SCENARIOS))('%s', (name) => {
  const s = SCENARIOS[name]!;

  it('runs api, auth, webhooks and the worker with probes on /healthz and /readyz', () => {
    const objects = get(name);
    if (s.noWorker) expect(ofKind(objects, 'Deployment').map((d) => d.metadata.name)).not.toContain(deploymentName('worker'));
    for (const c of componentsOf(s)) {
      const d = one(objects, 'Deployment', deploymentName(c));
      const ctr = container(d);
      const port = METRICS_ONLY.includes(c) ? 'metrics' : 'http';
      expect(ctr.args).toEqual(['serve', c]);
      expect(ctr.startupProbe.httpGet).toEqual({ path: '/healthz', port });
      expect(ctr.readinessProbe).toMatchObject({ httpGet: { path: '/readyz', port }, periodSeconds: 2, failureThreshold: 1 });
      expect(ctr.livenessProbe).toMatchObject({ httpGet: { path: '/healthz', port }, periodSeconds: 10, failureThreshold: 3 });
      const ports = Object.fromEntries(ctr.ports.map((p: any) => [p.name, p.containerPort]));
      expect(ports.metrics).toBe(9464);
      if (c === 'api') expect(ports.http).toBe(8000);
      if (c === 'auth') expect(ports.http).toBe(8002);
      if (METRICS_ONLY.includes(c)) expect(ports.http).toBeUndefined();
      expect(d.spec.strategy).toEqual({ type: 'RollingUpdate', rollingUpdate: { maxSurge: '25%', maxUnavailable: 0 } });
      expect(d.spec.minReadySeconds).toBeGreaterThan(0);
      const spread = d.spec.template.spec.topologySpreadConstraints.map((t: any) => [t.topologyKey, t.whenUnsatisfiable]);
      expect(spread).toEqual([
        ['kubernetes.io/hostname', 'ScheduleAnyway'],
        ['topology.kubernetes.io/zone', 'ScheduleAnyway'],
      ]);
    }
  });

  it('gives each pod a grace period longer than the shutdown delay + drain, and preStop sleep only on >= 1.30', () => {
    const objects = get(name);
    for (const c of componentsOf(s)) {
      const d = one(objects, 'Deployment', deploymentName(c));
      // The drain each process is given (the worker's own SHUTDOWN_TIMEOUT_MS overrides the ConfigMap's).
      const env = environment(objects, d);
      const drainSeconds = Math.ceil((Number(env.SHUTDOWN_DELAY_MS) + Number(env.SHUTDOWN_TIMEOUT_MS)) / 1000);
      if (c === 'worker') expect(env.SHUTDOWN_TIMEOUT_MS).toBe('300000');
      else expect(env.SHUTDOWN_TIMEOUT_MS).toBe(one(objects, 'ConfigMap').data!.SHUTDOWN_TIMEOUT_MS);
      const pod = d.spec.template.spec;
      const preStop = pod.containers[0].lifecycle?.preStop;
      if (s.kube130) expect(preStop).toEqual({ sleep: { seconds: 5 } });
      else expect(preStop).toBeUndefined();
      const sleep = Number(preStop?.sleep?.seconds ?? 0);
      expect(pod.terminationGracePeriodSeconds).toBeGreaterThan(drainSeconds);
      expect(pod.terminationGracePeriodSeconds).toBeGreaterThanOrEqual(sleep + drainSeconds + 5);
      if (c === 'worker') expect(pod.terminationGracePeriodSeconds).toBe(s.kube130 ? 315 : 310);
    }
  });

  it('hardens every pod: non-root, read-only root, no privilege escalation, no capabilities, RuntimeDefault seccomp, /tmp emptyDir', () => {
    const objects = get(name);
    const pods = [
      ...ofKind(objects, 'Deployment').map((d) => d.spec.template.spec),
      ...ofKind(objects, 'Job').map((j) => j.spec.template.spec),
      ...ofKind(objects, 'Pod').map((p) => p.spec),
    ];
    expect(pods.length).toBeGreaterThanOrEqual(5);
    for (const pod of pods) {
      expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } });
      // Only the operator talks to the Kubernetes API (tests/chart/operator.test.ts).
      expect(pod.automountServiceAccountToken).toBe(pod.serviceAccountName === 'quire-operator');
      const tmp = pod.volumes.find((v: any) => v.name === 'tmp');
      expect(tmp).toEqual({ name: 'tmp', emptyDir: {} });
      for (const ctr of [...(pod.initContainers ?? []), ...pod.containers]) {
        expect(ctr.securityContext).toMatchObject({
          runAsNonRoot: true,
          readOnlyRootFilesystem: true,
          allowPrivilegeEscalation: false,
          capabilities: { drop: ['ALL'] },
          seccompProfile: { type: 'RuntimeDefault' },
        });
        expect(ctr.volumeMounts).toContainEqual({ name: 'tmp', mountPath: '/tmp' });
        expect(ctr.resources.requests).toBeDefined();
        expect(ctr.resources.limits).toBeDefined();
      }
    }
  });

  it('reads settings from the ConfigMap and the Secret, rolls on change, and never puts a secret in a ConfigMap', () => {
    const objects = get(name);
    const cmName = one(objects, 'ConfigMap').metadata.name;
    for (const c of componentsOf(s)) {
      const d = one(objects, 'Deployment', deploymentName(c));
      const ctr = container(d);
      expect(ctr.envFrom).toEqual([{ configMapRef: { name: cmName } }]);
      const fromSecret = ctr.env.filter((e: any) => e.valueFrom?.secretKeyRef).map((e: any) => e.name);
      expect(fromSecret).toEqual(expect.arrayContaining(['DATABASE_URL', 'QUIRE_ENCRYPTION_KEY']));
      // The worker runs jobs on BullMQ: REDIS_URL always, and never optional.
      if (c === 'worker') {
        const redis = ctr.env.find((e: any) => e.name === 'REDIS_URL');
        expect(redis?.valueFrom?.secretKeyRef?.key).toBeTruthy();
        expect(redis.valueFrom.secretKeyRef.optional).toBeUndefined();
      }
      expect(Object.keys(d.spec.template.metadata.annotations)).toEqual(expect.arrayContaining(['checksum/config', 'checksum/secret']));
    }
    const secrets = secretValues(name);
    for (const cm of ofKind(objects, 'ConfigMap')) {
      for (const [key, value] of Object.entries(cm.data ?? {})) {
        expect(['DATABASE_URL', 'DATABASE_DIRECT_URL', 'REDIS_URL', 'QUIRE_ENCRYPTION_KEY']).not.toContain(key);
        for (const secret of secrets) expect(value, `${cm.metadata.name}.${key}`).not.toContain(secret);
      }
    }
    // Nor inline in the migration Job's env.
    const job = one(objects, 'Job');
    for (const e of container(job).env) {
      if (e.value !== undefined) for (const secret of secrets) expect(e.value).not.toContain(secret);
    }
  });

  it('runs `quire migrate` as a hook Job reading only pre-existing objects, or as a plain Job with a hashed name', () => {
    const objects = get(name);
    const job = one(objects, 'Job');
    const pod = job.spec.template.spec;
    expect(container(job).args).toEqual(['migrate']);
    expect(pod.restartPolicy).toBe('Never');
    expect(pod.automountServiceAccountToken).toBe(false);
    expect(pod.serviceAccountName).toBeUndefined();
    expect(job.spec.backoffLimit).toBe(2);
    expect(job.spec.activeDeadlineSeconds).toBeGreaterThanOrEqual(900);
    // One Secret for the platform's settings; each cluster's URL comes from its own (see "several Postgres clusters").
    const platformEnv = container(job).env.filter((e: any) => !e.name.startsWith('QUIRE_CLUSTER_'));
    const secretRefs = new Set<string>(platformEnv.flatMap((e: any) => (e.valueFrom?.secretKeyRef ? [e.valueFrom.secretKeyRef.name] : [])));
    expect(secretRefs.size).toBe(1);
    for (const init of pod.initContainers ?? []) {
      expect(init.args.slice(0, 2), init.name).toEqual(['cluster', 'add']);
      expect(init.env, init.name).toEqual(container(job).env);
    }
    const [secretName] = [...secretRefs];
    expect(container(job).envFrom).toBeUndefined();
    expect(container(job).env.map((e: any) => e.name)).toEqual(expect.arrayContaining(['DATABASE_URL', 'QUIRE_ENCRYPTION_KEY', 'BASE_DOMAIN']));
    const chartSecret = ofKind(objects, 'Secret').find((x) => x.metadata.name === secretName);
    if (s.hooks) {
      expect(job.metadata.name).toBe('quire-migrate');
      expect(job.metadata.annotations).toEqual({
        'helm.sh/hook': 'pre-install,pre-upgrade',
        'helm.sh/hook-weight': '-5',
        'helm.sh/hook-delete-policy': 'before-hook-creation,hook-succeeded',
      });
      expect(job.spec.ttlSecondsAfterFinished).toBeGreaterThan(0);
      // Either the operator's existing Secret (not rendered) or the hook-scoped copy made before the Job.
      if (chartSecret) {
        expect(chartSecret.metadata.annotations).toMatchObject({
          'helm.sh/hook': 'pre-install,pre-upgrade',
          'helm.sh/hook-weight': '-10',
          'helm.sh/hook-delete-policy': 'before-hook-creation,hook-succeeded',
        });
      }
      for (const imageSecret of pod.imagePullSecrets ?? []) expect(objects.map((o) => o.metadata.name)).not.toContain(imageSecret.name);
    } else {
      expect(job.metadata.name).toMatch(/^quire-migrate-[0-9a-f]{8}$/);
      expect(job.metadata.annotations?.['helm.sh/hook']).toBeUndefined();
      expect(ofKind(objects, 'Secret').filter((x) => x.metadata.annotations?.['helm.sh/hook'])).toEqual([]);
    }
  });

  it('scales webhooks and the worker with exactly the expected autoscaler, and never two on one Deployment', () => {
    const objects = get(name);
    const targets = [...ofKind(objects, 'HorizontalPodAutoscaler'), ...ofKind(objects, 'ScaledObject')].map((o) => ({
      kind: o.kind,
      target: o.spec.scaleTargetRef.name as string,
    }));
    const perTarget = new Map<string, number>();
    for (const t of targets) perTarget.set(t.target, (perTarget.get(t.target) ?? 0) + 1);
    for (const [target, n] of perTarget) expect(n, target).toBe(1);
    const webhooks = targets.filter((t) => t.target === deploymentName('webhooks'));
    expect(webhooks.map((t) => t.kind)).toEqual(s.webhooksScaler ? [s.webhooksScaler] : []);
    // The worker: KEDA or fixed replicas, never a CPU HPA.
    const worker = targets.filter((t) => t.target === deploymentName('worker'));
    expect(worker.map((t) => t.kind)).toEqual(s.workerScaled ? ['ScaledObject'] : []);
    if (s.workerScaled) expect(s.noWorker).toBeFalsy();
    for (const c of componentsOf(s)) {
      const d = one(objects, 'Deployment', deploymentName(c));
      if (perTarget.has(d.metadata.name)) expect(d.spec.replicas).toBeUndefined();
      else expect(d.spec.replicas).toBeGreaterThanOrEqual(1);
    }
    const queries: Record<string, RegExp> = {
      [deploymentName('webhooks')]: /^max\(quire_webhook_outbox_pending[{)]/,
      [deploymentName('worker')]: /^sum\(max by \(queue\) \(quire_jobs_queue_depth\{namespace="quire"\}\)\)$/,
    };
    for (const so of ofKind(objects, 'ScaledObject')) {
      const target = so.spec.scaleTargetRef.name as string;
      expect(so.metadata.name).toBe(target);
      expect(so.spec.minReplicaCount).toBeGreaterThanOrEqual(1);
      expect(so.spec.fallback).toMatchObject({ failureThreshold: 3 });
      expect(so.spec.triggers).toHaveLength(1);
      const trigger = so.spec.triggers[0];
      expect(trigger.type).toBe('prometheus');
      expect(trigger.metadata.ignoreNullValues).toBe('false');
      expect(trigger.metadata.serverAddress).toMatch(/^https?:\/\//);
      expect(trigger.metadata.query).toMatch(queries[target]!);
    }
    for (const hpa of ofKind(objects, 'HorizontalPodAutoscaler')) {
      expect(hpa.apiVersion).toBe('autoscaling/v2');
      expect(hpa.spec.metrics[0].resource.name).toBe('cpu');
    }
  });

  it('has Services whose selectors match a pod template, each with a metrics port', () => {
    const objects = get(name);
    const templates = ofKind(objects, 'Deployment').map((d) => d.spec.template.metadata.labels as Record<string, string>);
    const services = ofKind(objects, 'Service');
    expect(services.map((x) => x.metadata.name).sort()).toEqual([
      'quire-api',
      'quire-auth',
      ...(s.operator ? ['quire-operator'] : []),
      'quire-webhooks',
      ...(s.noWorker ? [] : ['quire-worker']),
    ]);
    for (const svc of services) {
      expect(
        templates.filter((labels) => selects(svc.spec.selector, labels)),
        svc.metadata.name,
      ).toHaveLength(1);
      const ports = svc.spec.ports.map((p: any) => p.name);
      expect(ports).toContain('metrics');
      expect(ports).toEqual(['quire-webhooks', 'quire-worker', 'quire-operator'].includes(svc.metadata.name) ? ['metrics'] : ['http', 'metrics']);
    }
    const pdbs = ofKind(objects, 'PodDisruptionBudget');
    expect(pdbs.map((p) => p.metadata.name).sort()).toEqual(services.map((x) => x.metadata.name).sort());
    for (const pdb of pdbs) {
      expect(templates.filter((labels) => selects(pdb.spec.selector.matchLabels, labels))).toHaveLength(1);
      expect(pdb.spec.maxUnavailable).toBe(1);
    }
  });

  it('routes /oauth and /.well-known to auth and / to api on every Ingress host', () => {
    const ingresses = ofKind(get(name), 'Ingress');
    for (const ing of ingresses) {
      expect(ing.spec.ingressClassName).toBeTruthy();
      expect(ing.spec.rules.length).toBeGreaterThan(0);
      for (const rule of ing.spec.rules) {
        const routes = Object.fromEntries(rule.http.paths.map((p: any) => [p.path, [p.pathType, p.backend.service.name, p.backend.service.port.name]]));
        expect(routes, rule.host).toEqual({
          '/oauth': ['Prefix', 'quire-auth', 'http'],
          '/.well-known': ['Prefix', 'quire-auth', 'http'],
          '/': ['Prefix', 'quire-api', 'http'],
        });
      }
    }
  });

  it('renders ServiceMonitor, PrometheusRule and NetworkPolicies only when enabled', () => {
    const objects = get(name);
    for (const kind of ['ServiceMonitor', 'PrometheusRule']) expect(ofKind(objects, kind), kind).toHaveLength(s.monitoring ? 1 : 0);
    expect(ofKind(objects, 'NetworkPolicy')).toHaveLength(s.monitoring ? componentsOf(s).length + (s.operator ? 1 : 0) : 0);
  });

  it('has a helm test pod that pings the api Service with the Quire image', () => {
    const objects = get(name);
    const pod = one(objects, 'Pod');
    expect(pod.metadata.annotations?.['helm.sh/hook']).toBe('test');
    const ctr = pod.spec.containers[0];
    expect(ctr.image).toBe(container(one(objects, 'Deployment', 'quire-api')).image);
    expect(ctr.args.slice(0, 3)).toEqual(['ping', '--url', 'http://quire-api:8000/api/method/ping']);
    expect(ctr.args[3]).toBe('--host');
    expect(ctr.args[4]).toBeTruthy();
    expect(ctr.resources).toEqual(container(one(objects, 'Deployment', 'quire-api')).resources);
  });
});

describeRendered('specific values', () => {
  it('maps existingSecret keys through secrets.keyMapping and makes no Secret', () => {
    const objects = get('existingSecret with keyMapping');
    expect(ofKind(objects, 'Secret')).toEqual([]);
    for (const d of [...ofKind(objects, 'Deployment'), one(objects, 'Job')]) {
      const refs = Object.fromEntries(container(d).env.flatMap((e: any) => (e.valueFrom ? [[e.name, e.valueFrom.secretKeyRef]] : [])));
      expect(refs.DATABASE_URL).toEqual({ name: 'quire-db-app', key: 'pooler-uri' });
      expect(refs.QUIRE_ENCRYPTION_KEY).toEqual({ name: 'quire-db-app', key: 'encryption-key' });
      // Optional everywhere but in the worker, which does not start without it.
      if (d.metadata.name === 'quire-worker') expect(refs.REDIS_URL).toEqual({ name: 'quire-db-app', key: 'REDIS_URL' });
      else expect(refs.REDIS_URL).toEqual({ name: 'quire-db-app', key: 'REDIS_URL', optional: true });
      expect(refs.DATABASE_DIRECT_URL).toEqual({ name: 'quire-db-app', key: 'DATABASE_DIRECT_URL', optional: true });
    }
  });

  it('keeps the chart-made Secret on uninstall', () => {
    const secret = one(get('values-minimal.yaml'), 'Secret', 'quire');
    expect(secret.metadata.annotations?.['helm.sh/resource-policy']).toBe('keep');
    expect(Object.keys(secret.data!).sort()).toEqual(['DATABASE_URL', 'QUIRE_ENCRYPTION_KEY', 'REDIS_URL']);
  });

  it('hashes the plain Job name over the image and migrations values, stably', async () => {
    const base = [...MINIMAL, '--set', 'migrations.useHelmHooks=false'];
    const first = one(get('values-minimal.yaml, plain migration Job'), 'Job').metadata.name;
    const [again, newImage, newDeadline] = await Promise.all([
      renderChart(base),
      renderChart([...base, '--set-string', 'image.tag=0.2.0']),
      renderChart([...base, '--set', 'migrations.activeDeadlineSeconds=1800']),
    ]);
    expect(one(again.objects, 'Job').metadata.name).toBe(first);
    expect(one(newImage.objects, 'Job').metadata.name).not.toBe(first);
    expect(one(newDeadline.objects, 'Job').metadata.name).not.toBe(first);
  }, 60_000);

  it('accepts a grace period above the least one', async () => {
    const r = await renderChart([...SECRETS, '--set', 'api.terminationGracePeriodSeconds=90']);
    expect(r.status, r.output).toBe(0);
    expect(one(r.objects, 'Deployment', 'quire-api').spec.template.spec.terminationGracePeriodSeconds).toBe(90);
    expect(one(r.objects, 'Deployment', 'quire-auth').spec.template.spec.terminationGracePeriodSeconds).toBe(30);
  }, 60_000);

  it('serves the wildcard and custom domains, with TLS, and the production cert-manager Certificate for the wildcard', () => {
    const everything = get('default values, everything on');
    const ing = one(everything, 'Ingress');
    expect(ing.spec.rules.map((r: any) => r.host)).toEqual(['*.quire.chart-test.invalid', 'erp.acme.invalid']);
    expect(ing.spec.tls).toEqual([{ hosts: ['*.quire.chart-test.invalid'], secretName: 'quire-wildcard' }]);
    expect(ofKind(everything, 'Certificate')).toEqual([]);

    const production = get('values-production.yaml');
    const prodIngress = one(production, 'Ingress');
    const cert = one(production, 'Certificate');
    expect(cert.spec.dnsNames).toEqual(['*.quire.example.com']);
    expect(cert.spec.secretName).toBe(prodIngress.spec.tls[0].secretName);
    // Named after its Secret, so cert-manager's ingress-shim leaves it alone.
    expect(cert.metadata.name).toBe(cert.spec.secretName);
    expect(cert.spec.issuerRef.name).toBeTruthy();
    expect(ofKind(get('values-minimal.yaml'), 'Ingress')).toEqual([]);
  });

  it('mounts the files volume at QUIRE_FILES_DIR in api and the worker only, on an RWX claim in production', () => {
    const production = get('values-production.yaml');
    const filesDir = one(production, 'ConfigMap').data!.QUIRE_FILES_DIR;
    const pvc = one(production, 'PersistentVolumeClaim');
    expect(pvc.spec.accessModes).toEqual(['ReadWriteMany']);
    for (const c of COMPONENTS) {
      const pod = one(production, 'Deployment', deploymentName(c)).spec.template.spec;
      const mount = pod.containers[0].volumeMounts.find((m: any) => m.mountPath === filesDir);
      if (c === 'api' || c === 'worker') {
        expect(mount, c).toBeDefined();
        expect(pod.volumes.find((v: any) => v.name === mount.name).persistentVolumeClaim.claimName).toBe(pvc.metadata.name);
      } else {
        expect(mount).toBeUndefined();
      }
    }
  });

  it('scrapes the metrics port of every Service, the operator included', () => {
    const objects = get('values-production.yaml');
    const sm = one(objects, 'ServiceMonitor');
    expect(sm.metadata.labels?.release).toBe('kube-prometheus-stack');
    expect(sm.spec.endpoints).toEqual([expect.objectContaining({ port: 'metrics', path: '/metrics' })]);
    const components = sm.spec.selector.matchExpressions[0].values;
    const scraped = ofKind(objects, 'Service').filter(
      (svc) => selects(sm.spec.selector.matchLabels, svc.metadata.labels) && components.includes(svc.metadata.labels?.['app.kubernetes.io/component']),
    );
    expect(scraped.map((svc) => svc.metadata.name).sort()).toEqual(['quire-api', 'quire-auth', 'quire-operator', 'quire-webhooks', 'quire-worker']);
  });

  it('has the alerts of the operations guide', () => {
    const rule = one(get('values-production.yaml'), 'PrometheusRule');
    const alerts = rule.spec.groups.flatMap((g: any) => g.rules.map((r: any) => r.alert));
    expect(alerts.sort()).toEqual([
      'QuireDbClusterDown',
      'QuireDbPoolWaiting',
      'QuireHigh5xxRatio',
      'QuireJobsBacklogOld',
      'QuireJobsFailing',
      'QuireMigrationJobFailed',
      'QuireP99Latency',
      'QuirePodsNotReady',
      'QuireWebhookBacklogAge',
    ]);
    const backlog = rule.spec.groups[0].rules.find((r: any) => r.alert === 'QuireWebhookBacklogAge');
    expect(backlog.expr).toMatch(/^max\(quire_webhook_oldest_pending_age_seconds\{[^}]*\}\) > 300$/);
    // Per cluster: the pool metric and cluster_up carry a `cluster` label (issue 28).
    const alertNamed = (name: string) => rule.spec.groups[0].rules.find((r: any) => r.alert === name);
    expect(alertNamed('QuireDbPoolWaiting').expr).toMatch(/^max by \(cluster\) \(quire_db_pool_connections\{[^}]*state="waiting"\}\) > 0$/);
    expect(alertNamed('QuireDbClusterDown').expr).toMatch(/^min by \(cluster\) \(quire_db_cluster_up\{[^}]*\}\) == 0$/);
    expect(alertNamed('QuireDbClusterDown').labels.severity).toBe('critical');
    // Background jobs: the backlog gauge is global (max, per queue); failures as a share of runs.
    expect(alertNamed('QuireJobsBacklogOld').expr).toBe('max by (queue) (quire_jobs_oldest_age_seconds{namespace="quire"}) > 600');
    expect(alertNamed('QuireJobsBacklogOld').for).toBe('10m');
    expect(alertNamed('QuireJobsFailing').expr).toBe(
      'sum by (queue) (rate(quire_jobs_total{namespace="quire",status="failed"}[15m])) / sum by (queue) (rate(quire_jobs_total{namespace="quire"}[15m])) > 0.05',
    );
    expect(alertNamed('QuireJobsFailing').labels.severity).toBe('warning');
    expect(alertNamed('QuirePodsNotReady').expr).toMatch(/deployment=~"quire-\(api\|auth\|webhooks\|worker\|operator\)"/);
  });

  it('lets webhooks reach public addresses only, api/auth only DNS, Postgres and Redis, and the worker SMTP besides', () => {
    const objects = get('values-production.yaml');
    const webhooks = one(objects, 'NetworkPolicy', 'quire-webhooks');
    const publicRule = webhooks.spec.egress.find((r: any) => r.to?.some((p: any) => p.ipBlock?.cidr === '0.0.0.0/0'));
    expect(publicRule.to[0].ipBlock.except).toEqual(expect.arrayContaining(['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', '169.254.0.0/16']));
    for (const c of ['api', 'auth']) {
      const np = one(objects, 'NetworkPolicy', `quire-${c}`);
      expect(np.spec.policyTypes).toEqual(['Ingress', 'Egress']);
      const egressPorts = np.spec.egress.flatMap((r: any) => r.ports.map((p: any) => p.port)).sort((a: number, b: number) => a - b);
      expect(egressPorts).toEqual([53, 53, 5432, 6379]);
      expect(np.spec.egress.some((r: any) => r.to?.some((p: any) => p.ipBlock))).toBe(false);
      expect(np.spec.ingress.map((r: any) => r.ports[0].port)).toEqual(['http', 'metrics']);
    }
    // The worker: DNS, Postgres, Redis and SMTP (25, 465, 587) to any address; reached on metrics only.
    const worker = one(objects, 'NetworkPolicy', 'quire-worker');
    expect(selects(worker.spec.podSelector.matchLabels, one(objects, 'Deployment', 'quire-worker').spec.template.metadata.labels)).toBe(true);
    expect(worker.spec.policyTypes).toEqual(['Ingress', 'Egress']);
    expect(worker.spec.ingress).toEqual([
      { from: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } } }], ports: [{ port: 'metrics', protocol: 'TCP' }] },
    ]);
    const workerPorts = worker.spec.egress.flatMap((r: any) => r.ports.map((p: any) => `${p.protocol}/${p.port}`)).sort();
    expect(workerPorts).toEqual(['TCP/25', 'TCP/465', 'TCP/53', 'TCP/5432', 'TCP/587', 'TCP/6379', 'UDP/53']);
    expect(worker.spec.egress.some((r: any) => r.to)).toBe(false);
  });
});

describeRendered('the worker (background jobs)', () => {
  it('runs `quire serve worker` with its own settings, a longer drain and its grace period', () => {
    for (const scenario of ['default values (secrets by --set)', 'values-minimal.yaml', 'values-production.yaml']) {
      const objects = get(scenario);
      const d = one(objects, 'Deployment', 'quire-worker');
      const ctr = container(d);
      expect(d.metadata.labels?.['app.kubernetes.io/component'], scenario).toBe('worker');
      expect(ctr.name).toBe('worker');
      expect(ctr.args).toEqual(['serve', 'worker']);
      expect(ctr.image).toBe(container(one(objects, 'Deployment', 'quire-api')).image);
      expect(ctr.ports).toEqual([{ name: 'metrics', containerPort: 9464, protocol: 'TCP' }]);
      expect(environment(objects, d), scenario).toMatchObject({
        METRICS_PORT: '9464',
        WORKER_CONCURRENCY: '8',
        JOBS_QUEUE_WINDOW: '32',
        JOBS_SWEEP_INTERVAL_MS: '2000',
        JOBS_LOCK_MS: '30000',
        SHUTDOWN_TIMEOUT_MS: '300000',
        SHUTDOWN_DELAY_MS: '5000',
      });
      // Its settings are its own: not in the ConfigMap, and the other processes keep the shared drain.
      const cm = one(objects, 'ConfigMap').data!;
      for (const k of ['WORKER_CONCURRENCY', 'JOBS_QUEUE_WINDOW', 'JOBS_SWEEP_INTERVAL_MS', 'JOBS_LOCK_MS']) expect(cm[k], k).toBeUndefined();
      expect(cm.SHUTDOWN_TIMEOUT_MS).toBe('20000');
      expect(d.spec.template.spec.terminationGracePeriodSeconds).toBe(310);
      expect(one(objects, 'Deployment', 'quire-api').spec.template.spec.terminationGracePeriodSeconds).toBe(30);
      // The same spread and hardening as the other processes.
      expect(d.spec.template.spec.topologySpreadConstraints).toEqual(
        one(objects, 'Deployment', 'quire-webhooks').spec.template.spec.topologySpreadConstraints.map((t: any) => ({
          ...t,
          labelSelector: { matchLabels: { ...t.labelSelector.matchLabels, 'app.kubernetes.io/component': 'worker' } },
        })),
      );
      expect(d.spec.template.spec.securityContext).toEqual(one(objects, 'Deployment', 'quire-api').spec.template.spec.securityContext);
      expect(ctr.securityContext).toEqual(container(one(objects, 'Deployment', 'quire-api')).securityContext);
    }
  });

  it('takes its settings and drain from worker.*, and its grace period grows with the drain', async () => {
    const r = await renderChart([
      ...SECRETS,
      '--set',
      'worker.concurrency=4',
      '--set',
      'worker.queueWindow=64',
      '--set',
      'worker.sweepIntervalMs=500',
      '--set',
      'worker.lockMs=60000',
      '--set',
      'worker.shutdownTimeoutMs=600000',
      '--set',
      'worker.replicas=3',
    ]);
    expectValid(r);
    const d = one(r.objects, 'Deployment', 'quire-worker');
    expect(environment(r.objects, d)).toMatchObject({
      WORKER_CONCURRENCY: '4',
      JOBS_QUEUE_WINDOW: '64',
      JOBS_SWEEP_INTERVAL_MS: '500',
      JOBS_LOCK_MS: '60000',
      SHUTDOWN_TIMEOUT_MS: '600000',
    });
    expect(d.spec.replicas).toBe(3);
    expect(d.spec.template.spec.terminationGracePeriodSeconds).toBe(610);
    const [set, low] = await Promise.all([
      renderChart([...SECRETS, '--set', 'worker.terminationGracePeriodSeconds=1800']),
      renderChart([...SECRETS, '--set', 'worker.shutdownTimeoutMs=30000', '--set', 'worker.terminationGracePeriodSeconds=40']),
    ]);
    expectValid(set);
    expect(one(set.objects, 'Deployment', 'quire-worker').spec.template.spec.terminationGracePeriodSeconds).toBe(1800);
    expectValid(low);
    expect(one(low.objects, 'Deployment', 'quire-worker').spec.template.spec.terminationGracePeriodSeconds).toBe(40);
  }, 60_000);

  it('is scaled by KEDA on the jobs backlog with worker.autoscaling, from at least one pod', () => {
    const so = one(get('default values, KEDA'), 'ScaledObject', 'quire-worker');
    expect(so.apiVersion).toBe('keda.sh/v1alpha1');
    expect(so.metadata.labels?.['app.kubernetes.io/component']).toBe('worker');
    expect(so.spec.scaleTargetRef).toEqual({ apiVersion: 'apps/v1', kind: 'Deployment', name: 'quire-worker' });
    expect(so.spec).toMatchObject({
      minReplicaCount: 1,
      maxReplicaCount: 10,
      pollingInterval: 15,
      cooldownPeriod: 300,
      fallback: { failureThreshold: 3, replicas: 2 },
      advanced: { horizontalPodAutoscalerConfig: { behavior: { scaleDown: { stabilizationWindowSeconds: 300 } } } },
    });
    expect(so.spec.triggers[0].metadata).toEqual({
      serverAddress: 'http://prometheus.monitoring.svc:9090',
      query: 'sum(max by (queue) (quire_jobs_queue_depth{namespace="quire"}))',
      threshold: '100',
      activationThreshold: '0',
      ignoreNullValues: 'false',
    });
    const production = one(get('values-production.yaml'), 'ScaledObject', 'quire-worker');
    expect(production.spec).toMatchObject({ minReplicaCount: 2, maxReplicaCount: 10, fallback: { replicas: 4 } });
    expect(one(get('values-production.yaml, KEDA off'), 'Deployment', 'quire-worker').spec.replicas).toBe(2);
  });

  it('renders nothing of the worker when it is off, and then needs no Redis', () => {
    for (const scenario of ['default values, worker off (no Redis)', 'default values, everything on, worker off']) {
      const objects = get(scenario);
      expect(
        objects.filter((o) => o.metadata.labels?.['app.kubernetes.io/component'] === 'worker'),
        scenario,
      ).toEqual([]);
      expect(JSON.stringify(objects)).not.toContain('quire-worker');
      for (const sm of ofKind(objects, 'ServiceMonitor')) expect(sm.spec.selector.matchExpressions[0].values).toEqual(['api', 'auth', 'webhooks']);
    }
  });
});

describeRendered('plans and fair admission', () => {
  const PLANS_SCENARIO = 'two plans (tests/chart/values-plans.yaml, operator on)';

  it('renders no QUIRE_PLANS and the TENANT_* and USAGE_* defaults (TENANT_MAX_CONNECTIONS left to the process) by default', () => {
    for (const scenario of ['default values (secrets by --set)', 'values-minimal.yaml', 'values-production.yaml']) {
      const objects = get(scenario);
      for (const w of quireWorkloads(objects)) {
        const env = environment(objects, w);
        const where = `${scenario}: ${w.metadata.name}`;
        expect(env.QUIRE_PLANS, where).toBeUndefined();
        expect(env.TENANT_MAX_CONNECTIONS, where).toBeUndefined();
        expect(env.TENANT_QUEUE_LENGTH, where).toBe('100');
        expect(env.TENANT_QUEUE_WAIT_MS, where).toBe('2000');
        expect(env.USAGE_FLUSH_MS, where).toBe('10000');
        expect(env.USAGE_MEASURE_MS, where).toBe('300000');
      }
    }
  });

  it('renders QUIRE_PLANS into every Quire container (api, auth, webhooks, worker, operator, migrate Job) as JSON of the plans values', () => {
    const objects = get(PLANS_SCENARIO);
    const values = parseYaml(fs.readFileSync(path.join(REPO_ROOT, PLANS_VALUES), 'utf8'));
    const workloads = quireWorkloads(objects);
    expect(workloads.map((w) => w.metadata.name).sort()).toEqual([
      'quire-api',
      'quire-auth',
      'quire-migrate',
      'quire-operator',
      'quire-webhooks',
      'quire-worker',
    ]);
    for (const w of workloads) {
      const text = environment(objects, w).QUIRE_PLANS;
      expect(text, w.metadata.name).toBeDefined();
      expect(text, 'compact JSON').not.toMatch(/\s/);
      expect(JSON.parse(text!), w.metadata.name).toEqual({ default: values.plans.default, plans: values.plans.definitions });
    }
  });

  it('leaves default out of QUIRE_PLANS when plans.default is empty, and renders the example of values.yaml', async () => {
    const example = plansExample();
    const [noDefault, fromExample] = await Promise.all([
      renderChart([...SECRETS, ...PLANS, '--set-string', 'plans.default=']),
      renderChart([...SECRETS, '--set-json', `plans=${JSON.stringify(example)}`]),
    ]);
    expectValid(noDefault);
    expect(JSON.parse(one(noDefault.objects, 'ConfigMap').data!.QUIRE_PLANS!)).toEqual({
      plans: parseYaml(fs.readFileSync(path.join(REPO_ROOT, PLANS_VALUES), 'utf8')).plans.definitions,
    });
    expectValid(fromExample);
    expect(JSON.parse(one(fromExample.objects, 'ConfigMap').data!.QUIRE_PLANS!)).toEqual({ default: example.default, plans: example.definitions });
  }, 60_000);

  it('rolls the pods when a plan changes', async () => {
    const changed = await renderChart([...SECRETS, ...PLANS, '--set', 'plans.definitions.starter.users=6']);
    expectValid(changed);
    for (const c of [...COMPONENTS, 'operator']) {
      const before = one(get(PLANS_SCENARIO), 'Deployment', deploymentName(c)).spec.template.metadata.annotations['checksum/config'];
      const after = one(changed.objects, 'Deployment', deploymentName(c)).spec.template.metadata.annotations['checksum/config'];
      expect(after, c).not.toBe(before);
    }
  }, 60_000);

  it('renders TENANT_MAX_CONNECTIONS when set, and the queue settings as given', async () => {
    const r = await renderChart([
      ...SECRETS,
      '--set',
      'config.tenantMaxConnections=3',
      '--set',
      'config.tenantQueueLength=0',
      '--set',
      'config.tenantQueueWaitMs=500',
    ]);
    expectValid(r);
    for (const w of quireWorkloads(r.objects)) {
      expect(environment(r.objects, w), w.metadata.name).toMatchObject({ TENANT_MAX_CONNECTIONS: '3', TENANT_QUEUE_LENGTH: '0', TENANT_QUEUE_WAIT_MS: '500' });
    }
  }, 60_000);
});

describeRendered('several Postgres clusters', () => {
  const CLUSTERS_SCENARIO = 'two more clusters (tests/chart/values-clusters.yaml, operator on)';
  /** A container's env entries read from a Secret, by variable name. */
  const secretRefsOf = (ctr: any): Record<string, unknown> =>
    Object.fromEntries((ctr.env ?? []).flatMap((e: any) => (e.valueFrom?.secretKeyRef ? [[e.name, e.valueFrom.secretKeyRef]] : [])));
  /** Every container of every Quire workload (the Deployments, the Job and its init containers), named `<workload>/<container>`. */
  const quireContainers = (objects: readonly K8sObject[]): [string, any][] =>
    quireWorkloads(objects).flatMap((w) =>
      [...(w.spec.template.spec.initContainers ?? []), ...w.spec.template.spec.containers].map((c: any): [string, any] => [`${w.metadata.name}/${c.name}`, c]),
    );
  const clusterVars = (ctr: any): string[] => (ctr.env ?? []).map((e: any) => e.name as string).filter((n: string) => n.startsWith('QUIRE_CLUSTER_'));

  it('gives every Quire container each cluster URL from its Secret, and nothing else of them', () => {
    const objects = get(CLUSTERS_SCENARIO);
    const containers = quireContainers(objects);
    expect(containers.map(([n]) => n).sort()).toEqual([
      'quire-api/api',
      'quire-auth/auth',
      'quire-migrate/cluster-quire-db-b',
      'quire-migrate/cluster-tenants-2',
      'quire-migrate/migrate',
      'quire-operator/operator',
      'quire-webhooks/webhooks',
      'quire-worker/worker',
    ]);
    for (const [where, ctr] of containers) {
      const refs = secretRefsOf(ctr);
      expect(refs[clusterVariable('quire-db-b')], where).toEqual({ name: 'quire-db-b-app', key: 'uri' });
      expect(refs[clusterVariable('quire-db-b', true)], where).toBeUndefined();
      expect(refs[clusterVariable('tenants-2')], where).toEqual({ name: 'tenants-2-pooler', key: 'pooler-uri' });
      expect(refs[clusterVariable('tenants-2', true)], where).toEqual({ name: 'tenants-2-app', key: 'uri' });
      expect(clusterVars(ctr), where).toEqual(['QUIRE_CLUSTER_URL_QUIRE_DB_B', 'QUIRE_CLUSTER_URL_TENANTS_2', 'QUIRE_CLUSTER_DIRECT_URL_TENANTS_2']);
    }
    // Never a cluster URL in a ConfigMap; the helm test pod reaches the API over HTTP only.
    for (const cm of ofKind(objects, 'ConfigMap')) expect(Object.keys(cm.data ?? {}).filter((k) => k.startsWith('QUIRE_CLUSTER_'))).toEqual([]);
    expect(one(objects, 'Pod').spec.containers[0].env).toBeUndefined();
  });

  it('registers each cluster with `quire cluster add --url env:…` in an init container of the migration Job, before `quire migrate`', () => {
    for (const scenario of [CLUSTERS_SCENARIO, 'two more clusters, plain migration Job']) {
      const job = one(get(scenario), 'Job');
      const pod = job.spec.template.spec;
      const migrate = container(job);
      expect(migrate.args).toEqual(['migrate']);
      expect(pod.restartPolicy).toBe('Never');
      expect(pod.initContainers.map((c: any) => c.name)).toEqual(['cluster-quire-db-b', 'cluster-tenants-2']);
      expect(pod.initContainers.map((c: any) => c.args)).toEqual([
        ['cluster', 'add', 'quire-db-b', '--url', 'env:QUIRE_CLUSTER_URL_QUIRE_DB_B', '--weight', '1', '--pool-mode', 'session'],
        [
          'cluster',
          'add',
          'tenants-2',
          '--url',
          'env:QUIRE_CLUSTER_URL_TENANTS_2',
          '--weight',
          '3',
          '--pool-mode',
          'transaction',
          '--direct-url',
          'env:QUIRE_CLUSTER_DIRECT_URL_TENANTS_2',
        ],
      ]);
      for (const init of pod.initContainers) {
        // The same process as `quire migrate`: image, settings, Secrets, resources and hardening.
        for (const field of ['image', 'imagePullPolicy', 'env', 'resources', 'securityContext', 'volumeMounts'])
          expect(init[field], `${init.name}.${field}`).toEqual(migrate[field]);
        expect(init.envFrom).toBeUndefined();
      }
    }
  });

  it('renders the second CNPG cluster of values-production.yaml (cloudnative-pg.yaml) into every Quire container', () => {
    const objects = get('values-production.yaml');
    for (const [where, ctr] of quireContainers(objects)) {
      expect(secretRefsOf(ctr)[clusterVariable('quire-db-b')], where).toEqual({ name: 'quire-db-b-app', key: 'uri' });
      expect(clusterVars(ctr), where).toEqual(['QUIRE_CLUSTER_URL_QUIRE_DB_B']);
    }
    const job = one(objects, 'Job');
    expect(job.spec.template.spec.initContainers.map((c: any) => c.args)).toEqual([
      ['cluster', 'add', 'quire-db-b', '--url', 'env:QUIRE_CLUSTER_URL_QUIRE_DB_B', '--weight', '1', '--pool-mode', 'session'],
    ]);
    const cnpg = fs
      .readFileSync(path.join(DEPLOY_DIR, 'cloudnative-pg.yaml'), 'utf8')
      .split(/^---$/m)
      .map((doc) => parseYaml(doc))
      .filter((doc) => doc?.kind === 'Cluster');
    expect(cnpg.map((c) => c.metadata.name)).toEqual(['quire-db', 'quire-db-b']);
    for (const c of cnpg) expect(c.spec.postgresql.parameters.wal_level, c.metadata.name).toBe('logical');
    expect(environment(objects, one(objects, 'Deployment', 'quire-api'))).toMatchObject({ CLUSTER_POOL_SIZE: '5', CLUSTER_IDLE_SECONDS: '300' });
  });

  it('renders no cluster variable and no init container by default, and the pool settings like DB_POOL_SIZE', () => {
    for (const scenario of ['default values (secrets by --set)', 'values-minimal.yaml', 'existingSecret with keyMapping']) {
      const objects = get(scenario);
      for (const [where, ctr] of quireContainers(objects)) expect(clusterVars(ctr), `${scenario}: ${where}`).toEqual([]);
      expect(one(objects, 'Job').spec.template.spec.initContainers, scenario).toBeUndefined();
      for (const w of quireWorkloads(objects)) {
        const env = environment(objects, w);
        expect(env.CLUSTER_POOL_SIZE, `${scenario}: ${w.metadata.name}`).toBeUndefined(); // the process default: DB_POOL_SIZE
        expect(env.CLUSTER_IDLE_SECONDS, `${scenario}: ${w.metadata.name}`).toBe('300');
      }
    }
    const objects = get(CLUSTERS_SCENARIO);
    for (const w of quireWorkloads(objects))
      expect(environment(objects, w), w.metadata.name).toMatchObject({ CLUSTER_POOL_SIZE: '4', CLUSTER_IDLE_SECONDS: '120' });
  });

  it('names the plain Job after the clusters too, and keeps the name of a release without any', async () => {
    const base = [...MINIMAL, '--set', 'migrations.useHelmHooks=false'];
    const before = one(get('values-minimal.yaml, plain migration Job'), 'Job').metadata.name;
    const withCluster = (weight: number) => ['--set-json', `clusters=${JSON.stringify([{ ...cluster('quire-db-b'), weight }])}`];
    const [none, added, reweighted] = await Promise.all([
      renderChart([...base, '--set-json', 'clusters=[]']),
      renderChart([...base, ...withCluster(1)]),
      renderChart([...base, ...withCluster(2)]),
    ]);
    expect(one(none.objects, 'Job').metadata.name).toBe(before);
    const names = [before, one(added.objects, 'Job').metadata.name, one(reweighted.objects, 'Job').metadata.name];
    expect(new Set(names).size).toBe(3);
    for (const n of names) expect(n).toMatch(/^quire-migrate-[0-9a-f]{8}$/);
  }, 60_000);

  it('renders the example of values.yaml', async () => {
    const { clusters } = clustersExample();
    const r = await renderChart([...SECRETS, '--set-json', `clusters=${JSON.stringify(clusters)}`]);
    expectValid(r);
    const job = one(r.objects, 'Job');
    expect(job.spec.template.spec.initContainers.map((c: any) => c.args.slice(0, 3))).toEqual(clusters.map((c) => ['cluster', 'add', c.name]));
  }, 60_000);
});

describe('metric names', () => {
  const check = (where: string, expr: string, allowed: (n: string) => boolean): void => {
    const names = metricNamesIn(expr);
    expect(names.length, `${where}: ${expr}`).toBeGreaterThan(0);
    for (const n of names) expect(allowed(n), `${where} uses ${n}, which the operations contract does not export`).toBe(true);
  };

  it('finds metric names in PromQL', () => {
    expect(
      metricNamesIn(
        'histogram_quantile(0.99, sum by (le, route) (rate(http_request_duration_seconds_bucket{namespace="$namespace",x=~"a|b"}[$__rate_interval])))',
      ),
    ).toEqual(['http_request_duration_seconds_bucket']);
    expect(metricNamesIn('a_total / on (pod) group_left b > bool 1 and c offset 5m')).toEqual(['a_total', 'b', 'c']);
    expect(isQuireSeries('http_request_duration_seconds_count')).toBe(true);
    expect(isQuireSeries('http_request_duration_seconds')).toBe(false);
    expect(isQuireSeries('quire_webhook_backlog')).toBe(false);
    expect(isQuireSeries('nodejs_heap_size_used_bytes')).toBe(true);
  });

  itRendered('PrometheusRule exprs use only contract names (and kube-state-metrics for the two Kubernetes alerts)', () => {
    const rule = one(get('values-production.yaml'), 'PrometheusRule');
    const ksm: readonly string[] = KUBE_STATE_METRICS;
    for (const r of rule.spec.groups.flatMap((g: any) => g.rules)) {
      check(`alert ${r.alert}`, r.expr, (n) => isQuireSeries(n) || (['QuireMigrationJobFailed', 'QuirePodsNotReady'].includes(r.alert) && ksm.includes(n)));
    }
  });

  itRendered('the KEDA queries use only contract names', () => {
    for (const scenario of ['values-production.yaml', 'default values, KEDA']) {
      const objects = ofKind(get(scenario), 'ScaledObject');
      expect(objects.map((so) => so.metadata.name).sort()).toEqual(['quire-webhooks', 'quire-worker']);
      for (const so of objects) check(`ScaledObject ${so.metadata.name}`, so.spec.triggers[0].metadata.query, isQuireSeries);
    }
  });

  it('the Grafana dashboard uses only contract names and covers the operations panels', () => {
    const dashboard = JSON.parse(fs.readFileSync(path.join(DEPLOY_DIR, 'grafana-dashboard.json'), 'utf8'));
    const panels = dashboard.panels.filter((p: any) => p.type !== 'row');
    const exprs: string[] = panels.flatMap((p: any) => p.targets.map((t: any) => t.expr));
    expect(exprs.length).toBeGreaterThan(10);
    for (const p of panels) for (const t of p.targets) check(`panel "${p.title}"`, t.expr, isQuireSeries);
    for (const v of dashboard.templating.list)
      if (v.type === 'query') check(`variable ${v.name}`, v.query.query.replace(/^label_values\(([^,]+),.*$/, '$1'), isQuireSeries);
    const used = new Set(exprs.flatMap(metricNamesIn));
    for (const wanted of [
      'http_request_duration_seconds_count',
      'http_request_duration_seconds_bucket',
      'http_requests_in_flight',
      'quire_db_pool_connections',
      'quire_cache_requests_total',
      'quire_webhook_outbox_pending',
      'quire_webhook_oldest_pending_age_seconds',
      'quire_webhook_deliveries_total',
      'quire_oauth_tokens_issued_total',
      'nodejs_eventloop_lag_p99_seconds',
      'nodejs_heap_size_used_bytes',
    ]) {
      expect(used, wanted).toContain(wanted);
    }
  });
});
