import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { BUILTIN_METRICS } from '../../load-tests/node/engine/metrics';
import { validateOptions } from '../../load-tests/node/engine/validate';
import { buildOptions, CUSTOM_METRICS, DAY_CURVE, FAIRNESS, PROFILES, SCRIPTS, type ProfileName, type ScriptName } from '../../load-tests/scenarios.js';
import { ROOT } from '../support/process';

/**
 * The k6 options of every script under every profile, checked without a k6 binary (the operations
 * anchors, section 3.3): executor fields, duration syntax, threshold expressions, tag filters that
 * name declared scenarios, metrics that exist; then the runner's own validator, which is what k6
 * itself would refuse (exit 104).
 */
const scripts = Object.keys(SCRIPTS) as ScriptName[];
const profiles = Object.keys(PROFILES) as ProfileName[];
const DURATION = /^\d+(ms|s|m|h)$/;
const EXPRESSION = /^(avg|min|max|med|count|rate|value|p\(\d+(\.\d+)?\))\s*(<=?|>=?|===?|!=)\s*-?\d+(\.\d+)?$/;

/** The functions an entry script exports (read from its source: importing it needs k6's runtime). */
function exportedFunctions(script: ScriptName): Set<string> {
  const source = fs.readFileSync(path.join(ROOT, 'load-tests', `${script}.ts`), 'utf8');
  return new Set([...source.matchAll(/^export (?:async )?function (\w+)/gm)].map((m) => m[1]!));
}

/** Metric types the scripts may name: k6's built-ins and lib/metrics.ts's declarations. */
function metricType(name: string): string | undefined {
  return BUILTIN_METRICS[name]?.type ?? (CUSTOM_METRICS as Record<string, { type: string } | undefined>)[name]?.type;
}

describe.each(profiles)('profile %s', (profile) => {
  it.each(scripts)('%s: executors, durations, thresholds, tag filters and metrics are valid k6', (script) => {
    const options = buildOptions(script, { PROFILE: profile });
    const scenarios = Object.entries(options.scenarios);
    expect(scenarios.map(([name]) => name).sort()).toEqual(Object.keys(SCRIPTS[script].scenarios).sort());
    for (const [name, s] of scenarios) {
      const fields = s as unknown as Record<string, any>;
      expect(fields.exec, name).toBe(SCRIPTS[script].scenarios[name as keyof (typeof SCRIPTS)[ScriptName]['scenarios']]!.exec);
      expect(exportedFunctions(script).has(fields.exec), `${script}.ts exports ${fields.exec}`).toBe(true);
      expect(fields.gracefulStop).toMatch(DURATION);
      if (s.executor === 'constant-arrival-rate') {
        expect(Number.isInteger(fields.rate) && fields.rate >= 1, `${name}.rate ${fields.rate}`).toBe(true);
        expect(fields.timeUnit).toMatch(DURATION);
        expect(fields.duration).toMatch(DURATION);
      } else if (s.executor === 'ramping-arrival-rate') {
        expect(fields.stages.length).toBeGreaterThan(0);
        expect(Number.isInteger(fields.startRate)).toBe(true);
        expect(fields.timeUnit).toMatch(DURATION);
        for (const stage of fields.stages) {
          expect(stage.duration).toMatch(DURATION);
          expect(Number.isInteger(stage.target) && stage.target >= 0).toBe(true);
        }
      } else if (s.executor === 'constant-vus') {
        expect(Number.isInteger(fields.vus) && fields.vus >= 1, `${name}.vus ${fields.vus}`).toBe(true);
        expect(fields.duration).toMatch(DURATION);
        expect(fields.startTime).toMatch(DURATION);
        continue;
      } else throw new Error(`unexpected executor ${s.executor}`);
      expect(Number.isInteger(fields.preAllocatedVUs) && fields.preAllocatedVUs >= 1).toBe(true);
      expect(fields.maxVUs).toBeGreaterThanOrEqual(fields.preAllocatedVUs);
    }

    for (const [metric, list] of Object.entries(options.thresholds)) {
      const [, name, filter] = /^([a-z_]+)(?:\{(.*)\})?$/.exec(metric) ?? [];
      expect(name, metric).toBeDefined();
      expect(metricType(name!), `${metric}: a built-in or declared metric`).toBeDefined();
      for (const tag of filter ? filter.split(',') : []) {
        const [key, value] = tag.split(':').map((s) => s.trim());
        expect(value, `${metric}: tag ${tag}`).toBeTruthy();
        if (key === 'scenario') expect(Object.keys(options.scenarios), `${metric} names a declared scenario`).toContain(value);
      }
      for (const t of list) {
        const expression = typeof t === 'string' ? t : t.threshold;
        expect(expression, metric).toMatch(EXPRESSION);
        if (typeof t !== 'string' && t.delayAbortEval !== undefined) expect(t.delayAbortEval).toMatch(DURATION);
      }
    }

    const functions = exportedFunctions(script);
    expect(validateOptions(options, { metricType: (n) => metricType(n) as any, functions })).toEqual([]);
  });
});

describe('scenario definitions', () => {
  it('declares in lib/metrics.ts every custom metric the thresholds may name, with its type', () => {
    const source = fs.readFileSync(path.join(ROOT, 'load-tests/lib/metrics.ts'), 'utf8');
    for (const [name, m] of Object.entries(CUSTOM_METRICS)) expect(source).toContain(`declared('${name}', '${m.type}')`);
  });

  it('holds the design latency numbers in ci and soak, and enforces them per scenario', () => {
    for (const profile of ['ci', 'soak'] as const) {
      const t = buildOptions('read-mix', { PROFILE: profile }).thresholds;
      expect(t['http_req_duration{scenario:reads}']).toEqual(['p(95)<50', 'p(99)<150']);
      expect(t.http_req_failed).toEqual(['rate<0.001', { threshold: 'rate<0.05', abortOnFail: true, delayAbortEval: PROFILES[profile].delayAbortEval }]);
      expect(t.dropped_iterations).toEqual(['count==0']);
      expect(buildOptions('writes', { PROFILE: profile }).thresholds['http_req_duration{scenario:writes}']).toEqual(['p(95)<100', 'p(99)<250']);
      expect(buildOptions('oauth', { PROFILE: profile }).thresholds['http_req_duration{scenario:tokens}']).toEqual(['p(95)<150', 'p(99)<300']);
    }
    expect(buildOptions('read-mix', { PROFILE: 'soak' }).thresholds.checks).toEqual(['rate>0.999']);
    expect(buildOptions('read-mix').thresholds['http_req_duration{scenario:reads}']).toEqual(['p(95)<150', 'p(99)<450']);
  });

  it('reports capacity without judging latency, and stops it when errors pass 5%', () => {
    const o = buildOptions('read-mix', { PROFILE: 'capacity' });
    expect(o.thresholds['http_req_duration{scenario:reads}']).toEqual(['max>=0']);
    expect(o.thresholds.dropped_iterations).toBeUndefined();
    expect(o.thresholds.http_req_failed).toEqual([{ threshold: 'rate<0.05', abortOnFail: true, delayAbortEval: '30s' }]);
    const reads = o.scenarios.reads as any;
    expect(reads.executor).toBe('ramping-arrival-rate');
    // Seven steps of a ramp and a hold, up to 16x the ci rate (100/s).
    expect(reads.stages).toHaveLength(14);
    expect(Math.max(...reads.stages.map((s: any) => s.target))).toBe(1600);
    expect(reads.maxVUs).toBe(800);
  });

  it('follows the daily curve in the day script, over DURATION', () => {
    const o = buildOptions('day', { PROFILE: 'ci', DURATION: '24m' });
    const reads = o.scenarios.reads as any;
    expect(reads.stages).toHaveLength(DAY_CURVE.length);
    expect(reads.stages.every((s: any) => s.duration === '120s')).toBe(true);
    expect(Math.max(...reads.stages.map((s: any) => s.target))).toBe(60); // 100/s × share 0.6 at the peak
    expect(Object.keys(o.scenarios).sort()).toEqual(['bearer_reads', 'methods', 'reads', 'tokens', 'writes']);
  });

  it('runs the fairness script in two phases: the quiet tenant alone, then inside a longer flood', () => {
    const o = buildOptions('fairness', { PROFILE: 'ci', DURATION: '10s' });
    const window = (name: string) => {
      const s = o.scenarios[name] as any;
      return { executor: s.executor, vus: s.vus, startTime: s.startTime, duration: s.duration };
    };
    expect(FAIRNESS.leadFraction).toBe(0.2);
    expect(window('quiet_alone')).toEqual({ executor: 'constant-vus', vus: 4, startTime: '0s', duration: '10s' });
    // The flood builds up for 2 s before the quiet tenant is measured under it, and outlasts it by 2 s.
    expect(window('flood')).toEqual({ executor: 'constant-vus', vus: 48, startTime: '10s', duration: '14s' });
    expect(window('quiet_under_flood')).toEqual({ executor: 'constant-vus', vus: 4, startTime: '12s', duration: '10s' });
    expect(buildOptions('fairness', { PROFILE: 'ci' }).scenarios.quiet_alone).toMatchObject({ duration: PROFILES.ci.phase });
    expect(buildOptions('fairness', { FLOOD_VUS: '96' }).scenarios.flood).toMatchObject({ vus: 96 });
  });

  it("judges the fairness script's quiet tenant on every failure and its latency, the flood on neither", () => {
    const t = buildOptions('fairness', { PROFILE: 'ci' }).thresholds;
    for (const quiet of ['quiet_alone', 'quiet_under_flood']) {
      expect(t[`http_req_failed{scenario:${quiet}}`]).toEqual(['rate==0']);
      expect(t[`http_req_duration{scenario:${quiet}}`]).toEqual(['p(95)<50', 'p(99)<150']);
      expect(t[`http_reqs{scenario:${quiet}}`]).toEqual(['count>0']);
    }
    // Listed, not judged: a flood is slow, and its 429s are expected answers (flood_refused counts them).
    expect(t['http_req_duration{scenario:flood}']).toEqual(['max>=0']);
    expect(t['http_req_failed{scenario:flood}']).toEqual(['rate<0.01']);
    expect(t.flood_refused).toEqual(['count>=0']);
    expect(t.server_errors).toEqual(['count==0']);
    // Looping VUs never drop an iteration.
    expect(t.dropped_iterations).toBeUndefined();
    expect(buildOptions('fairness', { PROFILE: 'capacity' }).thresholds['http_req_failed{scenario:quiet_under_flood}']).toEqual(['rate>=0']);
  });

  it('scales rates, durations, VUs and latency limits from the environment, and refuses unknown names', () => {
    const o = buildOptions('writes', { PROFILE: 'ci', RATE_SCALE: '3', DURATION: '5m', MAX_VUS: '7', THRESHOLD_SCALE: '2' });
    expect(o.scenarios.writes).toMatchObject({ rate: 60, timeUnit: '1s', duration: '5m', maxVUs: 7, preAllocatedVUs: 6 });
    expect(o.thresholds['http_req_duration{scenario:writes}']).toEqual(['p(95)<200', 'p(99)<500']);
    // Under 20 iterations a second, the rate is counted per minute (k6 takes whole numbers).
    expect(buildOptions('oauth', { PROFILE: 'smoke' }).scenarios.tokens).toMatchObject({ rate: 60, timeUnit: '1m' });
    expect(() => buildOptions('read-mix', { PROFILE: 'huge' })).toThrow(/unknown PROFILE huge/);
    expect(() => buildOptions('nope' as ScriptName)).toThrow(/unknown script/);
  });
});
