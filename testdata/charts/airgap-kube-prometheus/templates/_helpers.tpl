{{/* The operator's resources are named after the release. */}}
{{- define "kube-prometheus.operator.fullname" -}}
{{- printf "%s-kube-prometheus-operator" .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* The operator's image. */}}
{{- define "kube-prometheus.image" -}}
{{- include "common.images.image" (dict "imageRoot" .Values.operator.image "global" .Values.global) -}}
{{- end -}}

{{/* The config-reloader image: its own when its repository and tag are set, else the operator's. */}}
{{- define "kube-prometheus.prometheusConfigReloader.image" -}}
{{- if and .Values.operator.prometheusConfigReloader.image.repository .Values.operator.prometheusConfigReloader.image.tag -}}
{{- include "common.images.image" (dict "imageRoot" .Values.operator.prometheusConfigReloader.image "global" .Values.global) -}}
{{- else -}}
{{- include "kube-prometheus.image" . -}}
{{- end -}}
{{- end -}}
