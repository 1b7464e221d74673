package helm

import (
	"github.com/rehost/rehost/pkg/helm/internal/valuetree"
	"helm.sh/helm/v3/pkg/chart"
)

// cloneChart copies a loaded chart deeply enough for Helm's dependency
// processing (which renames aliased subcharts, drops disabled ones, edits
// the dependency entries and imports values) to leave the original as
// loaded, so that one chart loaded once renders many times. Files are
// shared: nothing writes to them.
func cloneChart(c *chart.Chart) *chart.Chart {
	out := &chart.Chart{
		Raw:       c.Raw,
		Lock:      c.Lock,
		Templates: c.Templates,
		Schema:    c.Schema,
		Files:     c.Files,
		Values:    valuetree.CopyMap(c.Values),
	}
	if c.Metadata != nil {
		md := *c.Metadata
		md.Dependencies = nil
		for _, d := range c.Metadata.Dependencies {
			if d == nil {
				md.Dependencies = append(md.Dependencies, nil)
				continue
			}
			dc := *d
			dc.Tags = append([]string(nil), d.Tags...)
			dc.ImportValues = append([]interface{}(nil), d.ImportValues...)
			md.Dependencies = append(md.Dependencies, &dc)
		}
		if c.Metadata.Annotations != nil {
			md.Annotations = make(map[string]string, len(c.Metadata.Annotations))
			for k, v := range c.Metadata.Annotations {
				md.Annotations[k] = v
			}
		}
		out.Metadata = &md
	}
	var deps []*chart.Chart
	for _, d := range c.Dependencies() {
		deps = append(deps, cloneChart(d))
	}
	out.SetDependencies(deps...)
	return out
}
