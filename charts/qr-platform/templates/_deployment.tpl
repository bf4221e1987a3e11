{{/*
The Deployment of one qr-platform process. Takes a dict:
  root       the top-level context ($)
  component  tenancy, catalog, links, rendering, edge or operator
  values     that component's values (replicas, resources)
  env        the container's env list, rendered YAML
  ports      the container's ports list, rendered YAML
  probes     the container's probes, rendered YAML
  serviceAccountName  optional: the ServiceAccount of a process that calls the Kubernetes API; the
             others run without an API token
*/}}
{{- define "qr-platform.deployment" -}}
{{- $root := .root -}}
{{- $ctx := dict "root" $root "component" .component -}}
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ include "qr-platform.componentName" $ctx }}
  labels:
    {{- include "qr-platform.labels" $ctx | nindent 4 }}
spec:
  replicas: {{ .values.replicas }}
  selector:
    matchLabels:
      {{- include "qr-platform.selectorLabels" $ctx | nindent 6 }}
  template:
    metadata:
      labels:
        {{- include "qr-platform.labels" $ctx | nindent 8 }}
    spec:
      {{- with .serviceAccountName }}
      serviceAccountName: {{ . }}
      automountServiceAccountToken: true
      {{- else }}
      automountServiceAccountToken: false
      {{- end }}
      {{- with $root.Values.imagePullSecrets }}
      imagePullSecrets:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      securityContext:
        {{- toYaml $root.Values.podSecurityContext | nindent 8 }}
      # SIGTERM turns readiness off, drains in-flight calls, then closes connections.
      terminationGracePeriodSeconds: 30
      containers:
        - name: {{ .component }}
          image: {{ include "qr-platform.image" $root }}
          imagePullPolicy: {{ $root.Values.image.pullPolicy }}
          workingDir: {{ $root.Values.image.workingDir }}
          # The image's compiled entry point of this component (see the Dockerfile).
          command: ["node", "--enable-source-maps", "dist/{{ .component }}.js"]
          env:
            {{- .env | nindent 12 }}
            {{- include "qr-platform.otelEnv" $ctx | nindent 12 }}
            # Prometheus metrics on /metrics (see metrics.* in values.yaml).
            - name: METRICS_PORT
              value: {{ $root.Values.metrics.port | quote }}
          ports:
            {{- .ports | nindent 12 }}
            - name: metrics
              containerPort: {{ $root.Values.metrics.port }}
              protocol: TCP
          {{- .probes | nindent 10 }}
          resources:
            {{- toYaml .values.resources | nindent 12 }}
          securityContext:
            {{- toYaml $root.Values.securityContext | nindent 12 }}
          volumeMounts:
            # Scratch files; the root filesystem is read-only.
            - name: tmp
              mountPath: /tmp
      volumes:
        - name: tmp
          emptyDir: {}
{{- end }}

{{/* The OTLP settings of every process, when otel.endpoint is set. Takes (dict "root" $ "component" "edge"). */}}
{{- define "qr-platform.otelEnv" -}}
{{- $otel := .root.Values.otel -}}
{{- if $otel.endpoint -}}
- name: OTEL_SERVICE_NAME
  value: {{ .component | quote }}
- name: OTEL_EXPORTER_OTLP_ENDPOINT
  value: {{ $otel.endpoint | quote }}
- name: OTEL_EXPORTER_OTLP_PROTOCOL
  value: {{ $otel.protocol | quote }}
- name: OTEL_TRACES_SAMPLER
  value: {{ $otel.sampler | quote }}
{{- with $otel.samplerArg }}
- name: OTEL_TRACES_SAMPLER_ARG
  value: {{ . | quote }}
{{- end }}
- name: TRACES_HOT_PATH_RATIO
  value: {{ $otel.hotPathRatio | quote }}
{{- end -}}
{{- end }}

{{/* Environment every gRPC service reads. */}}
{{- define "qr-platform.grpcEnv" -}}
- name: GRPC_HOST
  value: "0.0.0.0"
- name: GRPC_PORT
  value: "9090"
- name: LOG_LEVEL
  value: {{ .Values.logLevel | quote }}
{{ include "qr-platform.internalSecretEnv" (dict "root" . "key" "SERVICE_TOKEN") }}
{{ include "qr-platform.internalSecretEnv" (dict "root" . "key" "ADMIN_TOKEN") }}
{{- end }}

{{- define "qr-platform.grpcPorts" -}}
- name: grpc
  containerPort: 9090
  protocol: TCP
{{- end }}

{{/*
Native gRPC health probes (grpc.health.v1). Startup and liveness ask for "liveness", SERVING for as long
as the process runs, so a database outage never gets pods restarted. Readiness asks for the server's
overall status (""), NOT_SERVING while the database is unreachable and once shutdown begins. Takes the
root context, or (dict "root" $ "readinessService" "accepting") for a process that stays useful without
its database.
*/}}
{{- define "qr-platform.grpcProbes" -}}
startupProbe:
  grpc:
    port: 9090
    service: liveness
  periodSeconds: 2
  failureThreshold: 60
livenessProbe:
  grpc:
    port: 9090
    service: liveness
  periodSeconds: 10
  timeoutSeconds: 3
  failureThreshold: 3
readinessProbe:
  grpc:
    port: 9090
    {{- with .readinessService }}
    service: {{ . }}
    {{- end }}
  periodSeconds: 5
  timeoutSeconds: 3
  failureThreshold: 2
{{- end }}

{{/* The ClusterIP Service in front of a gRPC service. Takes (dict "root" $ "component" "tenancy"). */}}
{{- define "qr-platform.grpcService" -}}
apiVersion: v1
kind: Service
metadata:
  name: {{ include "qr-platform.componentName" . }}
  labels:
    {{- include "qr-platform.labels" . | nindent 4 }}
spec:
  type: ClusterIP
  selector:
    {{- include "qr-platform.selectorLabels" . | nindent 4 }}
  ports:
    - name: grpc
      port: 9090
      targetPort: grpc
      protocol: TCP
      appProtocol: kubernetes.io/h2c
    {{- include "qr-platform.metricsServicePort" .root | nindent 4 }}
{{- end }}

{{/* The metrics port of every Service in front of a process, which a ServiceMonitor scrapes. */}}
{{- define "qr-platform.metricsServicePort" -}}
- name: metrics
  port: {{ .Values.metrics.port }}
  targetPort: metrics
  protocol: TCP
{{- end }}
