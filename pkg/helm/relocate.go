package helm

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/rehost/rehost/internal/safefile"
	"github.com/rehost/rehost/pkg/helm/internal/airgap"
	"github.com/rehost/rehost/pkg/helm/internal/valuetree"
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
	s, err := searchFor(path, opts, cfg)
	if err != nil {
		return nil, err
	}
	o, err := solve(s, cfg)
	if err != nil {
		return nil, err
	}
	mapper, err := rewrite.NewMapper(cfg)
	if err != nil {
		return nil, err
	}
	// A chart family's switch is merged only when the relocated chart
	// fails the family's check without it: a Bitnami chart whose image
	// annotation names the target passes it.
	var keys, switches []OverlayKey
	for _, k := range o.Keys {
		if k.Why != "" {
			switches = append(switches, k)
		} else {
			keys = append(keys, k)
		}
	}
	want, err := s.Render(o.tree)
	if err != nil {
		return nil, err
	}
	var (
		staged  string
		cleanup = func() {}
		edited  []string
		got     *rendered.Chart
	)
	defer func() { cleanup() }()
	for {
		cleanup()
		var ch *chart.Chart
		if ch, edited, err = relocatedChart(path, keys, mapper); err != nil {
			return nil, err
		}
		// Write beside the output, check, then move into place: on
		// any error nothing is left at output.
		if staged, cleanup, err = stageChart(ch, output); err != nil {
			return nil, err
		}
		got, err = Render(staged, opts)
		if f := airgap.FailedFamily(err); f != nil {
			if k, ok := switchFor(switches, f); ok {
				keys, switches = append(keys, k), nil
				continue
			}
		}
		if err != nil {
			return nil, fmt.Errorf("rendering the relocated chart: %w", err)
		}
		break
	}
	if len(switches) > 0 {
		o = without(s, o, switches)
	}
	rel := &Relocated{Overlay: o, Output: output, Edited: edited}
	if len(got.Manifests) != len(want.Manifests) {
		return nil, fmt.Errorf("the relocated chart renders %d documents, the chart with the overlay %d", len(got.Manifests), len(want.Manifests))
	}
	for i := range got.Manifests {
		g, w := got.Manifests[i], want.Manifests[i]
		if g.Name == w.Name && (g.Content == w.Content || s.Volatile(i) && s.SameImageFields(g.Content, w.Content)) {
			continue
		}
		return nil, fmt.Errorf("the relocated chart renders %s otherwise than the chart with the overlay (do your values files set a key the overlay sets?)", g.Name)
	}
	if err := publishChart(staged, output); err != nil {
		return nil, err
	}
	return rel, nil
}

// publishChart moves the staged chart to output. A packaged chart goes
// through safefile: a regular file is replaced (keeping its mode and
// owner), a device, FIFO or link (/dev/stdout) is written into. A
// directory replaces the empty directory at output, never a link.
func publishChart(staged, output string) error {
	if strings.HasSuffix(output, ".tgz") {
		d, err := safefile.Inspect(output)
		if err != nil {
			return err
		}
		if d.Existing != nil && !d.Direct() {
			if err := safefile.Keep(staged, d.Existing, true); err != nil {
				return err
			}
		}
		return safefile.Publish(staged, d)
	}
	if st, err := os.Lstat(output); err == nil && st.Mode()&fs.ModeSymlink != 0 {
		return fmt.Errorf("%s is a symbolic link: give the directory it names", output)
	}
	// An empty directory at output is replaced.
	if err := os.Remove(output); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return os.Rename(staged, output)
}

// relocatedChart loads the chart at path (as loaded, not as processed for
// rendering) and merges the keys into its values files and the target
// references into its image annotations; it returns the chart and the
// files it edited.
func relocatedChart(path string, keys []OverlayKey, mapper *rewrite.Mapper) (*chart.Chart, []string, error) {
	ch, err := Load(path)
	if err != nil {
		return nil, nil, err
	}
	edited := map[string]bool{}
	for _, k := range keys {
		c, p := placeKey(ch, k.Path)
		if err := setChartValue(c, p, k, edited); err != nil {
			return nil, nil, fmt.Errorf("relocating %s: %s/values.yaml: %s: %w", path, c.ChartFullPath(), PathString(p), err)
		}
	}
	if err := relocateAnnotations(ch, mapper, edited); err != nil {
		return nil, nil, err
	}
	var out []string
	for f := range edited {
		out = append(out, f)
	}
	sort.Strings(out)
	return ch, out, nil
}

// switchFor returns the key of the family's switch.
func switchFor(keys []OverlayKey, f *airgap.Family) (OverlayKey, bool) {
	for _, k := range keys {
		if valuetree.SamePath(k.Path, f.Path) {
			return k, true
		}
	}
	return OverlayKey{}, false
}

// without returns the overlay without the keys given.
func without(s *airgap.Search, o *Overlay, drop []OverlayKey) *Overlay {
	out := *o
	out.Keys = nil
	for _, k := range o.Keys {
		keep := true
		for _, d := range drop {
			if valuetree.SamePath(k.Path, d.Path) {
				keep = false
			}
		}
		if keep {
			out.Keys = append(out.Keys, k)
		}
	}
	out.tree = s.Overlay(settings(out.Keys))
	return &out
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

// lookupYAML returns the value at path in a YAML values file.
func lookupYAML(data []byte, path []interface{}) (interface{}, bool) {
	var tree interface{}
	if yaml.Unmarshal(data, &tree) != nil {
		return nil, false
	}
	return lookup(tree, path)
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
	if k.Why != "" {
		comment = append(comment, "rehost: "+k.Why)
	}
	for _, m := range k.Images {
		comment = append(comment, "rehost: "+m.String())
	}
	value := interface{}(k.Value)
	if k.raw != nil {
		value = k.raw
	}
	// Helm reads a repeated key's last value (its values files go through
	// a YAML-to-JSON conversion), which an edit of the bytes cannot be
	// sure to reach: such a file is refused, before any edit, saying why.
	var before interface{}
	if err := yaml.Unmarshal(data, &before); err != nil {
		var te *yaml.TypeError
		if errors.As(err, &te) && len(te.Errors) > 0 && strings.Contains(te.Errors[0], "already defined") {
			return fmt.Errorf("%s: Helm reads the last value of a repeated key: remove the others so that the file says one thing", te.Errors[0])
		}
		return fmt.Errorf("the file does not parse: %w", err)
	}
	_, existed := lookupYAML(data, path)
	out, err := setYAML(data, path, value, strings.Join(comment, "\n"))
	if err != nil {
		return err
	}
	if existed && k.Why != "" {
		// A switch replaced in place keeps the reason beside it.
		out = commentKeyLine(out, path, "rehost: "+k.Why)
	}
	// Check the edit: the file sets the value, and parses.
	var tree interface{}
	if err := yaml.Unmarshal(out, &tree); err != nil {
		return fmt.Errorf("the edited file does not parse: %w", err)
	}
	if v, ok := lookup(tree, path); !ok || v != value {
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
	if d, err := safefile.Inspect(output); err == nil && d.Direct() && strings.HasSuffix(output, ".tgz") {
		parent = os.TempDir() // written into, not renamed: any file system
	}
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
