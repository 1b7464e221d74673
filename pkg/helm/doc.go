// Package helm renders Helm charts offline, as `helm template` does, on
// Helm's own loader, values handling and client-only install action, and
// finds and rewrites the images of what a chart would install: its
// templates, its enabled subcharts, the CRDs of crds/, its hooks (test Pods
// included, unless skipped) and the images its Chart.yaml files declare in
// their image annotations (helm.sh/images, images, artifacthub.io/images).
//
// [Render] returns a [rendered.Chart]: the manifests with the name of the
// template each came from, in `helm template` order, and the annotation
// images. Its Rewrite method rewrites it with a [manifest.Rewriter];
// [Images] lists a chart's images in one call; [Renderer] plugs Render into
// [app.List], which lists a whole application (manifests, charts and
// imageList files) in one call. [PostRenderer] (the core's
// [rendered.PostRenderer]) plugs the same rewriting into a Helm install or
// upgrade run in process. [Metadata] gives what [rendered.FromTemplates]
// needs of a loaded chart, for programs that run Helm's engine themselves.
//
// [AirgapValues] finds the values overlay that makes a chart render its
// images in the target registry with no post-renderer (hooks included),
// by rendering the chart with markers in place of candidate values, and
// checks it by rendering; [Relocate] writes the chart with that overlay
// merged into its own values.yaml files.
//
// Rendering never reaches the network or a cluster: dependencies must be in
// the chart's charts/ directory, values files are read locally, and lookup
// returns nothing. [FetchDependencies] fetches the dependencies missing
// from charts/, as `helm dependency build` does, into a copy of the chart
// (the chart itself is only read), bounded as [Pull] is. Charts render for Kubernetes
// [DefaultKubeVersion] (the version of the Kubernetes libraries Helm is
// built with; Helm's own default, v1.20.0, is older than most current
// charts accept) unless Options.KubeVersion says otherwise.
//
// A chart directory never brings in a file from outside it: a symbolic
// link that leaves the chart, dangles or loops is an error naming it (Helm's
// loader would follow it into .Files and a relocated chart); a link inside
// the chart is followed and reported as a warning.
//
// Helm 3 prints its warnings about a chart's values with the standard
// library's global logger (helm.sh/helm/v3/pkg/chartutil calls log.Printf
// and has no per-call hook). A render redirects that logger for its
// duration and restores its output, flags and prefix before it returns;
// the warnings, each once, are in [rendered.Chart.Warnings] and reach the
// warning function of the [manifest.Rewriter] the chart is rewritten with.
// Renders in one process take turns, and lines that other goroutines write
// to the standard logger during a render are taken for Helm's.
//
// Errors and image occurrences name the template file and the line in that
// template's output. Helm keeps each document trimmed and sorted by kind,
// so the templates are rendered once more to find where each document
// stands; a document that calls a random function (genCA, randAlphaNum)
// is not found again, and its lines count from its first line.
//
// This package is a Go module of its own, github.com/rehost/rehost/pkg/helm,
// so that programs that only rewrite manifests do not get Helm and the
// Kubernetes libraries in their module graph. Importing it links Helm, whose initialisation costs tens of
// milliseconds and megabytes at program start; programs that only consume
// rendered charts import [rendered] alone.
package helm
