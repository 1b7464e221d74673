{{- define "parent.fullname" -}}
{{ .Release.Name }}-{{ .Chart.Name }}
{{- end -}}
