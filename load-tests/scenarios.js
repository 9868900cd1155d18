// The load tests' scenario definitions: which k6 scenarios each script runs, at what arrival rate,
// for how long, with how many VUs, and the thresholds that decide pass or fail. A plain ES module
// with no `k6/*` import, so k6 (`k6 run load-tests/read-mix.ts`) and the Node runner
// (`npm run load -- read-mix`) read exactly the same numbers. Types: scenarios.d.ts (every export
// below is declared there and bound to it with a JSDoc @type, so tsc checks that they agree).

/** @typedef {import('./scenarios').ProfileName} ProfileName */
/** @typedef {import('./scenarios').ScriptName} ScriptName */
/** @typedef {import('./scenarios').ScenarioName} ScenarioName */
/** @typedef {import('./scenarios').RateScenarioName} RateScenarioName */
/** @typedef {import('./scenarios').RateScenarioSpec} RateScenarioSpec */
/** @typedef {import('./scenarios').PhaseScenarioSpec} PhaseScenarioSpec */
/** @typedef {import('./scenarios').ProfileSpec} ProfileSpec */
/** @typedef {import('./scenarios').LoadOptions} LoadOptions */
/** @typedef {import('k6/options').Scenario} K6Scenario */
/** @typedef {import('k6/options').Threshold} K6Threshold */

/** The statistics every summary shows for a Trend (k6's `summaryTrendStats`). */
/** @type {import('./scenarios').SUMMARY_TREND_STATS} */
export const SUMMARY_TREND_STATS = ['avg', 'min', 'med', 'p(90)', 'p(95)', 'p(99)', 'max', 'count'];

/** Metrics the scripts declare (lib/metrics.ts builds them from this table; thresholds may name them). */
/** @type {import('./scenarios').CUSTOM_METRICS} */
export const CUSTOM_METRICS = {
  server_errors: { type: 'counter', about: 'responses with a 5xx status (tags: name, status)' },
  token_fetches: { type: 'counter', about: 'client_credentials tokens a VU fetched for its Bearer reads (first use and renewals)' },
  list_rows: { type: 'trend', about: 'rows in each list answer (the seed must give every list a full page)' },
  flood_refused: { type: 'counter', about: "the flooding tenant's requests the platform refused with 429: fairness at work, not failures" },
};

/**
 * The list every list request asks for: five fields, a filter, newest first, a page of 20 (the
 * benchmarks' list, bench/todo-seed.ts).
 */
/** @type {import('./scenarios').LIST_QUERY} */
export const LIST_QUERY = {
  fields: '["name","status","priority","date","description"]',
  filters: '[["status","=","Open"]]',
  order_by: 'modified desc',
  limit_page_length: '20',
};

/**
 * The flooding tenant's list in the fairness script, as in the bench (bench/fairness.ts): every
 * field, a `like` filter no index serves, ordered on an unindexed column, 500 rows. Each one makes
 * Postgres read and sort most of the tenant's ToDos (FLOOD_TODOS of them).
 */
/** @type {import('./scenarios').HEAVY_LIST_QUERY} */
export const HEAVY_LIST_QUERY = {
  fields: '["*"]',
  filters: '[["description","like","%1%"]]',
  order_by: 'description desc',
  limit_page_length: '500',
};

/** Whitelisted methods one `methods` iteration calls, in order (`{todo}` is a seeded ToDo's name). */
/** @type {import('./scenarios').METHOD_CALLS} */
export const METHOD_CALLS = [
  { name: 'get_count', method: 'frappe.client.get_count', args: { doctype: 'ToDo', filters: '[["status","=","Open"]]' } },
  {
    name: 'get_list',
    method: 'frappe.client.get_list',
    args: { doctype: 'ToDo', fields: '["name","status","priority"]', filters: '[["priority","=","High"]]', limit_page_length: '20' },
  },
  { name: 'get_value', method: 'frappe.client.get_value', args: { doctype: 'ToDo', fieldname: '["status","priority"]', filters: '{"name":"{todo}"}' } },
  { name: 'get_logged_user', method: 'frappe.auth.get_logged_user', args: {} },
];

/**
 * Iterations per second of each k6 scenario at the `ci` profile (scaled by a profile's `scale` and
 * RATE_SCALE). One iteration: reads = GET one ToDo + list 20; writes = POST + PUT (+ DELETE);
 * methods = the four METHOD_CALLS; tokens = one client_credentials token; bearer_reads = GET one +
 * list 20 with a Bearer token (fetched once per VU and tenant, renewed before it expires).
 */
/** @type {import('./scenarios').BASE_RATES} */
export const BASE_RATES = { reads: 100, writes: 20, methods: 25, tokens: 5, bearer_reads: 50 };

/**
 * Latency limits in milliseconds per scenario: p95 and p99 of `http_req_duration{scenario:…}`.
 * Reads and writes are the design card's numbers (measured 2-vCPU anchors: PostgREST GET p95 ~28 ms
 * at 2,000 req/s); THRESHOLD_SCALE multiplies them for a slower target.
 */
/** @type {import('./scenarios').LATENCY_MS} */
export const LATENCY_MS = {
  reads: { p95: 50, p99: 150 },
  writes: { p95: 100, p99: 250 },
  methods: { p95: 50, p99: 150 },
  tokens: { p95: 150, p99: 300 },
  bearer_reads: { p95: 50, p99: 150 },
  // The quiet tenant of the fairness script keeps the reads' numbers, alone and under the flood:
  // an absolute limit (k6 thresholds cannot compare two metrics; the summary prints the ratio).
  quiet_alone: { p95: 50, p99: 150 },
  quiet_under_flood: { p95: 50, p99: 150 },
  // A flood is slow by design: its latency is listed, not judged.
  flood: null,
};

/** Which k6 scenarios each script runs, and the exported function each one calls. */
/** @type {import('./scenarios').SCRIPTS} */
export const SCRIPTS = {
  'read-mix': {
    about: 'GET one ToDo + a list of 20, round-robin over every tenant',
    scenarios: { reads: { exec: 'reads', share: 1 } },
  },
  writes: {
    about: 'POST a ToDo, PUT an update, DELETE it (WRITE_CLEANUP=0 keeps the rows)',
    scenarios: { writes: { exec: 'writes', share: 1 } },
  },
  methods: {
    about: 'whitelisted methods: get_count, get_list, get_value, get_logged_user',
    scenarios: { methods: { exec: 'methods', share: 1 } },
  },
  oauth: {
    about: 'client_credentials tokens from the auth service, and Bearer reads with them',
    scenarios: { tokens: { exec: 'tokens', share: 1 }, bearer_reads: { exec: 'bearerReads', share: 1 } },
  },
  day: {
    about: 'a day of traffic: mostly reads, some writes, methods and token requests, on a daily curve',
    scenarios: {
      reads: { exec: 'reads', share: 0.6 },
      bearer_reads: { exec: 'bearerReads', share: 0.4 },
      writes: { exec: 'writes', share: 0.5 },
      methods: { exec: 'methods', share: 0.4 },
      tokens: { exec: 'tokens', share: 0.4 },
    },
  },
  fairness: {
    about: 'tenant fairness: the second tenant reads lists of 20 alone, then while the first floods with heavy lists',
    // As the bench: 4 connections for the quiet tenant, 48 for the flood (FLOOD_VUS).
    scenarios: {
      quiet_alone: { exec: 'quietList', vus: 4, window: 'alone' },
      flood: { exec: 'floodList', vus: 48, window: 'flood' },
      quiet_under_flood: { exec: 'quietList', vus: 4, window: 'under_flood' },
    },
  },
};

/**
 * The fairness script's target and timeline. The target is the quiet tenant's p99 under
 * the flood at most 3x its p99 alone; the flood starts a fifth of a phase before the quiet tenant
 * is measured under it (its queues have built up by then) and ends a fifth after.
 */
/** @type {import('./scenarios').FAIRNESS} */
export const FAIRNESS = { targetRatio: 3, leadFraction: 0.2 };

/**
 * Relative load over a day, in two-hour slots from midnight: quiet night, morning ramp, a midday
 * peak, an afternoon plateau, the evening fall. The `day` script's arrival rates follow it.
 */
/** @type {import('./scenarios').DAY_CURVE} */
export const DAY_CURVE = [0.15, 0.1, 0.1, 0.3, 0.75, 1, 0.9, 0.95, 0.8, 0.5, 0.3, 0.2];

/** The profiles: how hard and how long. */
/** @type {import('./scenarios').PROFILES} */
export const PROFILES = {
  smoke: {
    about: 'a few requests per second for 10 s: does every request work (CI, a new deployment); no request may fail, latency limits x3',
    scale: 0.2,
    // A few hundred samples on a shared machine: its tail is noise, so smoke judges correctness
    // strictly and latency loosely; ci and soak hold the design numbers.
    latencyScale: 3,
    duration: '10s',
    day: '12s',
    phase: '10s',
    failedRate: 0.001,
    checksRate: 0.99,
    delayAbortEval: '3s',
  },
  ci: {
    latencyScale: 1,
    about: 'the ci rates for 60 s, every threshold enforced',
    scale: 1,
    duration: '60s',
    day: '120s',
    phase: '30s',
    failedRate: 0.001,
    checksRate: 0.99,
    delayAbortEval: '15s',
  },
  capacity: {
    latencyScale: 1,
    about: 'stepped arrival rate (x0.5 to x16 of ci, 60 s per step) to find the knee; latency is reported, the run stops when errors pass 5%',
    scale: 1,
    steps: [0.5, 1, 2, 4, 8, 12, 16],
    step: '60s',
    day: '12m',
    phase: '60s',
    failedRate: 0.05,
    checksRate: 0.95,
    delayAbortEval: '30s',
  },
  soak: {
    latencyScale: 1,
    about: 'the ci rates for 30 minutes (leaks, pool exhaustion, slow drift)',
    scale: 1,
    duration: '30m',
    day: '60m',
    phase: '10m',
    failedRate: 0.001,
    checksRate: 0.999,
    delayAbortEval: '60s',
  },
};

/** @param {string} value */
function positiveNumber(value) {
  const n = Number(value);
  return Number.isFinite(n) && n > 0 ? n : undefined;
}

/**
 * Pre-allocated and maximum VUs for an arrival rate (iterations per second): enough for every
 * iteration taking 100 ms at once (k6 drops an iteration that finds no free VU while it makes
 * another), and up to 500 ms before the rate cannot be kept.
 * @param {number} rate
 * @param {number | undefined} maxVUs
 */
function vusFor(rate, maxVUs) {
  const max = maxVUs ?? Math.max(20, Math.ceil(rate * 0.5));
  return { preAllocatedVUs: Math.min(max, Math.max(5, Math.ceil(rate * 0.1))), maxVUs: max };
}

/**
 * k6 takes whole iterations per `timeUnit`: a peak of 20/s or more is counted per second, a lower
 * one per minute (so 0.4/s is 24 per minute, not 0 or 1 per second).
 * @param {number} peakPerSecond
 */
function unitFor(peakPerSecond) {
  return peakPerSecond >= 20 ? { timeUnit: '1s', seconds: 1 } : { timeUnit: '1m', seconds: 60 };
}

const UNIT_MS = { ms: 1, s: 1000, m: 60000, h: 3600000 };

/**
 * A duration such as `12s` or `60m` in milliseconds.
 * @param {string} duration
 */
function msOf(duration) {
  const m = /^(\d+)(ms|s|m|h)$/.exec(duration);
  if (!m) throw new Error(`duration ${duration}: expected a number and one unit (ms, s, m, h)`);
  return Number(m[1]) * UNIT_MS[/** @type {'ms'|'s'|'m'|'h'} */ (m[2])];
}

/**
 * Milliseconds as a k6 duration: whole seconds when they are, else whole milliseconds.
 * @param {number} ms
 */
function durationOf(ms) {
  const whole = Math.floor(ms);
  return whole % 1000 === 0 ? `${whole / 1000}s` : `${whole}ms`;
}

/**
 * Splits a duration such as `12s` or `60m` into `parts` equal ones, in whole milliseconds.
 * @param {string} duration
 * @param {number} parts
 */
function splitDuration(duration, parts) {
  return durationOf(msOf(duration) / parts);
}

/**
 * What every scenario of one buildOptions call is built from.
 * @typedef {object} Build
 * @property {ScriptName} script
 * @property {ProfileSpec} profile
 * @property {boolean} capacity
 * @property {number} rateScale
 * @property {number} latencyScale
 * @property {number | undefined} maxVUs
 * @property {Record<string, string | undefined>} env
 */

/**
 * An arrival-rate scenario: the day's curve (`day`), the capacity profile's steps, or a constant rate.
 * @param {RateScenarioName} name
 * @param {RateScenarioSpec} s
 * @param {Build} b
 * @returns {K6Scenario}
 */
function rateScenario(name, s, b) {
  const rate = BASE_RATES[name] * s.share * b.profile.scale * b.rateScale;
  const tags = { script: b.script };
  if (b.script === 'day') {
    const length = b.env.DURATION || b.profile.day;
    const peak = rate * (b.capacity ? 4 : 1);
    const unit = unitFor(peak);
    const perUnit = (/** @type {number} */ level) => Math.round(peak * level * unit.seconds);
    return {
      executor: 'ramping-arrival-rate',
      exec: s.exec,
      startRate: perUnit(DAY_CURVE[0] ?? 0),
      timeUnit: unit.timeUnit,
      // From each slot's level to the next one's, back to midnight at the end.
      stages: [...DAY_CURVE.slice(1), DAY_CURVE[0] ?? 0].map((level) => ({ target: perUnit(level), duration: splitDuration(length, DAY_CURVE.length) })),
      ...vusFor(peak, b.maxVUs),
      gracefulStop: '10s',
      tags,
    };
  }
  const steps = b.profile.steps;
  if (steps && b.profile.step) {
    // Supabase's stepped pattern: ramp to each level in a sixth of a step, hold it the rest.
    const step = b.env.DURATION || b.profile.step;
    const top = rate * Math.max(...steps);
    const unit = unitFor(top);
    const perUnit = (/** @type {number} */ level) => Math.max(1, Math.round(rate * level * unit.seconds));
    return {
      executor: 'ramping-arrival-rate',
      exec: s.exec,
      startRate: perUnit((steps[0] ?? 1) / 2),
      timeUnit: unit.timeUnit,
      stages: steps.flatMap((level) => [
        { target: perUnit(level), duration: splitDuration(step, 6) },
        { target: perUnit(level), duration: splitDuration(step, 1.2) },
      ]),
      ...vusFor(top, b.maxVUs),
      gracefulStop: '10s',
      tags,
    };
  }
  const unit = unitFor(rate);
  return {
    executor: 'constant-arrival-rate',
    exec: s.exec,
    rate: Math.max(1, Math.round(rate * unit.seconds)),
    timeUnit: unit.timeUnit,
    duration: b.env.DURATION || b.profile.duration || '10s',
    ...vusFor(rate, b.maxVUs),
    gracefulStop: '10s',
    tags,
  };
}

/**
 * A fairness scenario: `vus` VUs looping through its window of the timeline (PhaseWindow in
 * scenarios.d.ts), whose phases last the profile's `phase` (or DURATION). A closed model, as the
 * bench's connections: the flood sends as fast as it is answered, which is what a flood is.
 * @param {PhaseScenarioSpec} s
 * @param {Build} b
 * @returns {K6Scenario}
 */
function phaseScenario(s, b) {
  const phase = msOf(b.env.DURATION || b.profile.phase);
  const lead = phase * FAIRNESS.leadFraction;
  /** @type {Record<import('./scenarios').PhaseWindow, [number, number]>} start and length */
  const windows = { alone: [0, phase], flood: [phase, phase + 2 * lead], under_flood: [phase + lead, phase] };
  const [start, length] = windows[s.window];
  const floodVUs = s.window === 'flood' ? positiveNumber(b.env.FLOOD_VUS ?? '') : undefined;
  return {
    executor: 'constant-vus',
    exec: s.exec,
    vus: floodVUs ? Math.max(1, Math.round(floodVUs)) : s.vus,
    startTime: durationOf(start),
    duration: durationOf(length),
    gracefulStop: '10s',
    tags: { script: b.script },
  };
}

/**
 * One scenario's thresholds: its latency limits, its failures, and that it sent anything at all.
 * Capacity lists the numbers without judging them (always-true expressions make k6 show the
 * per-scenario lines), as the flood's latency always is. The fairness script's quiet tenant may
 * not see a single failure.
 * @param {ScenarioName} name
 * @param {RateScenarioSpec | PhaseScenarioSpec} s
 * @param {Build} b
 * @returns {Record<string, K6Threshold[]>}
 */
function scenarioThresholds(name, s, b) {
  const duration = `http_req_duration{scenario:${name}}`;
  const failed = `http_req_failed{scenario:${name}}`;
  if (b.capacity) return { [duration]: ['max>=0'], [failed]: ['rate>=0'] };
  const limits = LATENCY_MS[name];
  const quiet = 'window' in s && s.window !== 'flood';
  return {
    [duration]: limits ? [`p(95)<${limits.p95 * b.latencyScale}`, `p(99)<${limits.p99 * b.latencyScale}`] : ['max>=0'],
    [failed]: [quiet ? 'rate==0' : `rate<${Math.max(b.profile.failedRate, 0.01)}`],
    // No requests at all must fail too (k6 passes a Trend or Rate threshold that saw no samples).
    [`http_reqs{scenario:${name}}`]: ['count>0'],
  };
}

/**
 * The k6 options of `script` under the environment's PROFILE (default `smoke`). Environment knobs:
 * RATE_SCALE (multiplies every arrival rate), DURATION (replaces a constant profile's duration,
 * the length of a capacity step, the length of the `day` script's day, or of each of the
 * `fairness` script's phases), MAX_VUS (per arrival-rate scenario), FLOOD_VUS (the fairness
 * script's flood), THRESHOLD_SCALE (multiplies every latency limit).
 * @type {import('./scenarios').buildOptions}
 */
export function buildOptions(script, env = {}) {
  const spec = SCRIPTS[script];
  if (!spec) throw new Error(`unknown script ${script}: one of ${Object.keys(SCRIPTS).join(', ')}`);
  const profileName = /** @type {ProfileName} */ (env.PROFILE || 'smoke');
  const profile = PROFILES[profileName];
  if (!profile) throw new Error(`unknown PROFILE ${profileName}: one of ${Object.keys(PROFILES).join(', ')}`);
  /** @type {Build} */
  const b = {
    script,
    profile,
    capacity: profileName === 'capacity',
    rateScale: positiveNumber(env.RATE_SCALE ?? '') ?? 1,
    latencyScale: (positiveNumber(env.THRESHOLD_SCALE ?? '') ?? 1) * profile.latencyScale,
    maxVUs: positiveNumber(env.MAX_VUS ?? ''),
    env,
  };

  /** @type {Record<string, K6Threshold[]>} */
  const thresholds = {
    // Past 5% failed requests the run stops (after delayAbortEval): a broken target is not measured.
    http_req_failed: [
      ...(profile.failedRate < 0.05 ? [`rate<${profile.failedRate}`] : []),
      { threshold: 'rate<0.05', abortOnFail: true, delayAbortEval: profile.delayAbortEval },
    ],
    checks: [`rate>${profile.checksRate}`],
  };
  const specs = Object.entries(spec.scenarios);
  if (!b.capacity) {
    // An open model: every due iteration must start, or the target did not sustain the rate
    // (looping VUs never drop one).
    if (specs.some(([, s]) => 'share' in s)) thresholds.dropped_iterations = ['count==0'];
    thresholds.server_errors = ['count==0'];
  }

  /** @type {Record<string, K6Scenario>} */
  const scenarios = {};
  for (const [name, s] of specs) {
    const scenarioName = /** @type {ScenarioName} */ (name);
    scenarios[name] = 'share' in s ? rateScenario(/** @type {RateScenarioName} */ (name), s, b) : phaseScenario(s, b);
    Object.assign(thresholds, scenarioThresholds(scenarioName, s, b));
  }
  if (spec.scenarios.reads && !b.capacity) thresholds['list_rows{scenario:reads}'] = ['min>=1'];
  // Listed whatever the count (an always-true expression): the refusals are half of the flood's story.
  if (spec.scenarios.flood) thresholds.flood_refused = ['count>=0'];

  return {
    scenarios,
    thresholds,
    summaryTrendStats: [...SUMMARY_TREND_STATS],
    setupTimeout: '5m',
    teardownTimeout: '2m',
    userAgent: 'quire-load-tests',
  };
}
