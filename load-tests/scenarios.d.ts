// Types of scenarios.js (a plain ES module, so that k6 and Node import the same file). Each export
// of scenarios.js is annotated with the type declared here; `tsc -p load-tests` checks both.
import type { Options, Scenario, Threshold } from 'k6/options';

export type ProfileName = 'smoke' | 'ci' | 'capacity' | 'soak';
export type ScriptName = 'read-mix' | 'writes' | 'methods' | 'oauth' | 'day' | 'fairness';
/** Scenarios run at an arrival rate (an open model: iterations start on schedule). */
export type RateScenarioName = 'reads' | 'writes' | 'methods' | 'tokens' | 'bearer_reads';
/** The fairness script's scenarios: a fixed number of VUs each, looping (a closed model, as the bench's connections). */
export type FairnessScenarioName = 'quiet_alone' | 'flood' | 'quiet_under_flood';
/** The k6 scenarios (the `scenario` tag of every sample). */
export type ScenarioName = RateScenarioName | FairnessScenarioName;
/** The exported iteration functions a scenario's `exec` names. */
export type ExecName = 'reads' | 'writes' | 'methods' | 'tokens' | 'bearerReads' | 'quietList' | 'floodList';

export interface ProfileSpec {
  about: string;
  /** Multiplies BASE_RATES. */
  scale: number;
  /** Multiplies LATENCY_MS (with THRESHOLD_SCALE). */
  latencyScale: number;
  /** constant-arrival-rate for this long (profiles without `steps`). */
  duration?: string;
  /** ramping-arrival-rate through these multiples of the ci rate, `step` each (capacity). */
  steps?: number[];
  step?: string;
  /** The length of one day for the `day` script. */
  day: string;
  /** The length of each of the `fairness` script's two phases (alone, under the flood). */
  phase: string;
  /** `http_req_failed` must stay under this rate. */
  failedRate: number;
  /** `checks` must stay over this rate. */
  checksRate: number;
  /** How long the abort-on-fail error threshold waits before it may stop the run. */
  delayAbortEval: string;
}

/** A scenario at `share` of its BASE_RATES arrival rate. */
export interface RateScenarioSpec {
  exec: ExecName;
  share: number;
}

/**
 * When a fairness scenario runs, with P the profile's `phase` and L the flood's lead (FAIRNESS.leadFraction of P):
 * `alone` [0, P); `flood` [P, 2P+2L); `under_flood` [P+L, 2P+L), inside the flood, which has
 * built up before it starts and still runs when it ends.
 */
export type PhaseWindow = 'alone' | 'flood' | 'under_flood';

/** A scenario of `vus` VUs looping through its window of the fairness script's timeline. */
export interface PhaseScenarioSpec {
  exec: ExecName;
  vus: number;
  window: PhaseWindow;
}

export interface ScriptSpec {
  about: string;
  /** k6 scenario name → exported function, and its share of the base rate or its VUs and window. */
  scenarios: Partial<Record<RateScenarioName, RateScenarioSpec>> & Partial<Record<FairnessScenarioName, PhaseScenarioSpec>>;
}

export interface MethodCall {
  /** The `name` tag of its requests: `method:<name>`. */
  name: string;
  method: string;
  /** Query arguments; `{todo}` is replaced by a seeded ToDo's name. */
  args: Record<string, string>;
}

export type CustomMetricType = 'counter' | 'gauge' | 'rate' | 'trend';

/** What buildOptions returns: k6 Options with the parts the runner and the tests rely on present. */
export interface LoadOptions extends Options {
  scenarios: Record<string, Scenario>;
  thresholds: Record<string, Threshold[]>;
  summaryTrendStats: string[];
}

export type SUMMARY_TREND_STATS = string[];
export declare const SUMMARY_TREND_STATS: SUMMARY_TREND_STATS;

export type CUSTOM_METRICS = Record<'server_errors' | 'token_fetches' | 'list_rows' | 'flood_refused', { type: CustomMetricType; about: string }>;
export declare const CUSTOM_METRICS: CUSTOM_METRICS;

export type LIST_QUERY = Record<'fields' | 'filters' | 'order_by' | 'limit_page_length', string>;
export declare const LIST_QUERY: LIST_QUERY;

export type HEAVY_LIST_QUERY = LIST_QUERY;
export declare const HEAVY_LIST_QUERY: HEAVY_LIST_QUERY;

export type METHOD_CALLS = MethodCall[];
export declare const METHOD_CALLS: METHOD_CALLS;

export type BASE_RATES = Record<RateScenarioName, number>;
export declare const BASE_RATES: BASE_RATES;

/** null: the scenario's latency is listed in the summary, not judged (the fairness script's flood). */
export type LATENCY_MS = Record<ScenarioName, { p95: number; p99: number } | null>;
export declare const LATENCY_MS: LATENCY_MS;

export type SCRIPTS = Record<ScriptName, ScriptSpec>;
export declare const SCRIPTS: SCRIPTS;

export type DAY_CURVE = number[];
export declare const DAY_CURVE: DAY_CURVE;

export interface FAIRNESS {
  /** The target: the quiet tenant's p99 under the flood at most this many times its p99 alone. */
  targetRatio: number;
  /** The flood's lead before the quiet tenant is measured under it (and its tail after), as a fraction of the phase. */
  leadFraction: number;
}
export declare const FAIRNESS: FAIRNESS;

export type PROFILES = Record<ProfileName, ProfileSpec>;
export declare const PROFILES: PROFILES;

export type buildOptions = (script: ScriptName, env?: Record<string, string | undefined>) => LoadOptions;
export declare const buildOptions: buildOptions;
