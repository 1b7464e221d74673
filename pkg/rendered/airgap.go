package rendered

// AirgapFormat is the version of the JSON form of an [Airgap] report.
const AirgapFormat = 1

// Airgap is the JSON form of an air-gap values overlay (rehost values) or
// of a relocated chart (rehost relocate), as the rehost-helm helper reports
// it to rehost.
type Airgap struct {
	// Format is [AirgapFormat].
	Format int `json:"format"`
	// Chart and Version name the chart.
	Chart   string `json:"chart"`
	Version string `json:"version,omitempty"`
	// Overlay is the values overlay, YAML with comments.
	Overlay string `json:"overlay"`
	// Keys are the values the overlay sets.
	Keys []AirgapKey `json:"keys,omitempty"`
	// Unmoved are the image fields no value moves.
	Unmoved []AirgapUnmoved `json:"unmoved,omitempty"`
	// Warnings are Helm's warnings about the chart and the values.
	Warnings []string `json:"warnings,omitempty"`
	// Candidates is how many values were probed, Renders how many times
	// the chart was rendered.
	Candidates int `json:"candidates"`
	Renders    int `json:"renders"`
	// Output is where rehost relocate wrote the chart, and Edited the
	// files it changed in it.
	Output string   `json:"output,omitempty"`
	Edited []string `json:"edited,omitempty"`
}

// AirgapKey is one value an overlay sets.
type AirgapKey struct {
	// Path is the key, "global.imageRegistry", "sidecars[0].image".
	Path  string `json:"path"`
	Value string `json:"value"`
	// Images are the images it moves, "FROM -> TO" (", with KEY" when
	// another key moves it too).
	Images []string `json:"images"`
	// Why says why a key that moves no image is set (a chart family's
	// switch).
	Why string `json:"why,omitempty"`
}

// AirgapUnmoved is an image field no value moves.
type AirgapUnmoved struct {
	Image    string `json:"image"`
	Target   string `json:"target"`
	Template string `json:"template"`
	Line     int    `json:"line,omitempty"`
	Object   string `json:"object"`
	Field    string `json:"field"`
	Reason   string `json:"reason"`
	// Message is the whole report line: "TEMPLATE:LINE: OBJECT: FIELD: IMAGE (-> TARGET): REASON".
	Message string `json:"message"`
}
