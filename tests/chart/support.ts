import { execFile, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
/** The offline `helm template` + validator (shared/tools/chart-check/README.md), beside the repo. */
export const CHART_CHECK = path.resolve(REPO_ROOT, '../shared/tools/chart-check/chart-check');
export const CHART = 'charts/quire';
export const DEPLOY_DIR = path.join(REPO_ROOT, 'deploy');

/** The deploy/values-*.yaml files (repo-relative). */
export function deployValuesFiles(): string[] {
  return fs
    .readdirSync(DEPLOY_DIR)
    .filter((f) => /^values-.*\.ya?ml$/.test(f))
    .sort()
    .map((f) => `deploy/${f}`);
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
  /** chart-check's exit status (0: rendered and valid). */
  status: number;
  output: string;
  objects: K8sObject[];
}

/**
 * Installs/builds chart-check's tools once (the first run takes a minute or two). Test files run in
 * parallel: on a fresh machine two setups would fight over apt's lock, so they take turns (flock).
 */
export function setupChartCheck(): void {
  execFileSync('flock', [path.join(os.tmpdir(), 'quire-chart-check-setup.lock'), CHART_CHECK, '--setup'], { cwd: REPO_ROOT, stdio: 'pipe' });
}

/**
 * Renders and validates the chart with chart-check (one run does both: --save-rendered keeps the
 * manifests it validated). Resolves with the exit status, the combined output and the objects.
 */
export function chartCheck(args: readonly string[]): Promise<Rendered> {
  return new Promise((resolve) => {
    queue.push(() => runChartCheck(args).then(resolve));
    drain();
  });
}

/** At most one chart-check per CPU at a time: each run is a Go render plus a Node validator. */
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

function runChartCheck(args: readonly string[]): Promise<Rendered> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'quire-chart-'));
  const file = path.join(dir, 'rendered.yaml');
  return new Promise((resolve) => {
    execFile(
      CHART_CHECK,
      [CHART, 'quire', '-n', 'quire', ...args, '--save-rendered', file],
      { cwd: REPO_ROOT, maxBuffer: 32 << 20 },
      (error, stdout, stderr) => {
        const status = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
        const text = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '';
        fs.rmSync(dir, { recursive: true, force: true });
        resolve({ status, output: `${stdout}${stderr}`, objects: parseManifests(text) });
      },
    );
  });
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
