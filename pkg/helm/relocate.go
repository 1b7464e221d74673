package helm

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/rehost/rehost/pkg/rendered"
	"github.com/rehost/rehost/pkg/rewrite"
	"go.yaml.in/yaml/v3"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chartutil"
)

// Relocated is a chart written with its air-gap values merged in.
type Relocated struct {
	// Overlay is the overlay merged into the chart's values files.
	Overlay *Overlay
	// Output is where the chart was written.
	Output string
	// Edited are the files changed, by their path in the chart
	// ("mychart/values.yaml", "mychart/charts/sub/values.yaml",
	// "mychart/Chart.yaml").
	Edited []string
}

// Relocate writes the chart at path, with its air-gap values (see
// [AirgapValues]) merged into its own values.yaml files, to output: a
// directory (created; it must not exist or be empty) or, when output ends
// in .tgz, a packaged chart. Each key goes into the values file that gives
// it its value: the parent's when it sets it, else the subchart's own (a
// subchart used once; global keys stay in the parent); a key no file holds
// is added at the end of its deepest existing map, with a comment naming
// the images it moves. Existing values are replaced in place: every other
// line, comments and key order included, stays as it was. The image
// annotations of every Chart.yaml (helm.sh/images, images,
// artifacthub.io/images) are updated to the target references. Chart.yaml
// is written by Helm's chart writer, which does not keep its comments. A
// packaged chart records no time (see [Package]): relocating the same
// chart for the same mapping gives the same bytes.
//
// The relocated chart is checked: rendered with opts, it must give what
// the chart gives with the overlay. Images no value moves are in
// Overlay.Unmoved, as with AirgapValues.
func Relocate(path, output string, opts Options, cfg rewrite.Config) (*Relocated, error) {
	s, err := sessionFor(path, opts, cfg)
	if err != nil {
		return nil, err
	}
	o, err := s.solve()
	if err != nil {
		return nil, err
	}
	ch, err := Load(path) // as loaded, not as processed for rendering
	if err != nil {
		return nil, err
	}
	rel := &Relocated{Overlay: o, Output: output}
	edited := map[string]bool{}
	for _, k := range o.Keys {
		c, p := placeKey(ch, k.Path)
		if err := setChartValue(c, p, k, edited); err != nil {
			return nil, fmt.Errorf("relocating %s: %s/values.yaml: %s: %w", path, c.ChartFullPath(), PathString(p), err)
		}
	}
	mapper, err := rewrite.NewMapper(cfg)
	if err != nil {
		return nil, err
	}
	if err := relocateAnnotations(ch, mapper, edited); err != nil {
		return nil, err
	}
	for f := range edited {
		rel.Edited = append(rel.Edited, f)
	}
	sort.Strings(rel.Edited)

	// Write beside the output, check, then move into place: on any error
	// nothing is left at output.
	staged, cleanup, err := stageChart(ch, output)
	defer cleanup()
	if err != nil {
		return nil, err
	}
	want, err := s.render(o.tree)
	if err != nil {
		return nil, err
	}
	got, err := Render(staged, opts)
	if err != nil {
		return nil, fmt.Errorf("rendering the relocated chart: %w", err)
	}
	if len(got.Manifests) != len(want.Manifests) {
		return nil, fmt.Errorf("the relocated chart renders %d documents, the chart with the overlay %d", len(got.Manifests), len(want.Manifests))
	}
	for i := range got.Manifests {
		g, w := got.Manifests[i], want.Manifests[i]
		if g.Name == w.Name && (g.Content == w.Content || s.volatile(i) && s.sameFields(g.Content, w.Content)) {
			continue
		}
		return nil, fmt.Errorf("the relocated chart renders %s otherwise than the chart with the overlay (do your values files set a key the overlay sets?)", g.Name)
	}
	if !strings.HasSuffix(output, ".tgz") {
		// An empty directory at output is replaced.
		if err := os.Remove(output); err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
	}
	if err := os.Rename(staged, output); err != nil {
		return nil, err
	}
	return rel, nil
}

// sameFields reports whether two renderings of a document have the same
// image fields.
func (s *session) sameFields(a, b string) bool {
	fa, err := s.findFields(a)
	if err != nil {
		return false
	}
	fb, err := s.findFields(b)
	if err != nil || len(fa) != len(fb) {
		return false
	}
	for i := range fa {
		if fa[i].path != fb[i].path || fa[i].value != fb[i].value {
			return false
		}
	}
	return true
}

// sessionFor prepares the search for a chart's overlay.
func sessionFor(path string, opts Options, cfg rewrite.Config) (*session, error) {
	files, sets, err := splitValues(opts)
	if err != nil {
		return nil, err
	}
	ch, err := Load(path)
	if err != nil {
		return nil, err
	}
	return newSession(ch, files, sets, opts, cfg)
}

// placeKey finds the chart whose values.yaml must hold the key: the chart
// whose file sets it, else the subchart the key is under (by alias or
// name, when the subchart is used once), else the chart itself.
func placeKey(c *chart.Chart, path []interface{}) (*chart.Chart, []interface{}) {
	if vals, err := rawValues(c); err == nil {
		var tree interface{}
		if yaml.Unmarshal(vals, &tree) == nil {
			if _, ok := lookup(tree, path); ok {
				return c, path
			}
		}
	}
	name, ok := path[0].(string)
	if !ok || name == "global" || len(path) < 2 || c.Metadata == nil {
		return c, path
	}
	for _, d := range c.Metadata.Dependencies {
		if d == nil || (d.Alias != name && (d.Alias != "" || d.Name != name)) {
			continue
		}
		uses := 0
		for _, o := range c.Metadata.Dependencies {
			if o != nil && o.Name == d.Name {
				uses++
			}
		}
		if uses != 1 {
			break
		}
		for _, sub := range c.Dependencies() {
			if sub.Name() == d.Name {
				return placeKey(sub, path[1:])
			}
		}
	}
	return c, path
}

func rawValues(c *chart.Chart) ([]byte, error) {
	for _, f := range c.Raw {
		if f.Name == chartutil.ValuesfileName {
			return f.Data, nil
		}
	}
	return nil, os.ErrNotExist
}

func setChartValue(c *chart.Chart, path []interface{}, k OverlayKey, edited map[string]bool) error {
	data, _ := rawValues(c)
	var comment []string
	for _, m := range k.Images {
		comment = append(comment, "rehost: "+m.From+" -> "+m.To)
	}
	out, err := setYAML(data, path, k.Value, strings.Join(comment, "\n"))
	if err != nil {
		return err
	}
	// Check the edit: the file sets the value, and parses.
	var tree interface{}
	if err := yaml.Unmarshal(out, &tree); err != nil {
		return fmt.Errorf("the edited file does not parse: %w", err)
	}
	if v, ok := lookup(tree, path); !ok || v != k.Value {
		return fmt.Errorf("the edited file does not set the value (%v)", v)
	}
	replaced := false
	for i, f := range c.Raw {
		if f.Name == chartutil.ValuesfileName {
			c.Raw[i] = &chart.File{Name: f.Name, Data: out}
			replaced = true
		}
	}
	if !replaced {
		c.Raw = append(c.Raw, &chart.File{Name: chartutil.ValuesfileName, Data: out})
	}
	vals, err := chartutil.ReadValues(out)
	if err != nil {
		return err
	}
	c.Values = vals
	edited[c.ChartFullPath()+"/"+chartutil.ValuesfileName] = true
	return nil
}

// relocateAnnotations rewrites the image references of the image
// annotations of the chart and its subcharts.
func relocateAnnotations(c *chart.Chart, m *rewrite.Mapper, edited map[string]bool) error {
	if c.Metadata != nil {
		for _, key := range rendered.ImageAnnotationKeys() {
			text, ok := c.Metadata.Annotations[key]
			if !ok || strings.TrimSpace(text) == "" {
				continue
			}
			out, err := relocateAnnotation(text, m)
			if err != nil {
				return fmt.Errorf("%s/Chart.yaml: annotation %s: %w", c.ChartFullPath(), key, err)
			}
			if out != text {
				c.Metadata.Annotations[key] = out
				edited[c.ChartFullPath()+"/"+chartutil.ChartfileName] = true
			}
		}
	}
	for _, d := range c.Dependencies() {
		if err := relocateAnnotations(d, m, edited); err != nil {
			return err
		}
	}
	return nil
}

func relocateAnnotation(text string, m *rewrite.Mapper) (string, error) {
	var entries []map[string]interface{}
	if err := yaml.Unmarshal([]byte(text), &entries); err != nil {
		return "", err
	}
	data := []byte(text)
	for i, e := range entries {
		ref, ok := e["image"].(string)
		if !ok || ref == "" {
			continue
		}
		mp, err := m.Map(ref)
		if err != nil {
			return "", fmt.Errorf("entry %d: %w", i, err)
		}
		if mp.Action != rewrite.Rewritten {
			continue
		}
		if data, err = setYAML(data, []interface{}{i, "image"}, mp.Target.String(), ""); err != nil {
			return "", fmt.Errorf("entry %d: %w", i, err)
		}
	}
	return string(data), nil
}

// stageChart writes the chart, as a directory or, when output ends in
// .tgz, packaged, into a temporary directory beside output, and returns
// its path and the function that removes the temporary directory.
func stageChart(c *chart.Chart, output string) (string, func(), error) {
	nothing := func() {}
	if abs, err := filepath.Abs(output); err == nil {
		if st, err := os.Stat(abs); err == nil && !st.IsDir() && !strings.HasSuffix(output, ".tgz") {
			return "", nothing, fmt.Errorf("%s exists and is not a directory", output)
		}
	}
	if !strings.HasSuffix(output, ".tgz") {
		if entries, err := os.ReadDir(output); err == nil && len(entries) > 0 {
			return "", nothing, fmt.Errorf("%s exists and is not empty", output)
		} else if err != nil && !errors.Is(err, os.ErrNotExist) {
			return "", nothing, err
		}
	}
	parent := filepath.Dir(filepath.Clean(output))
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return "", nothing, err
	}
	tmp, err := os.MkdirTemp(parent, ".rehost-relocate-*")
	if err != nil {
		return "", nothing, err
	}
	cleanup := func() { os.RemoveAll(tmp) }
	if strings.HasSuffix(output, ".tgz") {
		f, err := saveArchive(c, tmp)
		return f, cleanup, err
	}
	if err := chartutil.SaveDir(c, tmp); err != nil {
		return "", cleanup, err
	}
	return filepath.Join(tmp, c.Name()), cleanup, nil
}
