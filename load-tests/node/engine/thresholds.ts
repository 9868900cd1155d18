// k6 thresholds: `aggregation operator value` expressions on a metric or a submetric, parsed and
// evaluated the way k6 does (metrics/thresholds.go, thresholds_parser.go): the aggregations a
// metric type supports, operators tried longest first, a Rate or a Trend percentile that saw no
// sample passes (k6 has no value to compare), and `abortOnFail` after `delayAbortEval`.
import type { MetricType } from '../../lib/summary';
import { durationMs } from './duration';
import { CounterSink, GaugeSink, RateSink, Registry, TrendSink, trendStat, type Metric, type Sink } from './metrics';

export interface ThresholdExpression {
  /** value, count, rate, avg, min, med, max, or p(N). */
  aggregation: string;
  /** N of p(N). */
  percentile?: number;
  operator: '<' | '<=' | '>' | '>=' | '==' | '===' | '!=';
  value: number;
}

export type ThresholdSpec = string | { threshold: string; abortOnFail?: boolean; delayAbortEval?: string };

export interface Threshold {
  /** The metric or submetric it is set on, as written. */
  metricName: string;
  source: string;
  parsed: ThresholdExpression;
  abortOnFail: boolean;
  delayAbortEvalMs: number;
  metric: Metric;
  sink: Sink;
  /** Result of the last evaluation. */
  ok: boolean;
}

const OPERATORS = ['<=', '<', '>=', '>', '===', '==', '!='] as const;
const SUPPORTED: Record<MetricType, string[]> = {
  counter: ['count', 'rate'],
  gauge: ['value'],
  rate: ['rate'],
  trend: ['avg', 'min', 'max', 'med', 'p'],
};

/** Parses `p(95)<50`, `rate<0.01`, `count==0`…; throws on what k6 would refuse. */
export function parseThreshold(source: string): ThresholdExpression {
  for (const operator of OPERATORS) {
    const i = source.indexOf(operator);
    if (i === -1) continue;
    const left = source.slice(0, i).trim();
    const right = source.slice(i + operator.length).trim();
    if (right === '') continue;
    if (!/^-?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?$/.test(right)) throw new Error(`threshold ${JSON.stringify(source)}: right-hand side is not a number`);
    const value = Number(right);
    if (['value', 'count', 'rate', 'avg', 'min', 'med', 'max'].includes(left)) return { aggregation: left, operator, value };
    const p = /^p\((.*)\)$/.exec(left);
    if (p?.[1] !== undefined) {
      const percentile = Number(p[1]);
      if (p[1].trim() === '' || !Number.isFinite(percentile) || percentile < 0 || percentile > 100) {
        throw new Error(`threshold ${JSON.stringify(source)}: percentile must be a number between 0 and 100`);
      }
      return { aggregation: 'p', percentile, operator, value };
    }
    throw new Error(`threshold ${JSON.stringify(source)}: unknown aggregation ${JSON.stringify(left)}`);
  }
  throw new Error(`threshold ${JSON.stringify(source)}: malformed expression (expected e.g. 'p(95)<200')`);
}

/** Every threshold of `options.thresholds`, resolved against the registry (submetrics made as needed). */
export function compileThresholds(spec: Record<string, ThresholdSpec[]>, registry: Registry): Threshold[] {
  const out: Threshold[] = [];
  for (const [metricName, list] of Object.entries(spec)) {
    const { metric, sink } = registry.resolve(metricName);
    for (const item of list) {
      const t = typeof item === 'string' ? { threshold: item } : item;
      const parsed = parseThreshold(t.threshold);
      if (!SUPPORTED[metric.type].includes(parsed.aggregation)) {
        throw new Error(
          `threshold ${JSON.stringify(t.threshold)} on ${metricName}: a ${metric.type} supports ${SUPPORTED[metric.type].join(', ')}, not ${parsed.aggregation}`,
        );
      }
      out.push({
        metricName,
        source: t.threshold,
        parsed,
        abortOnFail: t.abortOnFail === true,
        delayAbortEvalMs: durationMs(t.delayAbortEval, 0),
        metric,
        sink,
        ok: true,
      });
    }
  }
  return out;
}

/** The value an aggregation reads from a sink, or undefined when k6 would have none. */
export function aggregate(sink: Sink, e: ThresholdExpression, elapsedMs: number): number | undefined {
  if (sink instanceof CounterSink) {
    if (e.aggregation === 'count') return sink.count;
    return elapsedMs > 0 ? sink.count / (elapsedMs / 1000) : undefined;
  }
  if (sink instanceof GaugeSink) return sink.value;
  if (sink instanceof RateSink) return sink.total > 0 ? sink.trues / sink.total : undefined;
  if (sink instanceof TrendSink) return trendStat(sink, e.aggregation === 'p' ? `p(${e.percentile ?? 0})` : e.aggregation);
  return undefined;
}

function compare(lhs: number, e: ThresholdExpression): boolean {
  switch (e.operator) {
    case '<':
      return lhs < e.value;
    case '<=':
      return lhs <= e.value;
    case '>':
      return lhs > e.value;
    case '>=':
      return lhs >= e.value;
    case '==':
    case '===':
      return lhs === e.value;
    case '!=':
      return lhs !== e.value;
  }
}

/** Evaluates every threshold now; returns the ones whose abortOnFail should stop the run. */
export function evaluate(thresholds: Threshold[], elapsedMs: number): Threshold[] {
  const abort: Threshold[] = [];
  for (const t of thresholds) {
    const lhs = aggregate(t.sink, t.parsed, elapsedMs);
    t.ok = lhs === undefined ? true : compare(lhs, t.parsed);
    if (!t.ok && t.abortOnFail && elapsedMs >= t.delayAbortEvalMs) abort.push(t);
  }
  return abort;
}
