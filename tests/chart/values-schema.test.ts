/**
 * charts/quire/values.schema.json (draft-07) checked with ajv, since chart-check does not enforce
 * it (helm install/upgrade/template do; the chart tests run helm with --skip-schema-validation, so
 * that the templates' own refusals are what they see): the chart's values.yaml and every
 * deploy/values-*.yaml must pass, and wrong values must be refused before anything renders.
 * Needs no renderer: it runs everywhere.
 */
import fs from 'node:fs';
import path from 'node:path';
import { Ajv, type ValidateFunction } from 'ajv';
import { parse as parseYaml } from 'yaml';
import { describe, expect, it } from 'vitest';
import { CHART, CLUSTERS_VALUES, PLANS_VALUES, REPO_ROOT, clustersExample, deployValuesFiles, plansExample } from './support';

const chartDir = path.join(REPO_ROOT, CHART);
const schema = JSON.parse(fs.readFileSync(path.join(chartDir, 'values.schema.json'), 'utf8'));
const defaults = parseYaml(fs.readFileSync(path.join(chartDir, 'values.yaml'), 'utf8'));

const ajv = new Ajv({ allErrors: true, strict: true, allowUnionTypes: true });
const validate: ValidateFunction = ajv.compile(schema);

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Helm's coalescing, enough for values files: maps merge, everything else replaces. */
function merge(base: unknown, over: unknown): unknown {
  if (!isObject(base) || !isObject(over)) return over;
  const out: Record<string, unknown> = { ...base };
  for (const [k, v] of Object.entries(over)) out[k] = merge(base[k], v);
  return out;
}

/** The defaults with `path` (dot-separated) set to `value`. */
function withValue(dotted: string, value: unknown): unknown {
  const over: Record<string, unknown> = {};
  let node = over;
  const keys = dotted.split('.');
  keys.slice(0, -1).forEach((k) => {
    const next: Record<string, unknown> = {};
    node[k] = next;
    node = next;
  });
  node[keys.at(-1)!] = value;
  return merge(defaults, over);
}

function errors(values: unknown): string {
  return validate(values) ? '' : ajv.errorsText(validate.errors, { separator: '\n' });
}

describe('values.schema.json', () => {
  it('is draft-07, closed at the root, and declares global', () => {
    expect(schema.$schema).toBe('http://json-schema.org/draft-07/schema#');
    expect(schema.additionalProperties).toBe(false);
    expect(schema.properties.global).toEqual(expect.objectContaining({ type: 'object' }));
  });

  it('types every top-level value of values.yaml', () => {
    expect(Object.keys(schema.properties).sort()).toEqual(Object.keys(defaults).sort());
  });

  it('accepts values.yaml', () => {
    expect(errors(defaults)).toBe('');
  });

  it.each(deployValuesFiles())('accepts %s (over values.yaml)', (file) => {
    const values = parseYaml(fs.readFileSync(path.join(REPO_ROOT, file), 'utf8'));
    expect(errors(values)).toBe('');
    expect(errors(merge(defaults, values))).toBe('');
  });

  it('accepts the operator values', () => {
    const operator = {
      enabled: true,
      replicas: 2,
      workers: 4,
      resyncSeconds: 0,
      leaderElection: { leaseDurationSeconds: 30, renewDeadlineMs: 20000, retryPeriodMs: 4000 },
      ingress: {
        className: 'traefik',
        certIssuer: { name: 'letsencrypt-http01', kind: 'Issuer' },
        tlsSecretName: 'tls-{tenant}',
        annotations: { 'nginx.ingress.kubernetes.io/proxy-body-size': '32m' },
      },
      networkPolicy: { apiServerCidrs: ['10.0.0.1/32'], apiServerPorts: [443] },
      pdb: { enabled: false },
      serviceAccount: { annotations: { 'example.com/role': 'x' } },
    };
    expect(errors(withValue('operator', operator))).toBe('');
    expect(errors(withValue('operator.ingress.tlsSecretName', ''))).toBe('');
  });

  it('accepts the worker values, and the worker off', () => {
    expect(defaults.worker).toMatchObject({
      enabled: true,
      args: ['serve', 'worker'],
      shutdownTimeoutMs: 300000,
      autoscaling: { enabled: true, minReplicaCount: 1 },
    });
    const worker = {
      enabled: true,
      replicas: 3,
      concurrency: 16,
      queueWindow: 64,
      sweepIntervalMs: 500,
      lockMs: 60000,
      shutdownTimeoutMs: 600000,
      terminationGracePeriodSeconds: 1800,
      autoscaling: { enabled: true, minReplicaCount: 2, maxReplicaCount: 20, threshold: 50, query: 'sum(quire_jobs_queue_depth)' },
      pdb: { enabled: false },
      service: { annotations: { 'example.com/x': 'y' } },
    };
    expect(errors(withValue('worker', worker))).toBe('');
    expect(errors(withValue('worker.enabled', false))).toBe('');
    expect(
      errors(
        withValue('networkPolicy.worker', { smtp: { ports: [2525], to: [{ ipBlock: { cidr: '10.1.0.0/16' } }] }, extraEgress: [{ ports: [{ port: 443 }] }] }),
      ),
    ).toBe('');
    expect(errors(withValue('prometheusRule.thresholds', { jobOldestWaitingSeconds: 1800, jobFailedRatio: 0.2 }))).toBe('');
  });

  it('accepts the plans of tests/chart/values-plans.yaml and the commented example in values.yaml', () => {
    const file = parseYaml(fs.readFileSync(path.join(REPO_ROOT, PLANS_VALUES), 'utf8'));
    expect(Object.keys(file.plans.definitions)).toHaveLength(2);
    expect(errors(merge(defaults, file))).toBe('');
    const example = plansExample();
    expect(Object.keys(example.definitions).sort()).toEqual(['business', 'starter']);
    expect(example.definitions[example.default]).toBeDefined();
    const fields = Object.keys(schema.definitions.plan.properties).sort();
    for (const [name, plan] of Object.entries(example.definitions)) expect(Object.keys(plan).sort(), `example plan ${name} shows every field`).toEqual(fields);
    expect(errors(withValue('plans', example))).toBe('');
  });

  it.each(['500MiB', '10GiB', '1TiB', '200MB', '2GB', '1.5GiB', '1048576', 1048576, '512KiB', '100B'])('accepts the plan size %j', (size) => {
    expect(errors(withValue('plans.definitions', { starter: { databaseSize: size, fileStorage: size } }))).toBe('');
  });

  it('accepts the fair-admission settings, TENANT_MAX_CONNECTIONS unset (null) or set', () => {
    expect(defaults.config).toMatchObject({ tenantMaxConnections: null, tenantQueueLength: 100, tenantQueueWaitMs: 2000 });
    expect(errors(withValue('config', { tenantMaxConnections: 4, tenantQueueLength: 0, tenantQueueWaitMs: 0 }))).toBe('');
  });

  describe('clusters', () => {
    const ref = (name: string, key = 'uri') => ({ secretKeyRef: { name, key } });
    const cluster = (over: Record<string, unknown> = {}) => ({ name: 'quire-db-b', url: ref('quire-db-b-app'), ...over });
    const clustersError = (clusters: unknown) => errors(withValue('clusters', clusters));

    it('defaults to none, with CLUSTER_POOL_SIZE left to the process and CLUSTER_IDLE_SECONDS 300', () => {
      expect(defaults.clusters).toEqual([]);
      expect(defaults.config).toMatchObject({ clusterPoolSize: null, clusterIdleSeconds: 300 });
    });

    it('accepts tests/chart/values-clusters.yaml, deploy/values-production.yaml and the commented example in values.yaml', () => {
      const file = parseYaml(fs.readFileSync(path.join(REPO_ROOT, CLUSTERS_VALUES), 'utf8'));
      expect(file.clusters).toHaveLength(2);
      expect(errors(merge(defaults, file))).toBe('');
      const production = parseYaml(fs.readFileSync(path.join(REPO_ROOT, 'deploy/values-production.yaml'), 'utf8'));
      expect(production.clusters.map((c: { name: string }) => c.name)).toEqual(['quire-db-b']);
      const example = clustersExample();
      expect(example.clusters).toHaveLength(1);
      const fields = Object.keys(schema.definitions.cluster.properties).filter((f) => f !== 'directUrl');
      expect(Object.keys(example.clusters[0]!).sort(), 'the example shows every field but the optional directUrl').toEqual(fields.sort());
      expect(errors(withValue('clusters', example.clusters))).toBe('');
    });

    it.each([
      ['only a name and a URL', [cluster()]],
      ['a name of 40 characters', [cluster({ name: `a${'b'.repeat(38)}9` })]],
      ['a one-letter name', [cluster({ name: 'b' })]],
      ['weights 1 and 1000', [cluster({ weight: 1 }), cluster({ name: 'c', weight: 1000 })]],
      ['transaction mode with a direct URL', [cluster({ poolMode: 'transaction', directUrl: ref('quire-db-b-app') })]],
      ['session mode with a direct URL', [cluster({ poolMode: 'session', directUrl: ref('quire-db-b-app') })]],
      ['a key with dots and capitals', [cluster({ url: ref('my.secret', 'Pooler.URI') })]],
    ])('accepts %s', (_what, clusters) => {
      expect(clustersError(clusters)).toBe('');
    });

    const badClusters: [string, unknown, RegExp][] = [
      ['clusters as a map', { 'quire-db-b': { url: ref('s') } }, /must be array/],
      ['the name default', [cluster({ name: 'default' })], /must NOT be valid/],
      ['a name with upper case', [cluster({ name: 'Quire-DB-B' })], /must match pattern/],
      ['a name with an underscore', [cluster({ name: 'quire_db_b' })], /must match pattern/],
      ['a name starting with a digit', [cluster({ name: '2nd' })], /must match pattern/],
      ['a name ending with a hyphen', [cluster({ name: 'quire-db-' })], /must match pattern/],
      ['a name of 41 characters', [cluster({ name: 'a'.repeat(41) })], /must match pattern/],
      ['an empty name', [cluster({ name: '' })], /must match pattern/],
      ['no name', [{ url: ref('s') }], /must have required property 'name'/],
      ['the same cluster twice', [cluster(), cluster()], /must NOT have duplicate items/],
      ['no url', [{ name: 'quire-db-b' }], /must have required property 'url'/],
      ['a url without secretKeyRef', [cluster({ url: {} })], /must have required property 'secretKeyRef'/],
      ['a url given as a string', [cluster({ url: 'postgres://quire:pw@db:5432/quire' })], /must be object/],
      ['a secretKeyRef without a key', [cluster({ url: { secretKeyRef: { name: 's' } } })], /must have required property 'key'/],
      ['a secretKeyRef without a name', [cluster({ url: { secretKeyRef: { key: 'uri' } } })], /must have required property 'name'/],
      ['a directUrl without secretKeyRef', [cluster({ directUrl: { name: 's', key: 'uri' } })], /must have required property 'secretKeyRef'/],
      ['a Secret name with upper case', [cluster({ url: ref('Quire-DB') })], /must match pattern/],
      ['transaction mode without a direct URL', [cluster({ poolMode: 'transaction' })], /must have required property 'directUrl'/],
      ['an unknown pool mode', [cluster({ poolMode: 'statement' })], /must be equal to one of the allowed values/],
      ['weight 0', [cluster({ weight: 0 })], /must be >= 1/],
      ['weight 1001', [cluster({ weight: 1001 })], /must be <= 1000/],
      ['a fractional weight', [cluster({ weight: 1.5 })], /must be integer/],
      ['an unknown field', [cluster({ state: 'draining' })], /must NOT have additional properties/],
    ];

    it.each(badClusters)('refuses %s', (_what, clusters, message) => {
      const result = clustersError(clusters);
      expect(result).not.toBe('');
      expect(result).toMatch(message);
    });

    it.each([
      ['config.clusterPoolSize', 0, /must be >= 1/],
      ['config.clusterPoolSize', '5', /must be integer,null/],
      ['config.clusterIdleSeconds', 0, /must be >= 1/],
      ['config.clusterIdleSeconds', 86401, /must be <= 86400/],
    ])('refuses %s = %j', (key, value, message) => {
      expect(errors(withValue(key, value))).toMatch(message);
    });

    it('accepts CLUSTER_POOL_SIZE set, and refuses a cluster URL variable in config.extra', () => {
      expect(errors(withValue('config.clusterPoolSize', 4))).toBe('');
      expect(errors(withValue('config.extra', { QUIRE_CLUSTER_URL_QUIRE_DB_B: 'postgres://x@y/z' }))).toMatch(/property name must be valid/);
      expect(errors(withValue('config.extra', { QUIRE_CLUSTER_DIRECT_URL_B: 'postgres://x@y/z' }))).toMatch(/property name must be valid/);
      expect(errors(withValue('config.extra', { QUIRE_CLUSTER_NOTE: 'x' }))).toBe('');
    });
  });

  it('accepts the values a subchart gets from its parent', () => {
    expect(errors(withValue('global', { imageRegistry: 'registry.example.com', anything: [1, 2] }))).toBe('');
  });

  const bad: [string, string, unknown, RegExp][] = [
    ['an unknown top-level key', 'replicaCount', 3, /must NOT have additional properties/],
    ['a typo in a nested key', 'api.replica', 2, /must NOT have additional properties/],
    ['negative replicas', 'api.replicas', -1, /replicas must be >= 0/],
    ['replicas as a string', 'webhooks.replicas', '2', /must be integer/],
    ['a bad pool mode', 'config.databasePoolMode', 'statement', /must be equal to one of the allowed values/],
    ['a boolean as useHelmHooks string', 'migrations.useHelmHooks', 'false', /must be boolean/],
    ['a port out of range', 'api.port', 70000, /must be <= 65535/],
    ['a metrics port as a string', 'metrics.port', '9464', /must be integer/],
    ['KEDA scaling to zero', 'keda.minReplicaCount', 0, /must be >= 1/],
    ['KEDA scaling the worker to zero', 'worker.autoscaling.minReplicaCount', 0, /must be >= 1/],
    ['a worker drain beyond the process limit', 'worker.shutdownTimeoutMs', 1500000, /must be <= 600000/],
    ['no worker concurrency', 'worker.concurrency', 0, /must be >= 1/],
    ['a typo in a worker key', 'worker.concurency', 8, /must NOT have additional properties/],
    ['a CPU target for the worker', 'worker.autoscaling.targetCPUUtilizationPercentage', 70, /must NOT have additional properties/],
    ['a job failure ratio above 1', 'prometheusRule.thresholds.jobFailedRatio', 5, /must be <= 1/],
    ['SMTP ports as strings', 'networkPolicy.worker.smtp.ports', ['587'], /must be integer/],
    ['a non-postgres database URL', 'secrets.databaseUrl', 'mysql://u@h/db', /must match pattern/],
    ['an encryption key that is not base64 of 32 bytes', 'secrets.encryptionKey', 'c2hvcnQ=', /must match pattern/],
    ['a secret variable in config.extra', 'config.extra', { QUIRE_ENCRYPTION_KEY: 'x' }, /property name must be valid/],
    ['custom domains as a string', 'ingress.customDomains', 'erp.acme.example', /must be array/],
    ['a URL as a custom domain', 'ingress.customDomains', ['https://erp.acme.example/'], /must match pattern/],
    ['a bad log level', 'config.logLevel', 'verbose', /must be equal to one of the allowed values/],
    ['a negative shutdown delay', 'shutdown.delayMs', -5, /must be >= 0/],
    ['a grace period as a string', 'api.terminationGracePeriodSeconds', '30', /must be integer,null/],
    ['resources as a list', 'auth.resources', ['cpu: 1'], /must be object/],
    ['an env entry without a name', 'extraEnv', [{ value: 'x' }], /must have required property 'name'/],
    ['an unknown access mode', 'files.persistence.accessModes', ['ReadWriteSometimes'], /must be equal to one of the allowed values/],
    ['a bad issuer kind', 'certManager.wildcard.issuerRef.kind', 'Certificate', /must be equal to one of the allowed values/],
    ['a root pod user', 'podSecurityContext.runAsUser', 0, /must be >= 1/],
    ['operator.enabled as a string', 'operator.enabled', 'true', /must be boolean/],
    ['a typo in an operator key', 'operator.replica', 2, /must NOT have additional properties/],
    ['no operator workers', 'operator.workers', 0, /must be >= 1/],
    ['a bad operator issuer kind', 'operator.ingress.certIssuer.kind', 'Certificate', /must be equal to one of the allowed values/],
    ['a tenant TLS Secret name without {tenant}', 'operator.ingress.tlsSecretName', 'domains-tls', /must match pattern/],
    ['operator Ingress annotations that are not strings', 'operator.ingress.annotations', { 'x/y': 1 }, /must be string/],
    ['an API server address without a prefix length', 'operator.networkPolicy.apiServerCidrs', ['10.0.0.1'], /must match pattern/],
    ['no requests in progress for a tenant', 'config.tenantMaxConnections', 0, /must be >= 1/],
    ['a negative tenant queue length', 'config.tenantQueueLength', -1, /must be >= 0/],
    ['a tenant queue wait as a string', 'config.tenantQueueWaitMs', '2000', /must be integer/],
    ['an unknown key in plans', 'plans.default_plan', 'starter', /must NOT have additional properties/],
    ['an unknown plan field', 'plans.definitions', { starter: { maxConnection: 2 } }, /must NOT have additional properties/],
    ['a plan size with a unit it does not know', 'plans.definitions', { starter: { databaseSize: '10GB2' } }, /must match pattern/],
    ['a plan size in lower case', 'plans.definitions', { starter: { fileStorage: '10gib' } }, /must match pattern/],
    ['a plan size with a space', 'plans.definitions', { starter: { fileStorage: '10 GiB' } }, /must match pattern/],
    ['a plan size of 0 bytes', 'plans.definitions', { starter: { databaseSize: 0 } }, /must be >= 1/],
    ['a fractional number of bytes', 'plans.definitions', { starter: { databaseSize: 1.5 } }, /must be integer/],
    ['a plan rate limit in words', 'plans.definitions', { starter: { rateLimit: '600 per hour' } }, /must match pattern/],
    ['a plan rate limit without a window', 'plans.definitions', { starter: { rateLimit: '600' } }, /must match pattern/],
    ['a plan rate limit as a number', 'plans.definitions', { starter: { rateLimit: 600 } }, /must be string/],
    ['a plan with no connections', 'plans.definitions', { starter: { maxConnections: 0 } }, /must be >= 1/],
    ['a plan with users as a string', 'plans.definitions', { starter: { users: '5' } }, /must be integer/],
    ['a plan that is not a map', 'plans.definitions', { starter: '600/3600' }, /must be object/],
    ['a plan name with a space', 'plans.definitions', { 'gold plan': {} }, /property name must be valid/],
    ['a default plan name with a space', 'plans.default', 'gold plan', /must match pattern/],
  ];

  it.each(bad)('refuses %s', (_what, key, value, message) => {
    const result = errors(withValue(key, value));
    expect(result).not.toBe('');
    expect(result).toMatch(message);
  });

  it('refuses a values file that is not a map', () => {
    expect(errors(['api'])).toMatch(/must be object/);
  });
});
