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
import { CHART, PLANS_VALUES, REPO_ROOT, deployValuesFiles, plansExample } from './support';

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
