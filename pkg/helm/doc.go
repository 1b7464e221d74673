// Package helm renders Helm charts offline, as `helm template` does, on
// Helm's own loader, values handling and client-only install action, and
// finds and rewrites the images of what a chart would install: its
// templates, its enabled subcharts, the CRDs of crds/, its hooks (test Pods
// included, unless skipped) and the images its Chart.yaml files declare in
// the helm.sh/images annotation.
//
// [Render] returns a [rendered.Chart]: the manifests with the name of the
// template each came from, in `helm template` order, and the annotation
// images. Its Rewrite method rewrites it with a [manifest.Rewriter];
// [Images] lists a chart's images in one call. [PostRenderer] plugs the
// same rewriting into a Helm install or upgrade run in process.
//
// Rendering never reaches the network or a cluster: dependencies must be in
// the chart's charts/ directory (`helm dependency build`), values files are
// read locally, and lookup returns nothing.
//
// Importing this package links Helm, whose initialisation costs tens of
// milliseconds and megabytes at program start; programs that only consume
// rendered charts import [rendered] alone.
package helm
