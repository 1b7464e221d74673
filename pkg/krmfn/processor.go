package krmfn

import (
	"errors"
	"fmt"
	"sort"
	"strconv"

	"github.com/rehost/rehost/pkg/manifest"
	"github.com/rehost/rehost/pkg/rewrite"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Result tags set on info results of rewritten images.
const (
	// TagSource holds the fully qualified source image.
	TagSource = "source"
	// TagTarget holds the fully qualified target image.
	TagTarget = "target"
)

// Processor is the rehost KRM function, a framework.ResourceListProcessor.
// Its zero value is ready to use.
//
//	err := framework.Execute(krmfn.Processor{}, nil) // stdin -> stdout
type Processor struct{}

var _ framework.ResourceListProcessor = Processor{}

// Process rewrites the images of rl.Items in place as configured by
// rl.FunctionConfig and appends its results to rl.Results. When any result
// is an error it returns those error results (a framework.Results) as its
// error; rl.Items are then not to be used, and the results added are the
// errors and warnings only: no info result claims an image rewritten in an
// output the orchestrator discards.
func (Processor) Process(rl *framework.ResourceList) error {
	cfg, err := ParseFunctionConfig(rl.FunctionConfig)
	if err != nil {
		return fail(rl, framework.Results{{Message: err.Error(), Severity: framework.Error, ResourceRef: ref(rl.FunctionConfig)}})
	}
	var warnings []error
	rw, err := manifest.New(cfg, manifest.WithWarnings(func(err error) { warnings = append(warnings, err) }))
	if err != nil {
		return fail(rl, framework.Results{{Message: err.Error(), Severity: framework.Error, ResourceRef: ref(rl.FunctionConfig)}})
	}

	filter := Filter(rw)
	// Items go through the filter one at a time: a ConfigMap holding an
	// image that a later item's container receives through $(VAR) must
	// be known first.
	for _, item := range rl.Items {
		rw.ScanEnvImagesNode(item.YNode())
	}
	seen := occurrenceCursor{}
	seenCharts := chartCursor{}
	var errs framework.Results
	first := len(rl.Results)
	for _, item := range rl.Items {
		warnings = warnings[:0]
		settings := len(rw.Settings())
		_, err := filter.Filter([]*yaml.RNode{item})
		id, file := ref(item), fileOf(item)
		for _, e := range flatten(err) {
			r := itemResult(e, framework.Error, id, file)
			errs = append(errs, r)
			rl.Results = append(rl.Results, r)
		}
		for _, w := range warnings {
			rl.Results = append(rl.Results, itemResult(w, framework.Warning, id, file))
		}
		for _, o := range seen.next(rw.Images()) {
			if o.Action != rewrite.Rewritten {
				continue
			}
			msg := fmt.Sprintf("image %s rewritten to %s", o.Source, o.Target)
			if o.Location.Guessed {
				msg += " (found by its key's name: guessed)"
			}
			rl.Results = append(rl.Results, &framework.Result{
				Message:     msg,
				Severity:    framework.Info,
				ResourceRef: id,
				Field:       &framework.Field{Path: o.Location.Field},
				File:        file,
				Tags:        map[string]string{TagSource: o.Source, TagTarget: o.Target},
			})
		}
		for _, c := range seenCharts.next(rw.Charts()) {
			if c.Action != rewrite.Rewritten {
				continue
			}
			msg := fmt.Sprintf("chart source %s rewritten to %s", c.Source, c.Target)
			switch {
			case c.Location.TypeAdded:
				msg += " (spec.type: oci added)"
			case c.Location.TypeWas != "":
				msg += fmt.Sprintf(" (spec.type: oci set, was %s)", c.Location.TypeWas)
			}
			rl.Results = append(rl.Results, &framework.Result{Message: msg, Severity: framework.Info, ResourceRef: id, Field: &framework.Field{Path: c.Location.Field}, File: file})
		}
		for _, st := range rw.Settings()[settings:] {
			if msg := st.Message(); msg != "" {
				msg += " (" + KeyNoAddRegistry + ": true in the function config leaves it out)"
				rl.Results = append(rl.Results, &framework.Result{Message: msg, Severity: framework.Info, ResourceRef: id, Field: &framework.Field{Path: st.Location.Field}, File: file})
			}
		}
	}
	if len(errs) > 0 {
		kept := rl.Results[:first]
		for _, r := range rl.Results[first:] {
			if r.Severity != framework.Info {
				kept = append(kept, r)
			}
		}
		rl.Results = kept
		return errs
	}
	// The run's findings (the same the CLI reports), as warnings.
	sum := rw.Summary()
	if g := sum.Guessed; g != nil { // on the resource of the first guessed image
		msg := g.Error() + "; " + KeyNoGuessImages + ": true in the function config leaves them as written, imageFields in a RewriteConfig makes them known"
		rl.Results = append(rl.Results, &framework.Result{Message: msg, Severity: framework.Warning, ResourceRef: locationRef(g.First), Field: &framework.Field{Path: g.First.Field}})
	}
	if left := sum.EmbeddedLeftOut; len(left) > 0 {
		// On the resource of the first reference left out.
		msg := manifest.EmbeddedSummary(left, "rewritten", "rewriteEmbedded: true in the config rewrites them")
		rl.Results = append(rl.Results, &framework.Result{Message: msg, Severity: framework.Warning, ResourceRef: locationRef(left[0].Occurrences[0]), Field: &framework.Field{Path: left[0].Occurrences[0].Field}})
	}
	for _, n := range sum.Operators {
		msg := n.Message() + ": list them in an imageList file beside the manifests so that rehost mirror copies them"
		rl.Results = append(rl.Results, &framework.Result{Message: msg, Severity: framework.Warning, ResourceRef: locationRef(n.Location)})
	}

	if cfg.ImageList != nil {
		list := pulledFromTarget(rw.Images())
		cm, err := setImageList(&rl.Items, cfg.ImageList.ConfigMapName, list)
		if err != nil {
			return fail(rl, framework.Results{{Message: fmt.Sprintf("image list ConfigMap %s: %v", cfg.ImageList.ConfigMapName, err), Severity: framework.Error}})
		}
		rl.Results = append(rl.Results, &framework.Result{
			Message:     fmt.Sprintf("image list written to data.%s: %d images", ImageListKey, len(list)),
			Severity:    framework.Info,
			ResourceRef: ref(cm),
		})
	}
	return nil
}

// fail appends the error results to rl and returns them as the error.
func fail(rl *framework.ResourceList, errs framework.Results) error {
	rl.Results = append(rl.Results, errs...)
	return errs
}

// occurrence is one occurrence of an image.
type occurrence struct {
	Source, Target string
	Action         rewrite.Action
	Location       rewrite.Location
}

// occurrenceCursor finds the occurrences added to a Rewriter's image set
// since its last call: the image set only grows, each image's occurrences
// in the order they were added.
type occurrenceCursor map[string]int

func (c occurrenceCursor) next(images []rewrite.Image) []occurrence {
	var out []occurrence
	for _, img := range images {
		for _, loc := range img.Occurrences[c[img.Source]:] {
			out = append(out, occurrence{Source: img.Source, Target: img.Target, Action: img.Action, Location: loc})
		}
		c[img.Source] = len(img.Occurrences)
	}
	// Images come sorted by source: report by field path instead.
	sort.SliceStable(out, func(i, j int) bool { return pathLess(out[i].Location.Field, out[j].Location.Field) })
	return out
}

// chartOccurrence is one place of a chart source.
type chartOccurrence struct {
	Source, Target string
	Action         rewrite.Action
	Location       manifest.ChartLocation
}

// chartCursor finds the chart source locations added to a Rewriter since
// its last call, as occurrenceCursor does for images.
type chartCursor map[[2]string]int

func (c chartCursor) next(charts []manifest.ChartSource) []chartOccurrence {
	var out []chartOccurrence
	for _, cs := range charts {
		k := [2]string{cs.Source, cs.Target}
		for _, loc := range cs.Locations[c[k]:] {
			out = append(out, chartOccurrence{Source: cs.Source, Target: cs.Target, Action: cs.Action, Location: loc})
		}
		c[k] = len(cs.Locations)
	}
	sort.SliceStable(out, func(i, j int) bool { return pathLess(out[i].Location.Field, out[j].Location.Field) })
	return out
}

// pathLess orders field paths with list indexes compared as numbers, so
// containers[2] comes before containers[10].
func pathLess(a, b string) bool {
	for a != "" && b != "" {
		da, db := digits(a), digits(b)
		if da > 0 && db > 0 {
			// Indexes have no leading zeros: the shorter is the smaller.
			if da != db {
				return da < db
			}
			if a[:da] != b[:db] {
				return a[:da] < b[:db]
			}
			a, b = a[da:], b[db:]
			continue
		}
		if a[0] != b[0] {
			return a[0] < b[0]
		}
		a, b = a[1:], b[1:]
	}
	return len(a) < len(b)
}

// digits is the length of the run of ASCII digits s starts with.
func digits(s string) int {
	n := 0
	for n < len(s) && s[n] >= '0' && s[n] <= '9' {
		n++
	}
	return n
}

// itemResult is the result for an error or warning about one item. A
// *manifest.Error's location is carried by the resource reference and the
// field, so its message is the cause alone.
func itemResult(err error, sev framework.Severity, id *yaml.ResourceIdentifier, file *framework.File) *framework.Result {
	r := &framework.Result{Message: err.Error(), Severity: sev, ResourceRef: id, File: file}
	var me *manifest.Error
	var ce *rewrite.CollisionError
	switch {
	case errors.As(err, &ce):
		// Names both sources and where they occur; this item holds the second.
		r.Message = ce.Error() + " (pathStyle: nest in the function config)"
		r.Field = &framework.Field{Path: ce.Second.Location.Field}
	case errors.As(err, &me):
		r.Message = me.Err.Error()
		r.Field = &framework.Field{Path: me.Location.Field}
	}
	return r
}

// flatten splits an errors.Join tree into its leaves.
func flatten(err error) []error {
	if err == nil {
		return nil
	}
	j, ok := err.(interface{ Unwrap() []error })
	if !ok {
		return []error{err}
	}
	var out []error
	for _, e := range j.Unwrap() {
		out = append(out, flatten(e)...)
	}
	return out
}

// ref is the resource reference of a node, nil for none.
func ref(rn *yaml.RNode) *yaml.ResourceIdentifier {
	if rn.IsNilOrEmpty() {
		return nil
	}
	return &yaml.ResourceIdentifier{
		TypeMeta: yaml.TypeMeta{APIVersion: rn.GetApiVersion(), Kind: rn.GetKind()},
		NameMeta: yaml.NameMeta{Name: rn.GetName(), Namespace: rn.GetNamespace()},
	}
}

// fileOf is the file an item was read from, nil when unknown.
func fileOf(rn *yaml.RNode) *framework.File {
	p, i, err := kioutil.GetFileAnnotations(rn)
	if err != nil || p == "" {
		return nil
	}
	idx, _ := strconv.Atoi(i)
	return &framework.File{Path: p, Index: idx}
}

// locationRef is the resource reference of a location (kind, namespace
// and name; the location holds no apiVersion).
func locationRef(l rewrite.Location) *yaml.ResourceIdentifier {
	return &yaml.ResourceIdentifier{
		TypeMeta: yaml.TypeMeta{Kind: l.Kind},
		NameMeta: yaml.NameMeta{Name: l.Name, Namespace: l.Namespace},
	}
}

// pulledFromTarget returns the images the cluster pulls from the target
// registry: those that move there (rehost images lists them) and those
// there already, so that a second run over the function's own output,
// whose images are all in the target, keeps the list. Excluded images
// stay where they are and are not in it.
func pulledFromTarget(images []rewrite.Image) []string {
	var out []string
	for _, img := range images {
		if img.Action != rewrite.Excluded {
			out = append(out, img.Source)
		}
	}
	return out
}
