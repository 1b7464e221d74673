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
