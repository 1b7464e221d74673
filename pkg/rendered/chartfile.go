package rendered

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
