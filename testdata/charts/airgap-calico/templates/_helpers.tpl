{{- define "tigera-operator.image" -}}
{{- if .registry -}}
    {{- .registry | trimSuffix "/" -}}/
{{- end -}}
{{- .image -}}:{{- .version -}}
{{- end -}}

{{/* The Installation's pull secrets: its own and one per top-level entry. */}}
{{- define "tigera-operator.imagePullSecrets" -}}
{{- $secrets := default list .Values.installation.imagePullSecrets -}}
{{- range $key, $val := .Values.imagePullSecrets -}}
  {{- $secrets = append $secrets (dict "name" $key) -}}
{{- end -}}
{{ $secrets | toYaml }}
{{- end -}}
