package helm

import (
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
		Values:    deepCopyMap(c.Values),
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

// deepCopyMap copies a values tree: maps and lists are copied, other values
// shared (they are immutable scalars).
func deepCopyMap(m map[string]interface{}) map[string]interface{} {
	if m == nil {
		return nil
	}
	out := make(map[string]interface{}, len(m))
	for k, v := range m {
		out[k] = deepCopyValue(v)
	}
	return out
}

func deepCopyValue(v interface{}) interface{} {
	switch v := v.(type) {
	case map[string]interface{}:
		return deepCopyMap(v)
	case []interface{}:
		out := make([]interface{}, len(v))
		for i, e := range v {
			out[i] = deepCopyValue(e)
		}
		return out
	default:
		if m, ok := asMap(v); ok {
			return deepCopyMap(m)
		}
		return v
	}
}

// asMap returns v as a values map: Helm's values hold both
// map[string]interface{} and chartutil.Values.
func asMap(v interface{}) (map[string]interface{}, bool) {
	switch v := v.(type) {
	case map[string]interface{}:
		return v, true
	case interface{ AsMap() map[string]interface{} }:
		return v.AsMap(), true
	}
	return nil, false
}

// mergeValues merges src over dst as Helm merges -f files (maps merged
// key by key, anything else replaced) and returns dst.
func mergeValues(dst, src map[string]interface{}) map[string]interface{} {
	if dst == nil {
		dst = map[string]interface{}{}
	}
	for k, v := range src {
		if vm, ok := asMap(v); ok {
			if dm, ok := asMap(dst[k]); ok {
				dst[k] = mergeValues(dm, vm)
				continue
			}
		}
		dst[k] = deepCopyValue(v)
	}
	return dst
}
