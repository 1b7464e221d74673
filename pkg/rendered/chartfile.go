package rendered

import "time"

// The limits of a chart fetch by default (rehost-helm pull, pkg/helm's
// PullOptions), shared here so that rehost, which does not link Helm,
// shows them in its flags.
const (
	// DefaultMaxChartSize bounds what is downloaded for one chart, all
	// together: the packaged chart and its provenance file, or an OCI
	// chart's manifest, tag list, config and layers.
	DefaultMaxChartSize int64 = 64 << 20
	// DefaultMaxIndexSize bounds a chart repository's index.yaml.
	DefaultMaxIndexSize int64 = 32 << 20
	// DefaultStallTimeout is how long a chart download may move less than
	// 1 KiB/s (waiting for an answer included) before it is abandoned.
	DefaultStallTimeout = 2 * time.Minute
)

// ChartFileFormat is the version of the JSON form of a [ChartFile].
const ChartFileFormat = 1

// ChartFile is a packaged chart written to disk, as the rehost-helm helper
// reports it to rehost: a chart reference fetched (rehost-helm pull) or a
// chart directory packaged (rehost-helm package).
type ChartFile struct {
	// Format is [ChartFileFormat].
	Format int `json:"format"`
	// Name and Version are the chart's.
	Name    string `json:"name"`
	Version string `json:"version"`
	// Path is the packaged chart (.tgz); Provenance its provenance file,
	// when the source has one.
	Path       string `json:"path"`
	Provenance string `json:"provenance,omitempty"`
	// URL is where a fetched chart came from: "oci://ghcr.io/x/shop:1.2.0",
	// "https://charts.example/shop-1.2.0.tgz".
	URL string `json:"url,omitempty"`
}

// DependenciesFormat is the version of the JSON form of [Dependencies].
const DependenciesFormat = 1

// Dependencies is a chart whose dependencies missing from its charts/
// directory were fetched into a copy of it, as the rehost-helm helper
// reports it to rehost (rehost-helm dependencies).
type Dependencies struct {
	// Format is [DependenciesFormat].
	Format int `json:"format"`
	// Path is the chart to render: the copy, or the chart as given when
	// no dependency was missing.
	Path string `json:"path"`
	// Fetched are the dependencies fetched, in the order of Chart.yaml.
	Fetched []Dependency `json:"fetched,omitempty"`
}

// Dependency is a dependency fetched.
type Dependency struct {
	// Name, Version and Repository are its entry in Chart.yaml (Version:
	// the constraint), credentials redacted.
	Name       string `json:"name"`
	Version    string `json:"version"`
	Repository string `json:"repository"`
	// From is where it was read: its repository's URL, or its source
	// mirror.
	From string `json:"from"`
	// Locked says that Chart.lock, in step, chose the version.
	Locked bool `json:"locked,omitempty"`
	// Fetched is the version fetched.
	Fetched string `json:"fetched"`
}
