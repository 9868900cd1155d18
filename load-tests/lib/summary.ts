// The end-of-test summary. handleSummary() gets k6's summary data (the documented
// `handleSummary(data)` object: metrics with their values and thresholds, the root group's checks,
// the run's duration), prints it as text in the style of k6's own summary, and writes it as JSON
// for dashboards and CI (without setup()'s data: that holds API secrets), with a script's own
// section after it (the fairness script's figures, at the end of this file). The Node runner builds
// the same object and calls the same functions, so both runners print the same report.

export type MetricType = 'counter' | 'gauge' | 'rate' | 'trend';

export interface SummaryMetric {
  type: MetricType;
  contains: 'time' | 'data' | 'default';
  /** counter: count, rate (per second); gauge: value, min, max; rate: rate, passes, fails; trend: the summaryTrendStats. */
  values: Record<string, number>;
  /** Threshold expression → whether it held. */
  thresholds?: Record<string, { ok: boolean }>;
}

export interface SummaryCheck {
  name: string;
  path: string;
  id: string;
  passes: number;
  fails: number;
}

export interface SummaryGroup {
  name: string;
  path: string;
  id: string;
  groups: SummaryGroup[];
  checks: SummaryCheck[];
}

export interface SummaryData {
  root_group: SummaryGroup;
  options: { summaryTrendStats: string[]; summaryTimeUnit: string; noColor: boolean };
  state: { isStdOutTTY: boolean; isStdErrTTY: boolean; testRunDurationMs: number };
  metrics: Record<string, SummaryMetric>;
  setup_data?: unknown;
}

const SECTIONS: [string, (name: string) => boolean][] = [
  ['HTTP', (n) => n.startsWith('http_')],
  ['EXECUTION', (n) => ['dropped_iterations', 'iteration_duration', 'iterations', 'vus', 'vus_max'].includes(n)],
  ['NETWORK', (n) => n.startsWith('data_')],
];

function trimNumber(v: number, digits: number): string {
  return Number(v.toFixed(digits)).toString();
}

/** k6's way: µs under a millisecond, ms under a second, then s, then XmYs. */
export function humanDuration(ms: number): string {
  if (!Number.isFinite(ms)) return String(ms);
  if (ms === 0) return '0s';
  if (ms < 1) return `${trimNumber(ms * 1000, 2)}µs`;
  if (ms < 1000) return `${trimNumber(ms, 2)}ms`;
  if (ms < 60000) return `${trimNumber(ms / 1000, 2)}s`;
  const m = Math.floor(ms / 60000);
  return `${m}m${trimNumber((ms - m * 60000) / 1000, 1)}s`;
}

export function humanBytes(bytes: number): string {
  const units = ['B', 'kB', 'MB', 'GB', 'TB'];
  let v = bytes;
  let i = 0;
  while (v >= 1000 && i < units.length - 1) {
    v /= 1000;
    i++;
  }
  return `${i === 0 ? String(Math.round(v)) : trimNumber(v, 1)} ${units[i] ?? ''}`;
}

function percent(rate: number): string {
  return `${(Math.trunc(rate * 10000) / 100).toFixed(2)}%`;
}

/** One value of a metric as text (a statistic `stat` of a trend, or the metric's main value). */
export function humanValue(metric: SummaryMetric, stat: string): string {
  const v = metric.values[stat] ?? 0;
  if (metric.type === 'rate' && stat === 'rate') return percent(v);
  if (stat === 'count' || stat === 'passes' || stat === 'fails') return String(Math.round(v));
  if (metric.contains === 'time') return humanDuration(v);
  if (metric.contains === 'data') return humanBytes(v);
  return trimNumber(v, 6);
}

function metricLine(metric: SummaryMetric, trendStats: string[], seconds: number): string {
  switch (metric.type) {
    case 'trend':
      return trendStats.map((s) => `${s}=${humanValue(metric, s)}`).join(' ');
    case 'rate': {
      const passes = metric.values.passes ?? 0;
      const total = passes + (metric.values.fails ?? 0);
      return `${humanValue(metric, 'rate').padEnd(7)} ${passes} out of ${total}`;
    }
    case 'counter': {
      const count = metric.values.count ?? 0;
      const perSecond = metric.contains === 'data' ? `${humanBytes(count / Math.max(seconds, 1e-9))}/s` : `${trimNumber(count / Math.max(seconds, 1e-9), 6)}/s`;
      return `${(metric.contains === 'data' ? humanBytes(count) : String(count)).padEnd(7)} ${perSecond}`;
    }
    case 'gauge':
      return `${humanValue(metric, 'value').padEnd(7)} min=${humanValue(metric, 'min')} max=${humanValue(metric, 'max')}`;
  }
}

/** `http_req_duration{scenario:reads}` → [`http_req_duration`, `scenario:reads`]. */
function splitName(name: string): [string, string | undefined] {
  const i = name.indexOf('{');
  return i < 0 ? [name, undefined] : [name.slice(0, i), name.slice(i + 1, -1)];
}

function allChecks(group: SummaryGroup): SummaryCheck[] {
  return [...group.checks, ...group.groups.flatMap(allChecks)];
}

/** The thresholds that failed, as `metric: expression` (empty when all held). */
export function failedThresholds(data: Pick<SummaryData, 'metrics'>): string[] {
  return Object.entries(data.metrics).flatMap(([name, m]) =>
    Object.entries(m.thresholds ?? {})
      .filter(([, t]) => !t.ok)
      .map(([expr]) => `${name}: ${expr}`),
  );
}

/** The statistic a threshold expression reads (`p(95)<50` → `p(95)`). */
function statOf(expression: string): string {
  return (/^\s*([a-z]+(?:\([\d.]+\))?)/.exec(expression)?.[1] ?? '').trim();
}

/** k6's end-of-test summary as plain text (no colours: it goes to logs and CI as often as to a terminal). */
export function textSummary(data: SummaryData, about?: string): string {
  const seconds = data.state.testRunDurationMs / 1000;
  const trendStats = data.options.summaryTrendStats;
  const out: string[] = [];
  if (about) out.push(`  ${about}`, '');

  // Thresholds, one block per metric.
  const withThresholds = Object.entries(data.metrics)
    .filter(([, m]) => m.thresholds && Object.keys(m.thresholds).length > 0)
    .sort(([a], [b]) => a.localeCompare(b));
  if (withThresholds.length) {
    out.push('  █ THRESHOLDS', '');
    for (const [name, m] of withThresholds) {
      out.push(`    ${name}`);
      for (const [expr, t] of Object.entries(m.thresholds ?? {})) {
        const stat = statOf(expr);
        const value = stat === 'count' && m.type === 'counter' ? String(m.values.count ?? 0) : stat in m.values ? humanValue(m, stat) : 'no samples';
        out.push(`    ${t.ok ? '✓' : '✗'} '${expr}' ${stat}=${value}`);
      }
      out.push('');
    }
  }

  out.push('  █ TOTAL RESULTS', '');
  const checks = allChecks(data.root_group);
  if (checks.length) {
    const passes = checks.reduce((s, c) => s + c.passes, 0);
    const fails = checks.reduce((s, c) => s + c.fails, 0);
    const total = passes + fails;
    const width = 35;
    out.push(`    ${'checks_total'.padEnd(width, '.')}: ${String(total).padEnd(7)} ${trimNumber(total / Math.max(seconds, 1e-9), 6)}/s`);
    out.push(`    ${'checks_succeeded'.padEnd(width, '.')}: ${percent(total ? passes / total : 0).padEnd(7)} ${passes} out of ${total}`);
    out.push(`    ${'checks_failed'.padEnd(width, '.')}: ${percent(total ? fails / total : 0).padEnd(7)} ${fails} out of ${total}`, '');
    for (const c of checks) {
      if (c.fails === 0) out.push(`    ✓ ${c.name}`);
      else out.push(`    ✗ ${c.name}`, `      ↳  ${Math.floor((100 * c.passes) / (c.passes + c.fails))}% — ✓ ${c.passes} / ✗ ${c.fails}`);
    }
    out.push('');
  }

  // Metrics by section (custom ones first, as k6 does); submetrics under their parent.
  const names = Object.keys(data.metrics).filter((n) => n !== 'checks');
  const parents = [...new Set(names.map((n) => splitName(n)[0]))].sort();
  const sectionOf = (n: string) => SECTIONS.find(([, test]) => test(n))?.[0] ?? 'CUSTOM';
  const width = Math.max(35, ...names.map((n) => (splitName(n)[1] ? `  { ${splitName(n)[1] ?? ''} }`.length : n.length) + 2));
  for (const section of ['CUSTOM', ...SECTIONS.map(([s]) => s)]) {
    const inSection = parents.filter((p) => sectionOf(p) === section);
    if (!inSection.length) continue;
    out.push(`    ${section}`);
    for (const parent of inSection) {
      const m = data.metrics[parent];
      if (m) out.push(`    ${parent.padEnd(width, '.')}: ${metricLine(m, trendStats, seconds)}`);
      for (const sub of names.filter((n) => splitName(n)[0] === parent && n !== parent).sort()) {
        const sm = data.metrics[sub];
        if (sm) out.push(`      ${`{ ${splitName(sub)[1] ?? ''} }`.padEnd(width - 2, '.')}: ${metricLine(sm, trendStats, seconds)}`);
      }
    }
    out.push('');
  }

  const failed = failedThresholds(data);
  out.push(
    failed.length
      ? `  ✗ ${failed.length} threshold(s) failed: ${failed.join('; ')}`
      : `  ✓ every threshold held (${withThresholds.reduce((s, [, m]) => s + Object.keys(m.thresholds ?? {}).length, 0)})`,
  );
  return `${out.join('\n')}\n`;
}

export interface SummaryMeta {
  script: string;
  profile: string;
  /** Where the load went (origins only, never credentials). */
  bases: string[];
  tenants: number;
  runner: string;
  /** What was loaded, when the runner knows (the Node runner's local stack). */
  target?: string;
}

/** A script's own section of the summary (the fairness script's figures): text under k6's, and a JSON key. */
export interface SummaryReport {
  key: string;
  text: string;
  json: unknown;
}

/**
 * handleSummary's answer: the text on stdout, and the JSON (k6's summary data minus setup_data,
 * plus `meta`, plus the script's `report` under its key) at `jsonPath`.
 */
export function summarize(data: SummaryData, jsonPath: string, meta: SummaryMeta, report?: SummaryReport): Record<string, string> {
  const { setup_data: _secrets, ...rest } = data;
  const about = `${meta.script} (profile ${meta.profile}) against ${meta.bases.join(', ')}, ${meta.tenants} tenant(s), ${meta.runner} runner${meta.target ? `\n  ${meta.target}` : ''}`;
  const json = { meta: { ...meta, finishedAt: new Date().toISOString() }, ...(report ? { [report.key]: report.json } : {}), ...rest };
  return {
    stdout: `${textSummary(rest, about)}${report ? `\n${report.text}` : ''}  JSON summary: ${jsonPath}\n`,
    [jsonPath]: `${JSON.stringify(json, null, 2)}\n`,
  };
}

// The fairness script's section, from the same data: the quiet tenant alone and under the flood
// (p50, p99, requests, failures), the flood's answers and refusals, and the figure the issue sets a
// target on: the quiet tenant's p99 under the flood over its p99 alone. k6 thresholds compare one
// metric with a constant, and a script cannot read a metric's aggregate while the test runs, so
// that ratio cannot be a threshold: it is printed as a pass/fail line and written to the JSON
// summary (`fairness.withinTarget`) for a CI job to gate on; the exit code does not include it.

export interface ScenarioFigures {
  /** ms; null when the scenario has no latency sample. */
  p50: number | null;
  p99: number | null;
  requests: number;
  /** Requests counted in http_req_failed (the flood's 429s are not). */
  failed: number;
}

export interface FairnessFigures {
  floodTenant: string;
  quietTenant: string;
  quietAlone: ScenarioFigures;
  quietUnderFlood: ScenarioFigures;
  flood: ScenarioFigures & { refused: number };
  /** quietUnderFlood.p99 / quietAlone.p99; null without both. */
  p99Ratio: number | null;
  targetRatio: number;
  withinTarget: boolean;
}

function scenarioFigures(data: SummaryData, scenario: string): ScenarioFigures {
  const duration = data.metrics[`http_req_duration{scenario:${scenario}}`]?.values;
  const requests = data.metrics[`http_reqs{scenario:${scenario}}`]?.values.count ?? duration?.count ?? 0;
  // A Rate's `passes` are its non-zero samples: for http_req_failed, the failed requests.
  const failed = data.metrics[`http_req_failed{scenario:${scenario}}`]?.values.passes ?? 0;
  const sampled = (duration?.count ?? requests) > 0;
  return { p50: sampled ? (duration?.med ?? null) : null, p99: sampled ? (duration?.['p(99)'] ?? null) : null, requests, failed };
}

/** Who floods, who is quiet, and the issue's target for the p99 ratio (FAIRNESS in scenarios.js). */
export interface FairnessRun {
  flood: string;
  quiet: string;
  targetRatio: number;
}

/** The figures of a fairness run. */
export function fairnessFigures(data: SummaryData, run: FairnessRun): FairnessFigures {
  const quietAlone = scenarioFigures(data, 'quiet_alone');
  const quietUnderFlood = scenarioFigures(data, 'quiet_under_flood');
  const refused = data.metrics.flood_refused?.values.count ?? 0;
  const p99Ratio = quietAlone.p99 && quietUnderFlood.p99 !== null ? quietUnderFlood.p99 / quietAlone.p99 : null;
  return {
    floodTenant: run.flood,
    quietTenant: run.quiet,
    quietAlone,
    quietUnderFlood,
    flood: { ...scenarioFigures(data, 'flood'), refused },
    p99Ratio,
    targetRatio: run.targetRatio,
    withinTarget: p99Ratio !== null && p99Ratio <= run.targetRatio,
  };
}

function latencies(f: ScenarioFigures): string {
  const ms = (v: number | null) => (v === null ? 'no samples' : humanDuration(v));
  return `p50=${ms(f.p50)} p99=${ms(f.p99)}`;
}

function verdict(f: FairnessFigures): string {
  if (f.p99Ratio === null) return `  ✗ quiet p99 under the flood: no ratio (a quiet scenario has no latency samples); target ≤ ${f.targetRatio}x alone`;
  const ratio = `${f.p99Ratio.toFixed(2)}x alone`;
  return f.withinTarget
    ? `  ✓ quiet p99 under the flood: ${ratio} (target ≤ ${f.targetRatio}x)`
    : `  ✗ quiet p99 under the flood: ${ratio}, over the target of ${f.targetRatio}x (not a threshold: the exit code does not include it)`;
}

/** The report as text, in the summary's layout. */
export function fairnessText(f: FairnessFigures): string {
  const row = (label: string, text: string) => `    ${label.padEnd(24, '.')}: ${text}`;
  const answered = f.flood.requests - f.flood.refused - f.flood.failed;
  return [
    `  █ FAIRNESS: ${f.quietTenant} quiet, ${f.floodTenant} flooding`,
    '',
    row('quiet alone', `${latencies(f.quietAlone)}, ${f.quietAlone.requests} requests, ${f.quietAlone.failed} failed`),
    row('quiet under the flood', `${latencies(f.quietUnderFlood)}, ${f.quietUnderFlood.requests} requests, ${f.quietUnderFlood.failed} failed`),
    row('flood', `${latencies(f.flood)}, ${f.flood.requests} requests: ${answered} answered, ${f.flood.refused} refused (429), ${f.flood.failed} failed`),
    '',
    verdict(f),
    '',
  ].join('\n');
}

/** handleSummary's extra section: the text under k6's summary, and `fairness` in the JSON. */
export function fairnessReport(data: SummaryData, run: FairnessRun): SummaryReport {
  const figures = fairnessFigures(data, run);
  return { key: 'fairness', text: fairnessText(figures), json: figures };
}
