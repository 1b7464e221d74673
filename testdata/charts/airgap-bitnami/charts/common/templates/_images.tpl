{{/* Bitnami's common.images.image. */}}
{{- define "common.images.image" -}}
{{- $registryName := default .imageRoot.registry ((.global).imageRegistry) -}}
{{- $repositoryName := .imageRoot.repository -}}
{{- $separator := ":" -}}
{{- $termination := .imageRoot.tag | toString -}}
{{- if .imageRoot.digest }}
    {{- $separator = "@" -}}
    {{- $termination = .imageRoot.digest | toString -}}
{{- end -}}
{{- if $registryName }}
    {{- printf "%s/%s%s%s" $registryName $repositoryName $separator $termination -}}
{{- else -}}
    {{- printf "%s%s%s"  $repositoryName $separator $termination -}}
{{- end -}}
{{- end -}}

{{/* Bitnami's common.errors.insecureImages, reduced: a repository that is
not one of the chart's original images fails the render; a relocated
registry is allowed. */}}
{{- define "common.errors.insecureImages" -}}
{{- $originalImages := .context.Chart.Annotations.images -}}
{{- range .images -}}
  {{- if not (contains .repository $originalImages) -}}
    {{- fail (printf "Original containers have been substituted for unrecognized ones: %s" .repository) -}}
  {{- end -}}
{{- end -}}
{{- end -}}
