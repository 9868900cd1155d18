// The checks k6 makes of `options` before it runs anything (it exits 104, "invalid config"):
// executors and their required fields, durations, VU counts, stages, the function each scenario
// executes, and thresholds (metric known, submetric tags well formed, expression parsable, an
// aggregation the metric's type has). Plus one k6 does not: a `scenario:` tag filter must name a
// declared scenario, or its threshold would silently watch nothing.
import type { MetricType } from '../../lib/summary';
import { parseDuration } from './duration';
import type { ScenarioConfig } from './executors';
import { parseMetricName } from './metrics';
import { parseThreshold, type ThresholdSpec } from './thresholds';

export interface OptionsShape {
  scenarios?: Record<string, ScenarioConfig>;
  thresholds?: Record<string, ThresholdSpec[]>;
  summaryTrendStats?: string[];
  setupTimeout?: string;
  teardownTimeout?: string;
}

export interface ValidationContext {
  /** The type of a metric by name (built in or declared by the script), or undefined. */
  metricType(name: string): MetricType | undefined;
  /** Names the script exports as functions. */
  functions: ReadonlySet<string>;
}

const EXECUTORS: Record<string, { required: string[]; allowed: string[] }> = {
  'constant-arrival-rate': { required: ['rate', 'duration', 'preAllocatedVUs'], allowed: ['timeUnit', 'maxVUs'] },
  'ramping-arrival-rate': { required: ['stages', 'preAllocatedVUs'], allowed: ['startRate', 'timeUnit', 'maxVUs'] },
  'constant-vus': { required: ['duration'], allowed: ['vus'] },
  'ramping-vus': { required: ['stages'], allowed: ['startVUs', 'gracefulRampDown'] },
  'per-vu-iterations': { required: [], allowed: ['vus', 'iterations', 'maxDuration'] },
  'shared-iterations': { required: [], allowed: ['vus', 'iterations', 'maxDuration'] },
};
const COMMON = ['executor', 'exec', 'startTime', 'gracefulStop', 'env', 'tags', 'options'];
const AGGREGATIONS: Record<MetricType, string[]> = { counter: ['count', 'rate'], gauge: ['value'], rate: ['rate'], trend: ['avg', 'min', 'max', 'med', 'p'] };

function isInt(v: unknown, min: number): boolean {
  return typeof v === 'number' && Number.isInteger(v) && v >= min;
}

/** Every problem with `options` (empty when k6 would run it). */
export function validateOptions(options: OptionsShape, ctx: ValidationContext): string[] {
  const errors: string[] = [];
  const duration = (where: string, value: unknown, allowZero = false): void => {
    if (typeof value !== 'string') {
      errors.push(`${where}: a duration string is required`);
      return;
    }
    try {
      if (parseDuration(value) <= 0 && !allowZero) errors.push(`${where}: ${value} must be longer than 0`);
    } catch (e) {
      errors.push(`${where}: ${(e as Error).message}`);
    }
  };
  const scenarios = options.scenarios ?? {};
  if (Object.keys(scenarios).length === 0) errors.push('options.scenarios: no scenario');
  for (const [name, s] of Object.entries(scenarios)) {
    const at = `scenario ${name}`;
    if (!/^[0-9A-Za-z_-]+$/.test(name)) errors.push(`${at}: invalid name (letters, digits, _ and - only)`);
    const spec = EXECUTORS[s.executor];
    if (!spec) {
      errors.push(`${at}: unknown executor ${JSON.stringify(s.executor)}`);
      continue;
    }
    const fields = s as unknown as Record<string, unknown>;
    for (const f of spec.required) if (fields[f] === undefined) errors.push(`${at}: ${s.executor} requires ${f}`);
    for (const f of Object.keys(fields))
      if (!COMMON.includes(f) && !spec.required.includes(f) && !spec.allowed.includes(f)) errors.push(`${at}: ${s.executor} has no field ${f}`);
    const exec = s.exec ?? 'default';
    if (!ctx.functions.has(exec)) errors.push(`${at}: exec ${exec} is not a function the script exports`);
    for (const f of ['startTime', 'gracefulStop', 'gracefulRampDown']) if (fields[f] !== undefined) duration(`${at}.${f}`, fields[f], true);
    if (s.timeUnit !== undefined) duration(`${at}.timeUnit`, s.timeUnit);
    if (s.duration !== undefined) duration(`${at}.duration`, s.duration);
    if (s.maxDuration !== undefined) duration(`${at}.maxDuration`, s.maxDuration);
    if (s.rate !== undefined && !isInt(s.rate, 1)) errors.push(`${at}.rate: a whole number of iterations per timeUnit, at least 1 (got ${s.rate})`);
    if (s.startRate !== undefined && !isInt(s.startRate, 0)) errors.push(`${at}.startRate: a whole number, at least 0 (got ${s.startRate})`);
    if (s.preAllocatedVUs !== undefined && !isInt(s.preAllocatedVUs, 0)) errors.push(`${at}.preAllocatedVUs: a whole number (got ${s.preAllocatedVUs})`);
    if (s.maxVUs !== undefined && (!isInt(s.maxVUs, 1) || s.maxVUs < (s.preAllocatedVUs ?? 0))) {
      errors.push(`${at}.maxVUs: a whole number, at least preAllocatedVUs (got ${s.maxVUs})`);
    }
    for (const f of ['vus', 'iterations', 'startVUs'] as const)
      if (s[f] !== undefined && !isInt(s[f], f === 'startVUs' ? 0 : 1)) errors.push(`${at}.${f}: a whole number (got ${s[f]})`);
    if (s.executor.startsWith('ramping')) {
      if (!Array.isArray(s.stages) || s.stages.length === 0) errors.push(`${at}.stages: at least one stage`);
      else
        s.stages.forEach((st, i) => {
          duration(`${at}.stages[${i}].duration`, st.duration, true);
          if (!isInt(st.target, 0)) errors.push(`${at}.stages[${i}].target: a whole number, at least 0 (got ${st.target})`);
        });
    }
  }

  for (const stat of options.summaryTrendStats ?? []) {
    if (!/^(avg|min|med|max|count|p\(\d+(\.\d+)?\))$/.test(stat)) errors.push(`summaryTrendStats: unknown statistic ${stat}`);
  }
  for (const f of ['setupTimeout', 'teardownTimeout'] as const) if (options[f] !== undefined) duration(f, options[f]);

  for (const [metricName, list] of Object.entries(options.thresholds ?? {})) {
    let parsed: ReturnType<typeof parseMetricName>;
    try {
      parsed = parseMetricName(metricName);
    } catch (e) {
      errors.push(`threshold on ${metricName}: ${(e as Error).message}`);
      continue;
    }
    const type = ctx.metricType(parsed.name);
    if (!type) {
      errors.push(`threshold on ${metricName}: no metric ${parsed.name} (built in, or declared by the script in its init context)`);
      continue;
    }
    for (const [k, v] of parsed.tags) {
      if (k === 'scenario' && !(v in scenarios)) errors.push(`threshold on ${metricName}: no scenario ${v}`);
    }
    if (!Array.isArray(list)) {
      errors.push(`threshold on ${metricName}: a list of expressions is required`);
      continue;
    }
    for (const item of list) {
      const source = typeof item === 'string' ? item : item.threshold;
      try {
        const e = parseThreshold(source);
        if (!AGGREGATIONS[type].includes(e.aggregation)) errors.push(`threshold ${source} on ${metricName}: a ${type} has ${AGGREGATIONS[type].join(', ')}`);
      } catch (err) {
        errors.push(`threshold on ${metricName}: ${(err as Error).message}`);
      }
      if (typeof item !== 'string' && item.delayAbortEval !== undefined) duration(`threshold ${source} delayAbortEval`, item.delayAbortEval, true);
    }
  }
  return errors;
}
