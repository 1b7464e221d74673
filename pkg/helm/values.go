package helm

import (
	"fmt"
	"strconv"

	"github.com/rehost/rehost/pkg/helm/internal/airgap"
	"github.com/rehost/rehost/pkg/helm/internal/valuetree"
	"github.com/rehost/rehost/pkg/rendered"
	"github.com/rehost/rehost/pkg/rewrite"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/cli/values"
	"helm.sh/helm/v3/pkg/getter"
)

// Overlay is a values overlay that makes a chart render its images in the
// target registry: rendering the chart with the user's values followed by
// the overlay gives what rewriting the chart's rendering gives, document by
// document, hooks included. It is the result of [AirgapValues].
type Overlay struct {
	// Chart and Version name the chart.
	Chart, Version string
	// Keys are the values the overlay sets, sorted by path.
	Keys []OverlayKey
	// Unmoved are the image fields the overlay cannot move (images
	// hard-coded in a template, or built so that no value can produce the
	// target): a post-renderer must rewrite them.
	Unmoved []UnmovedImage
	// Warnings are Helm's warnings about the chart and the user's values,
	// from rendering the chart as given.
	Warnings []string
	// Candidates is how many values were probed, Alone how many of them
	// were probed in a render of their own, Renders how many times the
	// chart was rendered in all (see [AirgapValues] for the bound).
	Candidates, Alone, Renders int

	cfg  rewrite.Config
	tree map[string]interface{}
}

// OverlayKey is one value the overlay sets.
type OverlayKey struct {
	// Path is the key's path from the top of the values: strings for map
	// keys, ints for list items. A key inside a list makes the overlay
	// hold the whole list (Helm replaces lists, it does not merge them).
	Path []interface{}
	// Value is the value it sets; Was the value it had (empty when the key
	// was absent or empty).
	Value, Was string
	// Images are the images it relocates, sorted.
	Images []Move
	// Why says why a key that relocates no image is set: the switch of
	// a chart family that verifies its images (see families), set only
	// when the render with the relocated values fails that check.
	Why string

	raw interface{} // Value as set, when it is not a string (a switch)
}

// Move is an image that a value relocates: its reference as rendered and
// its target. For an operator's registry setting that is absent or empty
// (which rehost rewrite adds), From says which. With are the other keys
// the image needs set too (a registry and a repository), sorted.
type Move struct {
	From, To string
	With     []string
}

// String is "FROM -> TO", and ", with KEY, ..." when other keys move it
// too.
func (m Move) String() string { return airgap.Move(m).String() }

// UnmovedImage is an image field that no value moves.
type UnmovedImage struct {
	// Image is the reference as rendered, Target where rehost rewrite
	// sends it.
	Image, Target string
	// Template is the template file that rendered it
	// ("mychart/templates/job.yaml"), and Line the line of that file that
	// writes the reference, when it is written there literally (0 when it
	// is built elsewhere, in a helper for instance).
	Template string
	Line     int
	// Kind, Namespace, Name and Field identify the image field.
	Kind, Namespace, Name, Field string
	// Reason says why no value moves it.
	Reason string
}

// Object is "Kind namespace/name", as far as known.
func (u UnmovedImage) Object() string {
	obj := u.Kind
	if u.Name != "" {
		obj += " "
		if u.Namespace != "" {
			obj += u.Namespace + "/"
		}
		obj += u.Name
	}
	return obj
}

// String is "TEMPLATE:LINE: OBJECT: FIELD: IMAGE (-> TARGET): REASON".
func (u UnmovedImage) String() string {
	where := u.Template
	if u.Line > 0 {
		where += ":" + strconv.Itoa(u.Line)
	}
	return fmt.Sprintf("%s: %s: %s: %s (-> %s): %s", where, u.Object(), u.Field, u.Image, u.Target, u.Reason)
}

// Complete reports whether the overlay moves every image.
func (o *Overlay) Complete() bool { return len(o.Unmoved) == 0 }

// PathString formats a key path as "a.b[0].c"; keys holding dots or
// brackets are quoted.
func PathString(p []interface{}) string { return valuetree.PathString(p) }

// AirgapValues finds the values overlay that makes the chart at path,
// rendered with opts, pull every image from where cfg maps it, without a
// post-renderer (hooks included). It renders the chart in process: as
// given, then with markers in place of candidate values to learn which
// image fields each drives, then with the keys chosen, to check them
// against the chart's rewritten rendering, document by document. It
// renders at most N + 12 times for N candidate values, never more than
// [MaxRenders]; the search is described in pkg/helm/internal/airgap. The
// images no value moves are in Overlay.Unmoved: that is not an error.
//
// The overlay goes after the user's values files and before the --set
// values, which Helm applies after every file (`helm install -f user.yaml
// -f airgap-values.yaml --set k=v`): a --set value wins over the overlay,
// and AirgapValues takes that into account.
func AirgapValues(path string, opts Options, cfg rewrite.Config) (*Overlay, error) {
	s, err := searchFor(path, opts, cfg)
	if err != nil {
		return nil, err
	}
	return solve(s, cfg)
}

// splitValues merges the user's values files, and apart from them the
// --set values, which Helm applies after every file.
func splitValues(opts Options) (files, sets map[string]interface{}, err error) {
	fileOpts := values.Options{ValueFiles: opts.Values.ValueFiles}
	if files, err = fileOpts.MergeValues(getter.Providers{}); err != nil {
		return nil, nil, err
	}
	setOpts := opts.Values
	setOpts.ValueFiles = nil
	if sets, err = setOpts.MergeValues(getter.Providers{}); err != nil {
		return nil, nil, err
	}
	return files, sets, nil
}

// AirgapValuesChart is [AirgapValues] for a loaded chart and the user's
// values, as merged from values files (opts.Values is not used). The chart
// is not modified.
func AirgapValuesChart(ch *chart.Chart, vals map[string]interface{}, opts Options, cfg rewrite.Config) (*Overlay, error) {
	s, err := newSearch(ch, vals, nil, opts, cfg)
	if err != nil {
		return nil, err
	}
	return solve(s, cfg)
}

// MaxRenders is the most times [AirgapValues] renders a chart.
const MaxRenders = airgap.DefaultMaxRenders

// searchFor prepares the search for the overlay of the chart at path.
func searchFor(path string, opts Options, cfg rewrite.Config) (*airgap.Search, error) {
	files, sets, err := splitValues(opts)
	if err != nil {
		return nil, err
	}
	ch, warnings, err := load(path)
	if err != nil {
		return nil, err
	}
	s, err := newSearch(ch, files, sets, opts, cfg)
	if err != nil {
		return nil, err
	}
	s.AddWarnings(warnings)
	return s, nil
}

// newSearch prepares the search for the overlay of a loaded chart: it
// renders the chart as given. Every render of the search skips locating
// lines (a second template pass the probes do not need).
func newSearch(ch *chart.Chart, files, sets map[string]interface{}, opts Options, cfg rewrite.Config) (*airgap.Search, error) {
	opts.skipLocate = true
	return airgap.New(airgap.Chart{
		Source: ch,
		Files:  files,
		Sets:   sets,
		Render: func(vals map[string]interface{}) (*rendered.Chart, error) {
			return RenderChart(cloneChart(ch), vals, opts)
		},
		// Helm logs its warnings about values with the global logger: the
		// render as given reported them already (Overlay.Warnings).
		Resolve: func(vals map[string]interface{}) (*chart.Chart, map[string]interface{}, error) {
			resolved := cloneChart(ch)
			var merged map[string]interface{}
			_, err := captureLog(func() error {
				if err := chartutil.ProcessDependenciesWithMerge(resolved, vals); err != nil {
					return err
				}
				m, err := chartutil.CoalesceValues(resolved, vals)
				if err != nil {
					return err
				}
				merged = m.AsMap()
				return nil
			})
			return resolved, merged, err
		},
	}, cfg)
}

// solve runs the search and words its result as an Overlay.
func solve(s *airgap.Search, cfg rewrite.Config) (*Overlay, error) {
	r, err := s.Solve()
	if err != nil {
		return nil, err
	}
	o := &Overlay{Chart: r.Chart, Version: r.Version, Warnings: r.Warnings,
		Candidates: r.Candidates, Alone: r.ProbedAlone, Renders: r.Renders, cfg: cfg, tree: r.Overlay}
	for _, k := range r.Keys {
		ok := OverlayKey{Path: k.Path, Value: k.Value, Was: k.Was, Why: k.Why, raw: k.Raw}
		for _, m := range k.Images {
			ok.Images = append(ok.Images, Move(m))
		}
		o.Keys = append(o.Keys, ok)
	}
	for _, u := range r.Unmoved {
		o.Unmoved = append(o.Unmoved, UnmovedImage(u))
	}
	return o, nil
}

// lookup returns the value at path in the values tree.
func lookup(v interface{}, path []interface{}) (interface{}, bool) { return valuetree.Lookup(v, path) }

// settings are the settings that set the keys.
func settings(keys []OverlayKey) []airgap.Setting {
	var out []airgap.Setting
	for _, k := range keys {
		out = append(out, airgap.Setting{Path: k.Path, Value: k.Value, Raw: k.raw})
	}
	return out
}
