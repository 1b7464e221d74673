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

{{/* ingress-nginx style. */}}
{{- define "airgap.controller" -}}
{{- $i := .Values.controller.image -}}
{{- printf "%s/%s:%s" $i.registry $i.image $i.tag -}}{{- if $i.digest -}}@{{ $i.digest }}{{- end -}}
{{- end -}}
