{{/*
common.errors.insecureImages, with the logic of Bitnami's common library:
for each image, registry/repository (global.imageRegistry before the
image's registry) must occur in the chart's "images" annotation, a raw
string; if not, an image whose registry does not occur in it either is
"relocated", one whose repository does not is "replaced". Either fails the
render when the annotation names Bitnami's images, unless
global.security.allowInsecureImages is true, which prints a warning
instead.
*/}}
{{- define "common.errors.insecureImages" -}}
{{- $relocatedImages := list -}}
{{- $replacedImages := list -}}
{{- $globalRegistry := ((.context.Values.global).imageRegistry) -}}
{{- $originalImages := .context.Chart.Annotations.images -}}
{{- range .images -}}
  {{- $registryName := default .registry $globalRegistry -}}
  {{- $fullImageNameNoTag := printf "%s/%s" $registryName .repository -}}
  {{- $fullImageName := printf "%s:%s" $fullImageNameNoTag .tag -}}
  {{- if not (contains $fullImageNameNoTag $originalImages) -}}
    {{- if not (contains $registryName $originalImages) -}}
      {{- $relocatedImages = append $relocatedImages $fullImageName -}}
    {{- else if not (contains .repository $originalImages) -}}
      {{- $replacedImages = append $replacedImages $fullImageName -}}
    {{- end -}}
  {{- end -}}
{{- end -}}
{{- if and (or (gt (len $relocatedImages) 0) (gt (len $replacedImages) 0)) (((.context.Values.global).security).allowInsecureImages) -}}
  {{- print "\n\nSECURITY WARNING: Verifying original container images was skipped." -}}
{{- else if (or (gt (len $relocatedImages) 0) (gt (len $replacedImages) 0)) -}}
  {{- $errorString := "Original containers have been substituted for unrecognized ones." -}}
  {{- $errorString = print $errorString "\n\nUnrecognized images:" -}}
  {{- range (concat $relocatedImages $replacedImages) -}}
    {{- $errorString = print $errorString "\n  - " . -}}
  {{- end -}}
  {{- if contains "docker.io/bitnami/" $originalImages -}}
    {{- $errorString = print "\n\nERROR: " $errorString -}}
    {{- $errorString = print $errorString "\n\nIf you are sure you want to proceed with non-standard containers, you can skip container image verification by setting the global parameter 'global.security.allowInsecureImages' to true." -}}
    {{- print $errorString | fail -}}
  {{- else -}}
    {{- print "\n\nWARNING: " $errorString -}}
  {{- end -}}
{{- end -}}
{{- end -}}
