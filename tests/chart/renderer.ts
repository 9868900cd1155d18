import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * What renders charts/quire in this run, chosen once (QUIRE_CHART_RENDERER=helm|chart-check|none forces it):
 * - `helm` on the PATH (`helm template`): renders only. Tests of chart-check's own findings (itValidates) are skipped.
 * - else chart-check beside the repository (../shared, as in our CI): renders and validates; every test runs.
 * - else none: the suites that read rendered manifests (describeRendered, itRendered) are skipped.
 * No vitest here: the suite's global setup reads RENDERER_NOTICE to print it once per run.
 */

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
/** The offline `helm template` + validator (shared/tools/chart-check/README.md), beside the repo. */
export const CHART_CHECK = path.resolve(REPO_ROOT, '../shared/tools/chart-check/chart-check');
const HELM_INSTALL = 'https://helm.sh/docs/intro/install/';

export type ChartRenderer = 'chart-check' | 'helm';

const NO_HELM = 'no helm on the PATH';

/** Why `helm` cannot render the chart here, or undefined when it can. */
export function helmProblem(): string | undefined {
  const help = spawnSync('helm', ['template', '--help'], { encoding: 'utf8' });
  if (help.error) return NO_HELM;
  // Without it helm enforces values.schema.json before rendering, and the tests of the templates' own
  // refusals would meet the schema's instead (values-schema.test.ts checks the schema; chart-check skips it too).
  if (!help.stdout.includes('--skip-schema-validation')) return 'helm is older than 3.16 (no `helm template --skip-schema-validation`)';
  return undefined;
}

function chooseRenderer(): { renderer: ChartRenderer | undefined; notice?: string } {
  const helm = 'chart tests render with helm: the tests of chart-check validation (Kubernetes schemas, policy) are skipped';
  const forced = process.env.QUIRE_CHART_RENDERER;
  if (forced === 'helm') return { renderer: 'helm', notice: helm };
  if (forced === 'chart-check') return { renderer: 'chart-check' };
  if (forced === 'none') return { renderer: undefined, notice: 'chart tests skipped: QUIRE_CHART_RENDERER=none' };
  if (forced) throw new Error(`QUIRE_CHART_RENDERER=${forced}: expected helm, chart-check or none`);
  const problem = helmProblem();
  if (problem === undefined) return { renderer: 'helm', notice: helm };
  if (fs.existsSync(CHART_CHECK)) return { renderer: 'chart-check' };
  const [why, fix] = problem === NO_HELM ? ['no renderer', 'install helm'] : [problem, 'upgrade helm'];
  return { renderer: undefined, notice: `chart tests skipped: ${why} — ${fix} (${HELM_INSTALL}) to run them` };
}

const choice = chooseRenderer();
/** The renderer of this run, or undefined: nothing renders the chart, its suites are skipped. */
export const RENDERER: ChartRenderer | undefined = choice.renderer;
/** The one line the run prints about the chart suites (skipped, or partly skipped), if any. */
export const RENDERER_NOTICE: string | undefined = choice.notice;
