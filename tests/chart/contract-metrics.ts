/**
 * The Prometheus metric names Quire exports, as agreed in the operations contract of issue 13
 * (/tmp/ops-contract.md, "Metric names"; docs: shared/reference/operations-anchors.md §4.2).
 * The chart's PrometheusRule, its KEDA query and deploy/grafana-dashboard.json may use only these.
 * A later test compares this list with real /metrics scrapes of api, auth, webhooks, the worker and the operator:
 * change the contract first, then this list, then the dashboards and alerts.
 */
export const CONTRACT_METRICS = {
  // every process
  http_request_duration_seconds: 'histogram',
  http_requests_in_flight: 'gauge',
  quire_db_pool_connections: 'gauge', // {cluster,state} since issue 28 (cluster="default": the platform database)
  quire_db_clusters_open: 'gauge', // issue 28
  quire_db_cluster_up: 'gauge', // {cluster}, issue 28
  quire_cache_requests_total: 'counter',
  quire_tenants: 'gauge',
  quire_tenant_requests_total: 'counter', // only with METRICS_TENANT_LABEL=true
  quire_tenant_request_seconds_total: 'counter', // api, only with METRICS_TENANT_LABEL=true (issue 27)
  quire_tenant_database_seconds_total: 'counter', // api, only with METRICS_TENANT_LABEL=true (issue 27)
  quire_ready: 'gauge',
  quire_tenant_spares_ready: 'gauge',
  quire_tenant_spare_claims_total: 'counter',
  // api: fair admission and site rate limits (issue 27)
  quire_tenant_throttled_total: 'counter',
  quire_requests_waiting: 'gauge',
  // webhooks
  quire_webhook_deliveries_total: 'counter',
  quire_webhook_delivery_duration_seconds: 'histogram',
  quire_webhook_lag_seconds: 'histogram',
  quire_webhook_outbox_pending: 'gauge',
  quire_webhook_oldest_pending_age_seconds: 'gauge',
  quire_webhook_queue_depth: 'gauge',
  // worker (`quire serve worker`, background jobs; the backlog gauges are global: aggregate with max)
  quire_jobs_total: 'counter', // {queue,status}: finished, failed, retried
  quire_job_duration_seconds: 'histogram', // {queue}
  quire_jobs_queue_depth: 'gauge', // {queue}: jobs waiting to start; KEDA scales the workers on it
  quire_jobs_oldest_age_seconds: 'gauge', // {queue}
  // auth
  quire_oauth_tokens_issued_total: 'counter',
  quire_oauth_refusals_total: 'counter',
  quire_oauth_active_grants: 'gauge',
  // operator (`quire serve operator`, operator.enabled; deploy/README.md, "Tenants as Kubernetes resources")
  quire_operator_reconcile_total: 'counter',
  quire_operator_reconcile_duration_seconds: 'histogram',
  quire_operator_workqueue_depth: 'gauge',
  quire_operator_leader: 'gauge',
} as const satisfies Record<string, 'counter' | 'gauge' | 'histogram'>;

/**
 * The contract's "prom-client defaults, unprefixed: process_*, nodejs_*": the names prom-client 15
 * registers through collectDefaultMetrics() (node_modules/prom-client/lib/metrics/*.js).
 */
export const PROM_CLIENT_DEFAULT_METRICS = {
  process_cpu_user_seconds_total: 'counter',
  process_cpu_system_seconds_total: 'counter',
  process_cpu_seconds_total: 'counter',
  process_start_time_seconds: 'gauge',
  process_resident_memory_bytes: 'gauge',
  process_virtual_memory_bytes: 'gauge',
  process_heap_bytes: 'gauge',
  process_open_fds: 'gauge',
  process_max_fds: 'gauge',
  nodejs_eventloop_lag_seconds: 'gauge',
  nodejs_eventloop_lag_min_seconds: 'gauge',
  nodejs_eventloop_lag_max_seconds: 'gauge',
  nodejs_eventloop_lag_mean_seconds: 'gauge',
  nodejs_eventloop_lag_stddev_seconds: 'gauge',
  nodejs_eventloop_lag_p50_seconds: 'gauge',
  nodejs_eventloop_lag_p90_seconds: 'gauge',
  nodejs_eventloop_lag_p99_seconds: 'gauge',
  nodejs_active_resources: 'gauge',
  nodejs_active_resources_total: 'gauge',
  nodejs_active_handles: 'gauge',
  nodejs_active_handles_total: 'gauge',
  nodejs_active_requests: 'gauge',
  nodejs_active_requests_total: 'gauge',
  nodejs_heap_size_total_bytes: 'gauge',
  nodejs_heap_size_used_bytes: 'gauge',
  nodejs_external_memory_bytes: 'gauge',
  nodejs_heap_space_size_total_bytes: 'gauge',
  nodejs_heap_space_size_used_bytes: 'gauge',
  nodejs_heap_space_size_available_bytes: 'gauge',
  nodejs_version_info: 'gauge',
  nodejs_gc_duration_seconds: 'histogram',
} as const satisfies Record<string, 'counter' | 'gauge' | 'histogram'>;

/**
 * Not Quire's: kube-state-metrics series the PrometheusRule's QuireMigrationJobFailed and
 * QuirePodsNotReady alerts read (documented as needing kube-state-metrics). Allowed in the
 * PrometheusRule only, never in the KEDA query or the dashboard.
 */
export const KUBE_STATE_METRICS = ['kube_job_status_failed', 'kube_deployment_status_replicas_available', 'kube_deployment_spec_replicas'] as const;

const HISTOGRAM_SUFFIXES = ['_bucket', '_count', '_sum'] as const;

/** Whether a series name is exported by Quire: a contract or prom-client default name, or a histogram's series. */
export function isQuireSeries(name: string): boolean {
  const known: Record<string, string> = { ...CONTRACT_METRICS, ...PROM_CLIENT_DEFAULT_METRICS };
  if (known[name] !== undefined) return known[name] !== 'histogram';
  const suffix = HISTOGRAM_SUFFIXES.find((s) => name.endsWith(s));
  return suffix !== undefined && known[name.slice(0, -suffix.length)] === 'histogram';
}

const PROMQL_WORDS = new Set(['by', 'without', 'on', 'ignoring', 'group_left', 'group_right', 'and', 'or', 'unless', 'bool', 'offset', 'inf', 'nan']);

/**
 * The metric names a PromQL expression selects. A small lexer rather than a parser: strings, label
 * matchers, range/subquery brackets and grouping label lists are dropped; what is left that is not
 * a function call, a keyword or a number is a metric name.
 */
export function metricNamesIn(expr: string): string[] {
  const stripped = expr
    .replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`/g, ' ')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/gi, ' ');
  const names = new Set<string>();
  for (const m of stripped.matchAll(/(?<![\w$.])[A-Za-z_:][\w:]*/g)) {
    const word = m[0];
    const after = stripped.slice(m.index + word.length).trimStart();
    if (after.startsWith('(') || PROMQL_WORDS.has(word.toLowerCase())) continue;
    names.add(word);
  }
  return [...names];
}
