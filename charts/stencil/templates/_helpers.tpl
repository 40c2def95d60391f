{{/*
Named templates shared by the chart: names, the app.kubernetes.io/* labels, the image reference
and the ServiceAccount name.
*/}}

{{/* Chart name, truncated to the 63 characters a label value allows. */}}
{{- define "stencil.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
Fully qualified app name: the release name, prefixed to the chart name unless it already holds it.
Room is left for the longest suffix ("-webhook-cert", 13 characters).
*/}}
{{- define "stencil.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 50 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 50 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 50 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/* chart label value: name-version. */}}
{{- define "stencil.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Labels every object carries. */}}
{{- define "stencil.labels" -}}
helm.sh/chart: {{ include "stencil.chart" . }}
{{ include "stencil.selectorLabels" . }}
app.kubernetes.io/version: {{ .Values.image.tag | default .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: stencil
{{- with .Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{/* Labels that select the operator's pods (immutable once deployed). */}}
{{- define "stencil.selectorLabels" -}}
app.kubernetes.io/name: {{ include "stencil.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/* The ServiceAccount the operator runs as. */}}
{{- define "stencil.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "stencil.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- required "serviceAccount.name is required when serviceAccount.create is false" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/* Container image: repository:tag, or repository@digest when a digest is set. */}}
{{- define "stencil.image" -}}
{{- if .Values.image.digest }}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest }}
{{- else }}
{{- printf "%s:%s" .Values.image.repository (.Values.image.tag | default .Chart.AppVersion) }}
{{- end }}
{{- end }}

{{/* Name of the webhook Service: what --webhook-service names and the certificate covers. */}}
{{- define "stencil.webhookServiceName" -}}
{{- printf "%s-webhook" (include "stencil.fullname" .) }}
{{- end }}

{{/*
Operator replicas: sharding.replicas when sharding, else replicaCount.
*/}}
{{- define "stencil.replicas" -}}
{{- if .Values.sharding.enabled }}{{ .Values.sharding.replicas }}{{ else }}{{ .Values.replicaCount }}{{ end }}
{{- end }}

{{/*
The API groups Templates may publish kinds in (typedApis.allow, docs/adr/0032), as a sorted JSON
list without repeats.
*/}}
{{- define "stencil.typedGroups" -}}
{{- $groups := list }}
{{- range $namespace, $allowed := .Values.typedApis.allow }}
{{- $groups = concat $groups $allowed }}
{{- end }}
{{- $groups | uniq | sortAlpha | toJson }}
{{- end }}
