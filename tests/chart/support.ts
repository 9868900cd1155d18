import { execFile, type ExecFileException } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse as parseYaml, parseAllDocuments } from 'yaml';
import { beforeAll, describe, expect, it } from 'vitest';
import { CHART_CHECK, helmProblem, RENDERER } from './renderer';

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export { CHART_CHECK, RENDERER, type ChartRenderer } from './renderer';
export const CHART = 'charts/quire';
export const DEPLOY_DIR = path.join(REPO_ROOT, 'deploy');
const RELEASE = 'quire';
const NAMESPACE = 'quire';
/**
 * chart-check's default Kubernetes version. helm's default is whatever its own build knows, and the
 * chart renders differently from 1.30 on (preStop sleep), so helm is given this one unless a test
 * passes its own --kube-version (the last one wins).
 */
const DEFAULT_KUBE_VERSION = '1.29';

/** Whether rendered manifests are also validated (Kubernetes schemas, policy): chart-check does, helm does not. */
export const VALIDATES = RENDERER === 'chart-check';

/** A suite that reads rendered manifests: skipped when there is no renderer. */
export const describeRendered = describe.skipIf(RENDERER === undefined);
/** A test that reads rendered manifests: skipped when there is no renderer. */
export const itRendered = it.skipIf(RENDERER === undefined);
/** A test of chart-check's own findings (ERROR lines, policy, validate.mjs): skipped unless chart-check renders. */
export const itValidates = it.skipIf(!VALIDATES);

/** beforeAll for the renders the file's describeRendered/itRendered tests read; nothing to do when they are skipped. */
export function beforeAllRendered(fn: () => Promise<unknown>, timeout: number): void {
  beforeAll(async () => {
    if (RENDERER !== undefined) await fn();
  }, timeout);
}

// ---------------------------------------------------------------------------- rendering

/** The deploy/values-*.yaml files (repo-relative). */
export function deployValuesFiles(): string[] {
  return fs
    .readdirSync(DEPLOY_DIR)
    .filter((f) => /^values-.*\.ya?ml$/.test(f))
    .sort()
    .map((f) => `deploy/${f}`);
}

/** Two plans and a default, with the operator on (every Quire process), for the plans tests. */
export const PLANS_VALUES = 'tests/chart/values-plans.yaml';

/**
 * The commented plans example in charts/quire/values.yaml (the `# default:` and `# definitions:`
 * lines under `plans:` and the commented lines after them), uncommented and parsed: the values a
 * reader would copy.
 */
export function plansExample(): { default: string; definitions: Record<string, Record<string, unknown>> } {
  const lines = fs.readFileSync(path.join(REPO_ROOT, CHART, 'values.yaml'), 'utf8').split('\n');
  const start = lines.indexOf('  # default: starter');
  if (start < 0) throw new Error('values.yaml: no commented plans example ("  # default: starter" under plans:)');
  const block: string[] = [];
  for (const line of lines.slice(start)) {
    if (!line.startsWith('  #')) break;
    block.push(line.replace(/^ {2}# ?/, ''));
  }
  return parseYaml(block.join('\n'));
}

/** Two more Postgres clusters (one in transaction mode), the operator on, for the clusters tests. */
export const CLUSTERS_VALUES = 'tests/chart/values-clusters.yaml';

/** One item of the chart's `clusters` values. */
export interface ClusterValue {
  name: string;
  weight?: number;
  poolMode?: 'session' | 'transaction';
  url: { secretKeyRef: { name: string; key: string } };
  directUrl?: { secretKeyRef: { name: string; key: string } };
}

/**
 * The commented clusters example in charts/quire/values.yaml (the `# clusters:` line after
 * `clusters: []` and the commented lines after it), uncommented and parsed: the values a reader
 * would copy.
 */
export function clustersExample(): { clusters: ClusterValue[] } {
  const lines = fs.readFileSync(path.join(REPO_ROOT, CHART, 'values.yaml'), 'utf8').split('\n');
  const start = lines.indexOf('# clusters:');
  if (start < 0 || lines[start - 2] !== 'clusters: []') throw new Error('values.yaml: no commented clusters example ("# clusters:" after "clusters: []")');
  const block: string[] = [];
  for (const line of lines.slice(start)) {
    if (!line.startsWith('#')) break;
    block.push(line.replace(/^# ?/, ''));
  }
  return parseYaml(block.join('\n'));
}

/** The variable a cluster's URL is in: QUIRE_CLUSTER_URL_<name upper-cased, - as _>. */
export function clusterVariable(name: string, direct = false): string {
  return `QUIRE_CLUSTER_${direct ? 'DIRECT_' : ''}URL_${name.toUpperCase().replace(/-/g, '_')}`;
}

/** A rendered Kubernetes object; fields are read as the test needs them. */
export interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  spec?: any;
  data?: Record<string, string>;
  [key: string]: any;
}

export interface Rendered {
  /** The renderer's exit status: 0 rendered (and, with chart-check, valid); a template's `required`/`fail` is non-zero with both. */
  status: number;
  /** chart-check's combined output (its findings), or helm's stderr (its errors). */
  output: string;
  objects: K8sObject[];
}

/** The render succeeded and, where the renderer validates (chart-check), found no error. */
export function expectValid(r: Rendered, message: string = r.output): void {
  expect(r.status, message).toBe(0);
  if (VALIDATES) expect(r.output, message).toMatch(/ 0 errors/);
}

/**
 * Renders the chart as release `quire` in namespace `quire` with `args` (helm template's value and
 * render flags: -f, --set, --set-string, --set-json, --kube-version, --api-versions, --is-upgrade,
 * --include-crds, -s...), and with chart-check validates it too. Resolves with the exit status, the
 * output and the objects; rejects only when the renderer cannot run at all.
 */
export function renderChart(args: readonly string[]): Promise<Rendered> {
  ready ??= prepare();
  return ready.then(
    () =>
      new Promise<Rendered>((resolve) => {
        queue.push(() => (RENDERER === 'helm' ? runHelm(args) : runChartCheck(args)).then(resolve));
        drain();
      }),
  );
}

let ready: Promise<void> | undefined;

/**
 * chart-check installs/builds its tools once (the first run takes a minute or two). Test files run in
 * parallel: on a fresh machine two setups would fight over apt's lock, so they take turns (flock).
 */
async function prepare(): Promise<void> {
  if (RENDERER === undefined) throw new Error('no chart renderer: its tests should have been skipped');
  if (RENDERER === 'helm') {
    const problem = helmProblem();
    if (problem !== undefined) throw new Error(`QUIRE_CHART_RENDERER=helm, but ${problem}`);
    return;
  }
  const r = await run('flock', [path.join(os.tmpdir(), 'quire-chart-check-setup.lock'), CHART_CHECK, '--setup']);
  if (r.status !== 0) throw new Error(`chart-check --setup (${CHART_CHECK}) failed with status ${r.status}:\n${r.stderr}`);
}

/** At most one render per CPU at a time: each chart-check run is a Go render plus a Node validator. */
const MAX_RUNNING = Math.max(2, os.availableParallelism());
const queue: (() => Promise<void>)[] = [];
let running = 0;

function drain(): void {
  while (running < MAX_RUNNING && queue.length > 0) {
    const next = queue.shift()!;
    running++;
    void next().finally(() => {
      running--;
      drain();
    });
  }
}

function run(file: string, args: readonly string[]): Promise<{ status: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(file, args, { cwd: REPO_ROOT, maxBuffer: 32 << 20 }, (error: ExecFileException | null, stdout, stderr) => {
      const status = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
      // Not started (ENOENT) or killed: the reason is only in the error.
      const unexited = error !== null && typeof error.code !== 'number';
      resolve({ status, stdout, stderr: unexited ? `${stderr}${error.message}\n` : stderr });
    });
  });
}

async function runChartCheck(args: readonly string[]): Promise<Rendered> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'quire-chart-'));
  const file = path.join(dir, 'rendered.yaml');
  const r = await run(CHART_CHECK, [CHART, RELEASE, '-n', NAMESPACE, ...args, '--save-rendered', file]);
  const text = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '';
  fs.rmSync(dir, { recursive: true, force: true });
  return { status: r.status, output: `${r.stdout}${r.stderr}`, objects: parseManifests(text) };
}

/** `helm template` prints the manifests on stdout and its errors on stderr; it checks nothing beyond rendering. */
async function runHelm(args: readonly string[]): Promise<Rendered> {
  const r = await run('helm', ['template', RELEASE, CHART, '-n', NAMESPACE, '--skip-schema-validation', '--kube-version', DEFAULT_KUBE_VERSION, ...args]);
  return { status: r.status, output: r.stderr, objects: parseManifests(r.stdout) };
}

export function parseManifests(text: string): K8sObject[] {
  return parseAllDocuments(text)
    .map((d) => d.toJS() as K8sObject | null)
    .filter((o): o is K8sObject => o !== null && typeof o === 'object' && 'kind' in o);
}

export function ofKind(objects: readonly K8sObject[], kind: string): K8sObject[] {
  return objects.filter((o) => o.kind === kind);
}

export function one(objects: readonly K8sObject[], kind: string, name?: string): K8sObject {
  const found = objects.filter((o) => o.kind === kind && (name === undefined || o.metadata.name === name));
  if (found.length !== 1) throw new Error(`expected one ${kind}${name ? ` ${name}` : ''}, found ${found.length}`);
  return found[0]!;
}

/** Whether every key/value of `selector` is in `labels`. */
export function selects(selector: Record<string, string> | undefined, labels: Record<string, string> | undefined): boolean {
  if (!selector || Object.keys(selector).length === 0) return false;
  return Object.entries(selector).every(([k, v]) => labels?.[k] === v);
}
