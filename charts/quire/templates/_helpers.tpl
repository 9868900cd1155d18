{{/* ---------------------------------------------------------------- names */}}

{{- define "quire.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "quire.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* "<fullname>-<component>"; call with (dict "root" $ "component" "api") */}}
{{- define "quire.componentName" -}}
{{- printf "%s-%s" (include "quire.fullname" .root) .component | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "quire.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* ---------------------------------------------------------------- labels */}}

{{- define "quire.labels" -}}
helm.sh/chart: {{ include "quire.chart" . }}
app.kubernetes.io/name: {{ include "quire.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: quire
{{- with .Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{/* call with (dict "root" $ "component" "api") */}}
{{- define "quire.componentLabels" -}}
{{ include "quire.labels" .root }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{/* call with (dict "root" $ "component" "api") */}}
{{- define "quire.selectorLabels" -}}
app.kubernetes.io/name: {{ include "quire.name" .root }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{/* ---------------------------------------------------------------- image, service account */}}

{{- define "quire.image" -}}
{{- $tag := default .Chart.AppVersion .Values.image.tag -}}
{{- if .Values.image.digest -}}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest -}}
{{- else -}}
{{- printf "%s:%s" .Values.image.repository $tag -}}
{{- end -}}
{{- end -}}

{{/* "imagePullSecrets: ..." or nothing; use as {{- with include "quire.imagePullSecrets" . }}{{ . | nindent N }}{{- end }} */}}
{{- define "quire.imagePullSecrets" -}}
{{- with .Values.image.pullSecrets -}}
imagePullSecrets:
{{- range . }}
  - name: {{ . | quote }}
{{- end }}
{{- end -}}
{{- end -}}

{{/* The Quire processes run as Deployments, space-separated: use with splitList " ". */}}
{{- define "quire.components" -}}
api auth webhooks{{ if .Values.worker.enabled }} worker{{ end }}{{ if .Values.operator.enabled }} operator{{ end }}
{{- end -}}

{{/*
"true" when the worker's KEDA ScaledObject is rendered: worker.autoscaling.enabled, and KEDA wanted
(keda.enabled, the same switch as the webhooks' ScaledObject). Without KEDA the worker keeps
worker.replicas: no CPU HPA, CPU says little about a backlog of jobs.
*/}}
{{- define "quire.workerScaledObject" -}}
{{- if and .Values.worker.enabled .Values.worker.autoscaling.enabled .Values.keda.enabled -}}
true
{{- end -}}
{{- end -}}

{{/* The operator's own ServiceAccount (bound to its Role); the other pods never call the Kubernetes API. */}}
{{- define "quire.operatorServiceAccountName" -}}
{{- include "quire.componentName" (dict "root" . "component" "operator") -}}
{{- end -}}

{{- define "quire.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "quire.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/* ---------------------------------------------------------------- domains */}}

{{/* BASE_DOMAIN: config.baseDomain, else ingress.baseDomain, else "localhost" (the process default). */}}
{{- define "quire.baseDomain" -}}
{{- default (default "localhost" .Values.ingress.baseDomain) .Values.config.baseDomain -}}
{{- end -}}

{{/* The Secret holding the wildcard certificate ("" = no TLS for the wildcard host). */}}
{{- define "quire.tlsSecretName" -}}
{{- if .Values.ingress.tls.secretName -}}
{{- .Values.ingress.tls.secretName -}}
{{- else if .Values.certManager.wildcard.enabled -}}
{{- printf "%s-wildcard-tls" (include "quire.fullname" .) | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{/* The tenant NOTES suggests creating first: the default tenant if set, else "acme". */}}
{{- define "quire.exampleTenant" -}}
{{- default "acme" .Values.config.defaultTenant -}}
{{- end -}}

{{/* The Host header `helm test` sends: tests.host, else <example tenant>.<BASE_DOMAIN>. */}}
{{- define "quire.testHost" -}}
{{- if .Values.tests.host -}}
{{- .Values.tests.host -}}
{{- else -}}
{{- printf "%s.%s" (include "quire.exampleTenant" .) (include "quire.baseDomain" .) -}}
{{- end -}}
{{- end -}}

{{/* ---------------------------------------------------------------- checks */}}

{{/* Render-time checks; included once, from the ConfigMap (always rendered). */}}
{{- define "quire.validate" -}}
{{- if not .Values.secrets.existingSecret -}}
{{- if not .Values.secrets.databaseUrl -}}
{{- fail "secrets.databaseUrl is required: set it (postgres://...) or name a Secret with secrets.existingSecret that has DATABASE_URL and QUIRE_ENCRYPTION_KEY" -}}
{{- end -}}
{{- if not .Values.secrets.encryptionKey -}}
{{- fail "secrets.encryptionKey is required and is never generated: set it to base64 of 32 random bytes (`openssl rand -base64 32`) and keep a copy, or name a Secret with secrets.existingSecret" -}}
{{- end -}}
{{- end -}}
{{- range $k, $_ := .Values.config.extra -}}
{{- if has $k (list "DATABASE_URL" "DATABASE_DIRECT_URL" "REDIS_URL" "QUIRE_ENCRYPTION_KEY") -}}
{{- fail (printf "config.extra.%s: secret values belong in secrets.* or secrets.existingSecret, never in the ConfigMap" $k) -}}
{{- end -}}
{{- if regexMatch "^QUIRE_CLUSTER_(DIRECT_)?URL_" $k -}}
{{- fail (printf "config.extra.%s: cluster URLs come from clusters[].url and clusters[].directUrl (a Secret), never from the ConfigMap" $k) -}}
{{- end -}}
{{- end -}}
{{- include "quire.validateClusters" . -}}
{{- if and .Values.ingress.enabled (not .Values.ingress.baseDomain) (not .Values.ingress.customDomains) -}}
{{- fail "ingress.enabled needs ingress.baseDomain (tenants are served on *.<baseDomain>) or ingress.customDomains" -}}
{{- end -}}
{{- if .Values.certManager.wildcard.enabled -}}
{{- if not .Values.ingress.baseDomain -}}
{{- fail "certManager.wildcard.enabled needs ingress.baseDomain" -}}
{{- end -}}
{{- if not .Values.certManager.wildcard.issuerRef.name -}}
{{- fail "certManager.wildcard.issuerRef.name is required: a (Cluster)Issuer that solves DNS-01 (HTTP-01 cannot issue wildcard certificates)" -}}
{{- end -}}
{{- end -}}
{{- if .Values.keda.enabled -}}
{{- if not .Values.keda.prometheus.serverAddress -}}
{{- fail "keda.enabled needs keda.prometheus.serverAddress (the Prometheus that scrapes the webhooks metrics)" -}}
{{- end -}}
{{- if lt (int .Values.keda.minReplicaCount) 1 -}}
{{- fail "keda.minReplicaCount must be at least 1: the webhook outbox sweeper must always run" -}}
{{- end -}}
{{- end -}}
{{- if .Values.worker.enabled -}}
{{- if and (not .Values.secrets.existingSecret) (not .Values.secrets.redisUrl) -}}
{{- fail "worker.enabled needs REDIS_URL: set secrets.redisUrl (redis://...) or REDIS_URL in secrets.existingSecret. Without Redis each worker pod would run jobs in-process, which a cluster must not rely on; worker.enabled=false runs no background jobs at all (no email, no scheduled jobs)" -}}
{{- end -}}
{{- if and (include "quire.workerScaledObject" .) (lt (int .Values.worker.autoscaling.minReplicaCount) 1) -}}
{{- fail "worker.autoscaling.minReplicaCount must be at least 1: the scheduler tick and email need a worker running, and the workers themselves report quire_jobs_queue_depth (no worker, no metric to scale up on)" -}}
{{- end -}}
{{- end -}}
{{- range $c := splitList " " (include "quire.components" .) -}}
{{- $_ := include "quire.gracePeriod" (dict "root" $ "component" $c) -}}
{{- end -}}
{{- $plans := default (dict) .Values.plans.definitions -}}
{{- with .Values.plans.default -}}
{{- if not (hasKey $plans .) -}}
{{- fail (printf "plans.default=%q is not one of plans.definitions (%s): define that plan, or name a defined one, or leave plans.default empty" . (ternary "none are defined" (keys $plans | sortAlpha | join ", ") (empty $plans))) -}}
{{- end -}}
{{- end -}}
{{- range $name, $plan := $plans -}}
{{- with (and (kindIs "map" $plan) $plan.rateLimit) -}}
{{- $parts := splitList "/" (toString .) -}}
{{- if or (ne (len $parts) 2) (le (float64 (first $parts)) 0.0) (lt (float64 (last $parts)) 1.0) (gt (float64 (last $parts)) 2678400.0) -}}
{{- fail (printf "plans.definitions.%s.rateLimit=%q: \"<seconds of request time>/<window seconds>\" with more than 0 seconds and a window of 1 s to 31 days (2678400), e.g. \"600/3600\"" $name (toString .)) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- if .Values.operator.enabled -}}
{{- $le := .Values.operator.leaderElection -}}
{{- if ge (int $le.renewDeadlineMs) (mul (int $le.leaseDurationSeconds) 1000 | int) -}}
{{- fail (printf "operator.leaderElection.renewDeadlineMs=%d must be below leaseDurationSeconds (%ds): a leader must give up before another replica may take the Lease" (int $le.renewDeadlineMs) (int $le.leaseDurationSeconds)) -}}
{{- end -}}
{{- if ge (int $le.retryPeriodMs) (int $le.renewDeadlineMs) -}}
{{- fail (printf "operator.leaderElection.retryPeriodMs=%d must be below renewDeadlineMs=%d" (int $le.retryPeriodMs) (int $le.renewDeadlineMs)) -}}
{{- end -}}
{{- with .Values.operator.ingress.tlsSecretName -}}
{{- if not (contains "{tenant}" .) -}}
{{- fail (printf "operator.ingress.tlsSecretName=%q must contain {tenant} (one certificate Secret per tenant), or be empty for no TLS" .) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/*
clusters: names as `quire cluster add` takes them (and distinct, and never `default`, the platform
database), each URL a Secret key, a direct URL with a transaction pooler. values.schema.json says
the same, but `helm template --skip-schema-validation` and chart-check do not read it.
*/}}
{{- define "quire.validateClusters" -}}
{{- $seen := dict -}}
{{- range $i, $c := .Values.clusters -}}
{{- $at := printf "clusters[%d]" $i -}}
{{- if not (kindIs "map" $c) -}}
{{- fail (printf "%s must be a map: {name, weight, poolMode, url: {secretKeyRef: {name, key}}, directUrl}" $at) -}}
{{- end -}}
{{- $name := toString (default "" $c.name) -}}
{{- if not (regexMatch "^[a-z]([-a-z0-9]{0,38}[a-z0-9])?$" $name) -}}
{{- fail (printf "%s.name=%q: a cluster name is lower-case letters, digits and hyphens, starting with a letter, at most 40" $at $name) -}}
{{- end -}}
{{- if eq $name "default" -}}
{{- fail (printf "%s.name=default: `default` is the platform database (DATABASE_URL), which is always a cluster; give the other clusters other names" $at) -}}
{{- end -}}
{{- if hasKey $seen $name -}}
{{- fail (printf "%s.name=%q: clusters[%d] has that name too; each cluster is listed once" $at $name (get $seen $name)) -}}
{{- end -}}
{{- $_ := set $seen $name $i -}}
{{- range $field := list "url" "directUrl" -}}
{{- $ref := dig $field "secretKeyRef" nil $c -}}
{{- if or (eq $field "url") (hasKey $c $field) -}}
{{- if not (and (kindIs "map" $ref) $ref.name $ref.key) -}}
{{- fail (printf "%s.%s needs secretKeyRef with name and key: the Secret (in the release's namespace) and its key holding the cluster's postgres:// URL" $at $field) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- $mode := default "session" $c.poolMode -}}
{{- if not (has $mode (list "session" "transaction")) -}}
{{- fail (printf "%s.poolMode=%q: session or transaction" $at $mode) -}}
{{- end -}}
{{- if and (eq $mode "transaction") (not $c.directUrl) -}}
{{- fail (printf "%s (%s): poolMode transaction needs directUrl, a direct connection for LISTEN and advisory locks, which a transaction pooler cannot carry" $at $name) -}}
{{- end -}}
{{- if not (kindIs "invalid" $c.weight) -}}
{{- $weight := $c.weight -}}
{{- if or (not (or (kindIs "float64" $weight) (kindIs "int" $weight) (kindIs "int64" $weight))) (lt (float64 $weight) 1.0) (gt (float64 $weight) 1000.0) (ne (float64 $weight) (float64 (int $weight))) -}}
{{- fail (printf "%s.weight=%s: a whole number from 1 to 1000" $at (toJson $weight)) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* The suffix of a cluster's variables: its name upper-cased, - as _ (tenants-b -> TENANTS_B). */}}
{{- define "quire.clusterVar" -}}
{{- . | upper | replace "-" "_" -}}
{{- end -}}

{{/*
Each cluster's URL from its Secret, as env entries: QUIRE_CLUSTER_URL_<NAME>, and
QUIRE_CLUSTER_DIRECT_URL_<NAME> when it has a directUrl. Every Quire process gets them: any of
them may open a tenant on any cluster (`quire cluster add --url env:...` names the variable).
*/}}
{{- define "quire.clusterEnv" -}}
{{- include "quire.validateClusters" . -}}
{{- range $c := .Values.clusters }}
{{- $var := include "quire.clusterVar" $c.name }}
- name: QUIRE_CLUSTER_URL_{{ $var }}
  valueFrom:
    secretKeyRef:
      name: {{ $c.url.secretKeyRef.name | quote }}
      key: {{ $c.url.secretKeyRef.key | quote }}
{{- with $c.directUrl }}
- name: QUIRE_CLUSTER_DIRECT_URL_{{ $var }}
  valueFrom:
    secretKeyRef:
      name: {{ .secretKeyRef.name | quote }}
      key: {{ .secretKeyRef.key | quote }}
{{- end }}
{{- end }}
{{- end -}}

{{/* The `quire cluster add` arguments that register (or update) one item of clusters. */}}
{{- define "quire.clusterAddArgs" -}}
{{- $var := include "quire.clusterVar" .name -}}
{{- $weight := ternary 1 .weight (kindIs "invalid" .weight) -}}
{{- $args := list "cluster" "add" .name "--url" (printf "env:QUIRE_CLUSTER_URL_%s" $var) "--weight" (toString (int $weight)) "--pool-mode" (default "session" .poolMode) -}}
{{- if .directUrl -}}
{{- $args = concat $args (list "--direct-url" (printf "env:QUIRE_CLUSTER_DIRECT_URL_%s" $var)) -}}
{{- end -}}
{{- toYaml $args -}}
{{- end -}}

{{/* ---------------------------------------------------------------- shutdown */}}

{{/* "true" when the native preStop sleep is rendered (Kubernetes >= 1.30 and a non-zero sleep). */}}
{{- define "quire.preStopSleep" -}}
{{- if and (semverCompare ">=1.30-0" .Capabilities.KubeVersion.Version) (gt (int .Values.shutdown.preStopSleepSeconds) 0) -}}
true
{{- end -}}
{{- end -}}

{{/*
The component's SHUTDOWN_TIMEOUT_MS: worker.shutdownTimeoutMs for the worker (running jobs get that
long to finish), shutdown.timeoutMs for the others. Call with (dict "root" $ "component" "api").
*/}}
{{- define "quire.shutdownTimeoutMs" -}}
{{- if eq .component "worker" -}}
{{- int .root.Values.worker.shutdownTimeoutMs -}}
{{- else -}}
{{- int .root.Values.shutdown.timeoutMs -}}
{{- end -}}
{{- end -}}

{{/*
The least terminationGracePeriodSeconds: preStop sleep + ceil((delay+timeout)/1000) + 5, with the
component's own timeout (quire.shutdownTimeoutMs). Call with (dict "root" $ "component" "api").
*/}}
{{- define "quire.minGracePeriod" -}}
{{- $root := .root -}}
{{- $ms := add (int $root.Values.shutdown.delayMs) (include "quire.shutdownTimeoutMs" . | int) -}}
{{- $s := add (div (add $ms 999) 1000) 5 -}}
{{- if include "quire.preStopSleep" $root -}}
{{- $s = add $s (int $root.Values.shutdown.preStopSleepSeconds) -}}
{{- end -}}
{{- $s -}}
{{- end -}}

{{/* The component's grace period: its own setting (never below the least), else the least. */}}
{{- define "quire.gracePeriod" -}}
{{- $min := include "quire.minGracePeriod" . | int -}}
{{- $set := index .root.Values .component "terminationGracePeriodSeconds" -}}
{{- $timeout := ternary "worker.shutdownTimeoutMs" "shutdown.timeoutMs" (eq .component "worker") -}}
{{- if kindIs "invalid" $set -}}
{{- $min -}}
{{- else if lt (int $set) $min -}}
{{- fail (printf "%s.terminationGracePeriodSeconds=%d is too low: the process needs %ds (preStop sleep + shutdown.delayMs + %s + 5 s); raise it or lower %s" .component (int $set) $min $timeout (ternary "worker.shutdownTimeoutMs" "shutdown.*" (eq .component "worker"))) -}}
{{- else -}}
{{- int $set -}}
{{- end -}}
{{- end -}}

{{/* ---------------------------------------------------------------- config and secrets */}}

{{/* The non-secret environment, as YAML "NAME: value" (ConfigMap data, inline Job env). */}}
{{- define "quire.configData" -}}
{{- $c := .Values.config -}}
NODE_ENV: {{ $c.nodeEnv | quote }}
LOG_LEVEL: {{ $c.logLevel | quote }}
BASE_DOMAIN: {{ include "quire.baseDomain" . | quote }}
{{- with $c.defaultTenant }}
DEFAULT_TENANT: {{ . | quote }}
{{- end }}
TRUST_PROXY: {{ $c.trustProxy | toString | quote }}
QUIRE_APPS: {{ $c.apps | quote }}
DATABASE_POOL_MODE: {{ $c.databasePoolMode | quote }}
DB_POOL_SIZE: {{ int $c.dbPoolSize | toString | quote }}
DB_POOL_IDLE_SECONDS: {{ int $c.dbPoolIdleSeconds | toString | quote }}
{{- if not (kindIs "invalid" $c.clusterPoolSize) }}
CLUSTER_POOL_SIZE: {{ int $c.clusterPoolSize | toString | quote }}
{{- end }}
CLUSTER_IDLE_SECONDS: {{ int $c.clusterIdleSeconds | toString | quote }}
DB_STATEMENT_TIMEOUT_MS: {{ int $c.dbStatementTimeoutMs | toString | quote }}
DB_PREPARED_PER_CONNECTION: {{ int $c.dbPreparedPerConnection | toString | quote }}
TENANT_SPARES: {{ int $c.tenantSpares | toString | quote }}
{{- if not (kindIs "invalid" $c.tenantMaxConnections) }}
TENANT_MAX_CONNECTIONS: {{ int $c.tenantMaxConnections | toString | quote }}
{{- end }}
TENANT_QUEUE_LENGTH: {{ int $c.tenantQueueLength | toString | quote }}
TENANT_QUEUE_WAIT_MS: {{ int $c.tenantQueueWaitMs | toString | quote }}
USAGE_FLUSH_MS: {{ int $c.usageFlushMs | toString | quote }}
USAGE_MEASURE_MS: {{ int $c.usageMeasureMs | toString | quote }}
PORT: {{ int .Values.api.port | toString | quote }}
AUTH_PORT: {{ int .Values.auth.port | toString | quote }}
METRICS_PORT: {{ int .Values.metrics.port | toString | quote }}
METRICS_TENANT_LABEL: {{ $c.metricsTenantLabel | toString | quote }}
SHUTDOWN_DELAY_MS: {{ int .Values.shutdown.delayMs | toString | quote }}
SHUTDOWN_TIMEOUT_MS: {{ int .Values.shutdown.timeoutMs | toString | quote }}
QUIRE_FILES_DIR: {{ .Values.files.mountPath | quote }}
OAUTH_ACCESS_TOKEN_TTL_SECONDS: {{ int $c.oauthAccessTokenTtlSeconds | toString | quote }}
{{- if not (kindIs "invalid" $c.webhookConcurrency) }}
WEBHOOK_CONCURRENCY: {{ int $c.webhookConcurrency | toString | quote }}
{{- end }}
{{- if not (kindIs "invalid" $c.webhookTenantMaxInFlight) }}
WEBHOOK_TENANT_MAX_IN_FLIGHT: {{ int $c.webhookTenantMaxInFlight | toString | quote }}
{{- end }}
{{- with $c.webhookAllowNets }}
WEBHOOK_ALLOW_NETS: {{ . | quote }}
{{- end }}
{{- with .Values.plans.definitions }}
QUIRE_PLANS: {{ include "quire.plansJson" $ | quote }}
{{- end }}
{{- range $k, $v := $c.extra }}
{{ $k }}: {{ $v | toString | quote }}
{{- end }}
{{- end -}}

{{/* QUIRE_PLANS: compact JSON {"default": <plans.default, when set>, "plans": <plans.definitions>}. */}}
{{- define "quire.plansJson" -}}
{{- $p := .Values.plans -}}
{{- $catalog := dict "plans" (default (dict) $p.definitions) -}}
{{- with $p.default -}}
{{- $_ := set $catalog "default" . -}}
{{- end -}}
{{- toJson $catalog -}}
{{- end -}}

{{/*
The migration Job's name. Hook mode: "<fullname>-migrate". Plain mode: "<fullname>-migrate-<hash>",
the hash over appVersion, image, the migrations values and the clusters, so a changed Job spec is a new Job.
*/}}
{{- define "quire.migrateJobName" -}}
{{- if .Values.migrations.useHelmHooks -}}
{{- printf "%s-migrate" (include "quire.fullname" . | trunc 55 | trimSuffix "-") -}}
{{- else -}}
{{- $spec := printf "%s|%s|%s" .Chart.AppVersion (include "quire.image" .) (toJson .Values.migrations) -}}
{{- with .Values.clusters -}}
{{- /* A cluster added or changed is registered by a new Job (left out when none, so names stay as they were). */ -}}
{{- $spec = printf "%s|%s" $spec (toJson .) -}}
{{- end -}}
{{- $hash := $spec | sha256sum | trunc 8 -}}
{{- printf "%s-migrate-%s" (include "quire.fullname" . | trunc 46 | trimSuffix "-") $hash -}}
{{- end -}}
{{- end -}}

{{/*
The migration Job's environment: the settings inline (it may run before the ConfigMap exists), the
secret ones, the clusters' URLs, extraEnv. Call with (dict "root" $ "secretName" "<name>").
*/}}
{{- define "quire.migrateEnv" -}}
{{- $root := .root -}}
{{- range $k, $v := fromYaml (include "quire.configData" $root) }}
- name: {{ $k }}
  value: {{ $v | toString | quote }}
{{- end }}
{{- include "quire.secretEnv" (dict "root" $root "secretName" .secretName) }}
{{- include "quire.clusterEnv" $root }}
{{- with $root.Values.extraEnv }}
{{ toYaml . }}
{{- end }}
{{- with $root.Values.migrations.extraEnv }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{/* The name of the Secret the Deployments read. */}}
{{- define "quire.secretName" -}}
{{- default (include "quire.fullname" .) .Values.secrets.existingSecret -}}
{{- end -}}

{{/* The hook-scoped copy of the chart-made Secret, read by the hook-mode migration Job. */}}
{{- define "quire.migrateSecretName" -}}
{{- printf "%s-migrate-env" (include "quire.fullname" .) | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* Secret data (chart-made Secret and its hook copy). */}}
{{- define "quire.secretData" -}}
{{- $s := .Values.secrets -}}
DATABASE_URL: {{ $s.databaseUrl | b64enc | quote }}
QUIRE_ENCRYPTION_KEY: {{ $s.encryptionKey | b64enc | quote }}
{{- with $s.databaseDirectUrl }}
DATABASE_DIRECT_URL: {{ . | b64enc | quote }}
{{- end }}
{{- with $s.redisUrl }}
REDIS_URL: {{ . | b64enc | quote }}
{{- end }}
{{- end -}}

{{/* What checksum/secret hashes: the chart-made data, or the existing Secret's name and keys. */}}
{{- define "quire.secretChecksum" -}}
{{- if .Values.secrets.existingSecret -}}
{{- printf "%s|%s" .Values.secrets.existingSecret (toJson .Values.secrets.keyMapping) | sha256sum -}}
{{- else -}}
{{- include "quire.secretData" . | sha256sum -}}
{{- end -}}
{{- end -}}

{{/*
The secret variables as env entries. Call with (dict "root" $ "secretName" "<name>"), and
"requireRedis" true for the worker. With existingSecret, keys go through secrets.keyMapping and the
optional ones may be absent; REDIS_URL is not optional with requireRedis (a worker pod without it
does not start: CreateContainerConfigError names the missing key).
*/}}
{{- define "quire.secretEnv" -}}
{{- $root := .root -}}
{{- $s := $root.Values.secrets -}}
{{- $name := .secretName -}}
{{- $optional := ternary (list "DATABASE_DIRECT_URL") (list "DATABASE_DIRECT_URL" "REDIS_URL") (default false .requireRedis) -}}
{{- if $s.existingSecret }}
{{- range $var := list "DATABASE_URL" "QUIRE_ENCRYPTION_KEY" "DATABASE_DIRECT_URL" "REDIS_URL" }}
- name: {{ $var }}
  valueFrom:
    secretKeyRef:
      name: {{ $name | quote }}
      key: {{ default $var (get $s.keyMapping $var) | quote }}
      {{- if has $var $optional }}
      optional: true
      {{- end }}
{{- end }}
{{- else }}
{{- range $var := list "DATABASE_URL" "QUIRE_ENCRYPTION_KEY" }}
- name: {{ $var }}
  valueFrom:
    secretKeyRef:
      name: {{ $name | quote }}
      key: {{ $var }}
{{- end }}
{{- if $s.databaseDirectUrl }}
- name: DATABASE_DIRECT_URL
  valueFrom:
    secretKeyRef:
      name: {{ $name | quote }}
      key: DATABASE_DIRECT_URL
{{- end }}
{{- if $s.redisUrl }}
- name: REDIS_URL
  valueFrom:
    secretKeyRef:
      name: {{ $name | quote }}
      key: REDIS_URL
{{- end }}
{{- end }}
{{- end -}}

{{/* ---------------------------------------------------------------- security */}}

{{- define "quire.podSecurityContext" -}}
runAsNonRoot: true
seccompProfile:
  type: RuntimeDefault
{{- with .Values.podSecurityContext }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{- define "quire.containerSecurityContext" -}}
runAsNonRoot: true
readOnlyRootFilesystem: true
allowPrivilegeEscalation: false
privileged: false
capabilities:
  drop: ["ALL"]
seccompProfile:
  type: RuntimeDefault
{{- end -}}
