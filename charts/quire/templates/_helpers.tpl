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
api auth webhooks{{ if .Values.operator.enabled }} operator{{ end }}
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
{{- end -}}
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

{{/* ---------------------------------------------------------------- shutdown */}}

{{/* "true" when the native preStop sleep is rendered (Kubernetes >= 1.30 and a non-zero sleep). */}}
{{- define "quire.preStopSleep" -}}
{{- if and (semverCompare ">=1.30-0" .Capabilities.KubeVersion.Version) (gt (int .Values.shutdown.preStopSleepSeconds) 0) -}}
true
{{- end -}}
{{- end -}}

{{/* The least terminationGracePeriodSeconds: preStop sleep + ceil((delay+timeout)/1000) + 5. */}}
{{- define "quire.minGracePeriod" -}}
{{- $ms := add (int .Values.shutdown.delayMs) (int .Values.shutdown.timeoutMs) -}}
{{- $s := add (div (add $ms 999) 1000) 5 -}}
{{- if include "quire.preStopSleep" . -}}
{{- $s = add $s (int .Values.shutdown.preStopSleepSeconds) -}}
{{- end -}}
{{- $s -}}
{{- end -}}

{{/* The component's grace period: its own setting (never below the least), else the least. */}}
{{- define "quire.gracePeriod" -}}
{{- $min := include "quire.minGracePeriod" .root | int -}}
{{- $set := index .root.Values .component "terminationGracePeriodSeconds" -}}
{{- if kindIs "invalid" $set -}}
{{- $min -}}
{{- else if lt (int $set) $min -}}
{{- fail (printf "%s.terminationGracePeriodSeconds=%d is too low: the process needs %ds (preStop sleep + shutdown.delayMs + shutdown.timeoutMs + 5 s); raise it or lower shutdown.*" .component (int $set) $min) -}}
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
the hash over appVersion, image and the migrations values, so a changed Job spec is a new Job.
*/}}
{{- define "quire.migrateJobName" -}}
{{- if .Values.migrations.useHelmHooks -}}
{{- printf "%s-migrate" (include "quire.fullname" . | trunc 55 | trimSuffix "-") -}}
{{- else -}}
{{- $hash := printf "%s|%s|%s" .Chart.AppVersion (include "quire.image" .) (toJson .Values.migrations) | sha256sum | trunc 8 -}}
{{- printf "%s-migrate-%s" (include "quire.fullname" . | trunc 46 | trimSuffix "-") $hash -}}
{{- end -}}
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
The secret variables as env entries. Call with (dict "root" $ "secretName" "<name>").
With existingSecret, keys go through secrets.keyMapping and the optional ones may be absent.
*/}}
{{- define "quire.secretEnv" -}}
{{- $root := .root -}}
{{- $s := $root.Values.secrets -}}
{{- $name := .secretName -}}
{{- if $s.existingSecret }}
{{- range $var := list "DATABASE_URL" "QUIRE_ENCRYPTION_KEY" "DATABASE_DIRECT_URL" "REDIS_URL" }}
- name: {{ $var }}
  valueFrom:
    secretKeyRef:
      name: {{ $name | quote }}
      key: {{ default $var (get $s.keyMapping $var) | quote }}
      {{- if has $var (list "DATABASE_DIRECT_URL" "REDIS_URL") }}
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
