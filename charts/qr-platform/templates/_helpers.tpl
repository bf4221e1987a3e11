{{/* The chart name, for the app.kubernetes.io/name label. */}}
{{- define "qr-platform.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* The prefix of every resource name: the release name unless fullnameOverride is set. */}}
{{- define "qr-platform.prefix" -}}
{{- default .Release.Name .Values.fullnameOverride | trunc 40 | trimSuffix "-" }}
{{- end }}

{{/* Name of one component's resources, such as <release>-tenancy. Takes (dict "root" $ "component" "tenancy"). */}}
{{- define "qr-platform.componentName" -}}
{{- printf "%s-%s" (include "qr-platform.prefix" .root) .component | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Name of the links redirector's Service, such as <release>-links-redirect. Takes the root context. */}}
{{- define "qr-platform.redirectServiceName" -}}
{{- printf "%s-redirect" (include "qr-platform.componentName" (dict "root" . "component" "links")) }}
{{- end }}

{{/* In-cluster gRPC URL of a service. Takes (dict "root" $ "component" "tenancy"). */}}
{{- define "qr-platform.grpcUrl" -}}
{{- printf "http://%s:9090" (include "qr-platform.componentName" .) }}
{{- end }}

{{- define "qr-platform.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Labels that select one component's pods. Takes (dict "root" $ "component" "tenancy"). */}}
{{- define "qr-platform.selectorLabels" -}}
app.kubernetes.io/name: {{ include "qr-platform.name" .root }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end }}

{{/* Standard labels of every resource. Takes (dict "root" $ "component" "tenancy"). */}}
{{- define "qr-platform.labels" -}}
helm.sh/chart: {{ include "qr-platform.chart" .root }}
{{ include "qr-platform.selectorLabels" . }}
app.kubernetes.io/version: {{ .root.Chart.AppVersion | quote }}
app.kubernetes.io/part-of: qr-platform
app.kubernetes.io/managed-by: {{ .root.Release.Service }}
{{- end }}

{{- define "qr-platform.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}

{{/* The required existing secrets, failing with a clear message when unset. */}}
{{- define "qr-platform.internalSecret" -}}
{{- required "internalSecret.name is required: an existing Secret with SERVICE_TOKEN, ADMIN_TOKEN, PAGE_TOKEN_SECRET and VISITOR_KEY_SECRET" .Values.internalSecret.name }}
{{- end }}
{{- define "qr-platform.databaseSecret" -}}
{{- required "databaseUrl.secretName is required: an existing Secret holding the PostgreSQL URL" .Values.databaseUrl.secretName }}
{{- end }}

{{/* One environment variable read from the internal secret. Takes (dict "root" $ "key" "SERVICE_TOKEN"). */}}
{{- define "qr-platform.internalSecretEnv" -}}
- name: {{ .key }}
  valueFrom:
    secretKeyRef:
      name: {{ include "qr-platform.internalSecret" .root }}
      key: {{ .key }}
{{- end }}

{{/* DATABASE_URL from the database secret. */}}
{{/* REDIS_URL from redisUrl.secretName, when one is given: the edge's quotas, the links' invalidations and announcements of stored scans to the catalogs, and tenancy's announcements of key and account changes to the edges. */}}
{{- define "qr-platform.redisEnv" -}}
{{- with .Values.redisUrl.secretName }}
- name: REDIS_URL
  valueFrom:
    secretKeyRef:
      name: {{ . }}
      key: {{ $.Values.redisUrl.secretKey }}
{{- end }}
{{- end }}
{{- define "qr-platform.databaseEnv" -}}
- name: DATABASE_URL
  valueFrom:
    secretKeyRef:
      name: {{ include "qr-platform.databaseSecret" . }}
      key: {{ .Values.databaseUrl.secretKey }}
{{- end }}
