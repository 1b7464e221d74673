{{/* Bitnami's common.images.image, reduced: registry from the global key when set. */}}
{{- define "airgap.image" -}}
{{- $registry := default .imageRoot.registry ((.global).imageRegistry) -}}
{{- if $registry -}}
{{- printf "%s/%s:%s" $registry .imageRoot.repository (.imageRoot.tag | toString) -}}
{{- else -}}
{{- printf "%s:%s" .imageRoot.repository (.imageRoot.tag | toString) -}}
{{- end -}}
{{- end -}}

{{/* An image from three keys. */}}
{{- define "airgap.tools" -}}
{{- printf "%s/%s:%s" .Values.tools.registry .Values.tools.repository .Values.tools.tag -}}
{{- end -}}

{{/* ingress-nginx style: (dict "image" IMAGE "global" .Values.global). */}}
{{- define "airgap.nginxImage" -}}
{{- $registry := default .image.registry .global.image.registry -}}
{{- printf "%s/%s:%s" $registry .image.image .image.tag -}}{{- if .image.digest -}}@{{ .image.digest }}{{- end -}}
{{- end -}}
