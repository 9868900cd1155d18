// The runner's metric registry: k6's four metric types with k6's sinks (a Trend keeps every value
// and interpolates percentiles as k6 does), built-in metrics declared up front, custom ones when a
// script constructs them, and submetrics (`metric{tag:value,…}`) that receive every sample whose
// tags match, as a threshold or the summary names them.
import type { MetricType, SummaryMetric } from '../../lib/summary';

export type Tags = Record<string, string>;
export type Contains = SummaryMetric['contains'];

export class TrendSink {
  private values = new Float64Array(1024);
  count = 0;
  sum = 0;
  min = 0;
  max = 0;
  private sorted = true;

  add(v: number): void {
    if (this.count === this.values.length) {
      const grown = new Float64Array(this.values.length * 2);
      grown.set(this.values);
      this.values = grown;
    }
    this.values[this.count] = v;
    if (this.count === 0 || v < this.min) this.min = v;
    if (this.count === 0 || v > this.max) this.max = v;
    this.count++;
    this.sum += v;
    this.sorted = false;
  }

  avg(): number {
    return this.count ? this.sum / this.count : 0;
  }

  /** k6's TrendSink.P: linear interpolation between the closest ranks. `pct` in 0..1. */
  p(pct: number): number {
    if (this.count === 0) return 0;
    if (this.count === 1) return this.values[0] ?? 0;
    if (!this.sorted) {
      this.values.subarray(0, this.count).sort();
      this.sorted = true;
    }
    const i = pct * (this.count - 1);
    const lo = this.values[Math.floor(i)] ?? 0;
    const hi = this.values[Math.ceil(i)] ?? 0;
    return lo + (hi - lo) * (i - Math.floor(i));
  }
}

export class CounterSink {
  count = 0;
  add(v: number): void {
    this.count += v;
  }
}

export class GaugeSink {
  value = 0;
  min = 0;
  max = 0;
  seen = false;
  add(v: number): void {
    this.value = v;
    if (!this.seen || v < this.min) this.min = v;
    if (!this.seen || v > this.max) this.max = v;
    this.seen = true;
  }
}

export class RateSink {
  trues = 0;
  total = 0;
  add(v: number): void {
    this.total++;
    if (v !== 0) this.trues++;
  }
}

export type Sink = TrendSink | CounterSink | GaugeSink | RateSink;

function newSink(type: MetricType): Sink {
  switch (type) {
    case 'trend':
      return new TrendSink();
    case 'counter':
      return new CounterSink();
    case 'gauge':
      return new GaugeSink();
    case 'rate':
      return new RateSink();
  }
}

export interface Submetric {
  /** `http_req_duration{scenario:reads}`, as written. */
  name: string;
  tags: [string, string][];
  sink: Sink;
}

export interface Metric {
  name: string;
  type: MetricType;
  contains: Contains;
  sink: Sink;
  submetrics: Submetric[];
}

export const BUILTIN_METRICS: Record<string, { type: MetricType; contains: Contains }> = {
  checks: { type: 'rate', contains: 'default' },
  data_received: { type: 'counter', contains: 'data' },
  data_sent: { type: 'counter', contains: 'data' },
  dropped_iterations: { type: 'counter', contains: 'default' },
  group_duration: { type: 'trend', contains: 'time' },
  http_req_blocked: { type: 'trend', contains: 'time' },
  http_req_connecting: { type: 'trend', contains: 'time' },
  http_req_duration: { type: 'trend', contains: 'time' },
  http_req_failed: { type: 'rate', contains: 'default' },
  http_req_receiving: { type: 'trend', contains: 'time' },
  http_req_sending: { type: 'trend', contains: 'time' },
  http_req_tls_handshaking: { type: 'trend', contains: 'time' },
  http_req_waiting: { type: 'trend', contains: 'time' },
  http_reqs: { type: 'counter', contains: 'default' },
  iteration_duration: { type: 'trend', contains: 'time' },
  iterations: { type: 'counter', contains: 'default' },
  vus: { type: 'gauge', contains: 'default' },
  vus_max: { type: 'gauge', contains: 'default' },
};

/** k6's ParseMetricName + AddSubmetric: `name{k:v, k2:"v2"}` → name and tag pairs (quotes and spaces trimmed). */
export function parseMetricName(full: string): { name: string; tags: [string, string][] } {
  const open = full.indexOf('{');
  const close = full.lastIndexOf('}');
  if (open === -1 && close === -1) return { name: full, tags: [] };
  if (open === -1 || close === -1 || close < open || close !== full.length - 1) throw new Error(`malformed metric name ${full}`);
  const tags: [string, string][] = [];
  for (const kv of full.slice(open + 1, close).split(',')) {
    if (kv.trim() === '') continue;
    const i = kv.indexOf(':');
    const trim = (s: string) => s.trim().replace(/^["']+|["']+$/g, '');
    if (i === -1 || kv.slice(i + 1).trim() === '') throw new Error(`malformed tag expression ${JSON.stringify(kv)} in ${full}`);
    tags.push([trim(kv.slice(0, i)), trim(kv.slice(i + 1))]);
  }
  if (tags.length === 0) throw new Error(`empty submetric criteria in ${full}`);
  return { name: full.slice(0, open), tags };
}

export class Registry {
  readonly metrics = new Map<string, Metric>();

  constructor() {
    for (const [name, m] of Object.entries(BUILTIN_METRICS)) this.declare(name, m.type, m.contains);
  }

  /** A metric, made on first declaration; declaring it again with another type is an error (as in k6). */
  declare(name: string, type: MetricType, contains: Contains = 'default'): Metric {
    const existing = this.metrics.get(name);
    if (existing) {
      if (existing.type !== type) throw new Error(`metric ${name} already exists as a ${existing.type}, not a ${type}`);
      return existing;
    }
    if (!/^[a-zA-Z_][a-zA-Z0-9_]{0,127}$/.test(name)) throw new Error(`invalid metric name ${JSON.stringify(name)}`);
    const metric: Metric = { name, type, contains, sink: newSink(type), submetrics: [] };
    this.metrics.set(name, metric);
    return metric;
  }

  /** The metric or submetric a threshold names (the submetric made on first use). */
  resolve(full: string): { metric: Metric; sink: Sink } {
    const { name, tags } = parseMetricName(full);
    const metric = this.metrics.get(name);
    if (!metric) throw new Error(`no metric named ${JSON.stringify(name)} (thresholds may name built-in metrics and the ones the script declares)`);
    if (tags.length === 0) return { metric, sink: metric.sink };
    const key = JSON.stringify([...tags].sort());
    let sub = metric.submetrics.find((s) => JSON.stringify([...s.tags].sort()) === key);
    if (!sub) {
      sub = { name: full, tags, sink: newSink(metric.type) };
      metric.submetrics.push(sub);
    }
    return { metric, sink: sub.sink };
  }

  /** One sample: into the metric and every submetric whose tags all match. */
  add(name: string, value: number, tags: Tags): void {
    const metric = this.metrics.get(name);
    if (!metric) throw new Error(`no metric named ${name}`);
    metric.sink.add(value);
    for (const sub of metric.submetrics) {
      if (sub.tags.every(([k, v]) => tags[k] === v)) sub.sink.add(value);
    }
  }

  /** Whether any sample reached a sink (for k6's "no samples" cases). */
  static empty(sink: Sink): boolean {
    if (sink instanceof TrendSink) return sink.count === 0;
    if (sink instanceof RateSink) return sink.total === 0;
    if (sink instanceof GaugeSink) return !sink.seen;
    return false;
  }
}

/** The values k6 reports for a sink in handleSummary's data (`trendStats` for a Trend). */
export function sinkValues(sink: Sink, trendStats: readonly string[], seconds: number): Record<string, number> {
  if (sink instanceof CounterSink) return { count: sink.count, rate: seconds > 0 ? sink.count / seconds : 0 };
  if (sink instanceof GaugeSink) return { value: sink.value, min: sink.min, max: sink.max };
  if (sink instanceof RateSink) return { rate: sink.total ? sink.trues / sink.total : 0, passes: sink.trues, fails: sink.total - sink.trues };
  const out: Record<string, number> = {};
  for (const stat of trendStats) out[stat] = trendStat(sink, stat);
  return out;
}

/** One statistic of a Trend: avg, min, med, max, count, or p(N). */
export function trendStat(sink: TrendSink, stat: string): number {
  switch (stat) {
    case 'avg':
      return sink.avg();
    case 'min':
      return sink.min;
    case 'max':
      return sink.max;
    case 'med':
      return sink.p(0.5);
    case 'count':
      return sink.count;
    default: {
      const m = /^p\((\d+(?:\.\d+)?)\)$/.exec(stat);
      if (!m) throw new Error(`unknown trend statistic ${stat}`);
      return sink.p(Number(m[1]) / 100);
    }
  }
}

/** The registry every shim and the runner share (one test per process). */
export const registry = new Registry();
