{{/*
"true" when something else owns the replica count: an HPA (api, auth, webhooks) or KEDA (webhooks;
the worker with worker.autoscaling.enabled). Call with (dict "root" $ "component" "api").
*/}}
{{- define "quire.autoscaled" -}}
{{- $v := index .root.Values .component -}}
{{- if eq .component "worker" -}}
{{- include "quire.workerScaledObject" .root -}}
{{- else if or (dig "autoscaling" "enabled" false $v) (and (eq .component "webhooks") .root.Values.keda.enabled) -}}
true
{{- end -}}
{{- end -}}

{{/*
The worker's own environment (not shared, so not in the ConfigMap). SHUTDOWN_TIMEOUT_MS overrides
the ConfigMap's: running jobs get worker.shutdownTimeoutMs to finish. Call with the root context.
*/}}
{{- define "quire.workerEnv" -}}
{{- $w := .Values.worker -}}
- name: WORKER_CONCURRENCY
  value: {{ int $w.concurrency | toString | quote }}
- name: JOBS_QUEUE_WINDOW
  value: {{ int $w.queueWindow | toString | quote }}
- name: JOBS_SWEEP_INTERVAL_MS
  value: {{ int $w.sweepIntervalMs | toString | quote }}
- name: JOBS_LOCK_MS
  value: {{ int $w.lockMs | toString | quote }}
- name: SHUTDOWN_TIMEOUT_MS
  value: {{ include "quire.shutdownTimeoutMs" (dict "root" . "component" "worker") | quote }}
{{- end -}}

{{/*
The operator's own environment (its settings are not shared, so they are not in the ConfigMap).
Call with the root context.
*/}}
{{- define "quire.operatorEnv" -}}
{{- $o := .Values.operator -}}
{{- $le := $o.leaderElection -}}
- name: OPERATOR_NAMESPACE
  valueFrom:
    fieldRef:
      fieldPath: metadata.namespace
- name: OPERATOR_IDENTITY
  valueFrom:
    fieldRef:
      fieldPath: metadata.name
- name: OPERATOR_LEASE_NAME
  value: {{ include "quire.componentName" (dict "root" . "component" "operator") | quote }}
- name: OPERATOR_LEASE_DURATION_SECONDS
  value: {{ int $le.leaseDurationSeconds | toString | quote }}
- name: OPERATOR_RENEW_DEADLINE_MS
  value: {{ int $le.renewDeadlineMs | toString | quote }}
- name: OPERATOR_RETRY_PERIOD_MS
  value: {{ int $le.retryPeriodMs | toString | quote }}
- name: OPERATOR_WORKERS
  value: {{ int $o.workers | toString | quote }}
- name: OPERATOR_RESYNC_SECONDS
  value: {{ int $o.resyncSeconds | toString | quote }}
- name: OPERATOR_USAGE_REFRESH_SECONDS
  value: {{ int $o.usageRefreshSeconds | toString | quote }}
# Tenant Ingresses route like the chart's: /oauth and /.well-known to auth, the rest to api.
- name: OPERATOR_API_SERVICE
  value: {{ include "quire.componentName" (dict "root" . "component" "api") | quote }}
- name: OPERATOR_API_SERVICE_PORT
  value: "http"
- name: OPERATOR_AUTH_SERVICE
  value: {{ include "quire.componentName" (dict "root" . "component" "auth") | quote }}
- name: OPERATOR_AUTH_SERVICE_PORT
  value: "http"
{{- with (default .Values.ingress.className $o.ingress.className) }}
- name: OPERATOR_INGRESS_CLASS
  value: {{ . | quote }}
{{- end }}
{{- with $o.ingress.certIssuer.name }}
- name: OPERATOR_CERT_ISSUER
  value: {{ . | quote }}
- name: OPERATOR_CERT_ISSUER_KIND
  value: {{ $o.ingress.certIssuer.kind | quote }}
{{- end }}
{{- with $o.ingress.tlsSecretName }}
- name: OPERATOR_TLS_SECRET_NAME
  value: {{ . | quote }}
{{- end }}
{{- with $o.ingress.annotations }}
- name: OPERATOR_INGRESS_ANNOTATIONS
  value: {{ toJson . | quote }}
{{- end }}
{{- end -}}

{{/*
One Quire process as a Deployment. Call with (dict "root" $ "component" "api|auth|webhooks|worker|operator").
api and auth have a main port (`http`) and are probed there; webhooks, the worker and the operator
only have `metrics`. The operator alone runs with its own ServiceAccount and a mounted token. api
and the worker (jobs read and write files) mount the files volume.
*/}}
{{- define "quire.deployment" -}}
{{- $root := .root -}}
{{- $c := .component -}}
{{- $v := index $root.Values $c -}}
{{- $ctx := dict "root" $root "component" $c -}}
{{- $hasHttp := has $c (list "api" "auth") -}}
{{- $isOperator := eq $c "operator" -}}
{{- $isWorker := eq $c "worker" -}}
{{- $hasFiles := has $c (list "api" "worker") -}}
{{- $probePort := ternary "http" "metrics" $hasHttp -}}
{{- $p := $root.Values.probes -}}
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ include "quire.componentName" $ctx }}
  labels:
    {{- include "quire.componentLabels" $ctx | nindent 4 }}
spec:
  {{- if not (include "quire.autoscaled" $ctx) }}
  replicas: {{ int $v.replicas }}
  {{- end }}
  revisionHistoryLimit: 5
  minReadySeconds: {{ int $root.Values.minReadySeconds }}
  strategy:
    type: RollingUpdate
    rollingUpdate:
      maxSurge: 25%
      maxUnavailable: 0
  selector:
    matchLabels:
      {{- include "quire.selectorLabels" $ctx | nindent 6 }}
  template:
    metadata:
      labels:
        {{- include "quire.componentLabels" $ctx | nindent 8 }}
        {{- with (merge (dict) $v.podLabels $root.Values.podLabels) }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
      annotations:
        checksum/config: {{ include "quire.configData" $root | sha256sum }}
        checksum/secret: {{ include "quire.secretChecksum" $root }}
        kubectl.kubernetes.io/default-container: {{ $c }}
        {{- with (merge (dict) $v.podAnnotations $root.Values.podAnnotations) }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
    spec:
      {{- if $isOperator }}
      # The operator talks to the Kubernetes API (its Role: Tenants, Ingresses, Secrets, Events, the Lease).
      serviceAccountName: {{ include "quire.operatorServiceAccountName" $root }}
      automountServiceAccountToken: true
      {{- else }}
      serviceAccountName: {{ include "quire.serviceAccountName" $root }}
      automountServiceAccountToken: false
      {{- end }}
      {{- with include "quire.imagePullSecrets" $root }}{{ . | nindent 6 }}{{- end }}
      {{- with $root.Values.priorityClassName }}
      priorityClassName: {{ . | quote }}
      {{- end }}
      terminationGracePeriodSeconds: {{ include "quire.gracePeriod" $ctx }}
      securityContext:
        {{- include "quire.podSecurityContext" $root | nindent 8 }}
      {{- with (default $root.Values.nodeSelector $v.nodeSelector) }}
      nodeSelector:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with (default $root.Values.tolerations $v.tolerations) }}
      tolerations:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with (default $root.Values.affinity $v.affinity) }}
      affinity:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- if $root.Values.topologySpread.enabled }}
      topologySpreadConstraints:
        {{- range $key := list "kubernetes.io/hostname" "topology.kubernetes.io/zone" }}
        - topologyKey: {{ $key }}
          maxSkew: {{ int $root.Values.topologySpread.maxSkew }}
          whenUnsatisfiable: ScheduleAnyway
          labelSelector:
            matchLabels:
              {{- include "quire.selectorLabels" $ctx | nindent 14 }}
          matchLabelKeys:
            - pod-template-hash
        {{- end }}
      {{- end }}
      containers:
        - name: {{ $c }}
          image: {{ include "quire.image" $root | quote }}
          imagePullPolicy: {{ $root.Values.image.pullPolicy }}
          args:
            {{- toYaml $v.args | nindent 12 }}
          ports:
            {{- if $hasHttp }}
            - name: http
              containerPort: {{ int $v.port }}
              protocol: TCP
            {{- end }}
            - name: metrics
              containerPort: {{ int $root.Values.metrics.port }}
              protocol: TCP
          envFrom:
            - configMapRef:
                name: {{ include "quire.fullname" $root }}
          env:
            {{- include "quire.secretEnv" (dict "root" $root "secretName" (include "quire.secretName" $root) "requireRedis" $isWorker) | trim | nindent 12 }}
            {{- with include "quire.clusterEnv" $root | trim }}
            {{- . | nindent 12 }}
            {{- end }}
            {{- if $isOperator }}
            {{- include "quire.operatorEnv" $root | nindent 12 }}
            {{- end }}
            {{- if $isWorker }}
            {{- include "quire.workerEnv" $root | nindent 12 }}
            {{- end }}
            {{- with $root.Values.extraEnv }}
            {{- toYaml . | nindent 12 }}
            {{- end }}
            {{- with $v.extraEnv }}
            {{- toYaml . | nindent 12 }}
            {{- end }}
          startupProbe:
            httpGet:
              path: /healthz
              port: {{ $probePort }}
            periodSeconds: {{ int $p.startup.periodSeconds }}
            failureThreshold: {{ int $p.startup.failureThreshold }}
            timeoutSeconds: {{ int $p.startup.timeoutSeconds }}
          readinessProbe:
            httpGet:
              path: /readyz
              port: {{ $probePort }}
            periodSeconds: {{ int $p.readiness.periodSeconds }}
            failureThreshold: {{ int $p.readiness.failureThreshold }}
            successThreshold: {{ int $p.readiness.successThreshold }}
            timeoutSeconds: {{ int $p.readiness.timeoutSeconds }}
          livenessProbe:
            httpGet:
              path: /healthz
              port: {{ $probePort }}
            periodSeconds: {{ int $p.liveness.periodSeconds }}
            failureThreshold: {{ int $p.liveness.failureThreshold }}
            timeoutSeconds: {{ int $p.liveness.timeoutSeconds }}
          {{- if include "quire.preStopSleep" $root }}
          lifecycle:
            preStop:
              sleep:
                seconds: {{ int $root.Values.shutdown.preStopSleepSeconds }}
          {{- end }}
          resources:
            {{- toYaml $v.resources | nindent 12 }}
          securityContext:
            {{- include "quire.containerSecurityContext" $root | nindent 12 }}
          volumeMounts:
            - name: tmp
              mountPath: /tmp
            {{- if $hasFiles }}
            - name: files
              mountPath: {{ $root.Values.files.mountPath }}
            {{- end }}
      volumes:
        - name: tmp
          emptyDir: {}
        {{- if $hasFiles }}
        - name: files
          {{- if $root.Values.files.persistence.enabled }}
          persistentVolumeClaim:
            claimName: {{ default (printf "%s-files" (include "quire.fullname" $root)) $root.Values.files.persistence.existingClaim }}
          {{- else }}
          emptyDir: {}
          {{- end }}
        {{- end }}
{{- end -}}
