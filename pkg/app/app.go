// Package app lists, in one call, the images of an application as sealer
// lays it out: a directory (or a list of paths) of manifests (*.yaml,
// *.yml, *.json), Helm charts (directories holding a Chart.yaml, packaged
// .tgz charts) and hand-kept imageList files, one image reference a line.
//
// The package does not import Helm: the caller renders charts with its own
// Helm, through a [Renderer] it gives ([rendered.FromTemplates] turns the
// output of any Helm version's template engine into a [rendered.Chart];
// package github.com/rehost/rehost/pkg/helm gives one on Helm 3.22).
// Without a Renderer, a chart's images are those its Chart.yaml image
// annotations declare, and a warning says the chart was not rendered.
//
// Listing decides nothing about the target registry: two images that
// would meet in one target repository are both listed (with a warning),
// and images already in the target registry are listed too.
package app

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/rehost/rehost/pkg/manifest"
	"github.com/rehost/rehost/pkg/rendered"
	"github.com/rehost/rehost/pkg/rewrite"
)

// Renderer renders a Helm chart for List.
type Renderer interface {
	// Render renders the chart directory or packaged chart (.tgz) at path
	// as `helm template --include-crds` does, hooks included. Manifest
	// names start with the chart's name, as Helm names templates.
	Render(path string) (*rendered.Chart, error)
}

// RenderFunc adapts a function to Renderer.
type RenderFunc func(path string) (*rendered.Chart, error)

// Render calls f.
func (f RenderFunc) Render(path string) (*rendered.Chart, error) { return f(path) }

// Options configure List. The zero value lists with the default registry
// and no renderer.
type Options struct {
	// Config is the mapping: target registry, exclusions, image fields of
	// custom kinds, SkipInvalid (invalid references in manifests, image
	// lists and annotations are warnings, and skipped).
	Config rewrite.Config
	// Renderer renders charts; nil lists a chart's annotation images only.
	Renderer Renderer
	// Warn receives the warnings; nil discards them.
	Warn func(error)
	// ListEmbedded lists the image references embedded in string values
	// (container args, env values, ConfigMap data) too; by default only
	// the named ones (--*-image=, *_IMAGE) are.
	ListEmbedded bool
}

// Image is one image of the application.
type Image struct {
	// Image is the reference fully qualified,
	// "docker.io/library/nginx:1.25": what to pull and cache.
	Image string `json:"image"`
	// Written are its spellings in the inputs, "nginx:1.25", sorted.
	Written []string `json:"written"`
	// Target is the reference the cluster pulls once rewritten,
	// "sea.hub:5000/library/nginx:1.25"; Image itself when Action is
	// InTarget or Excluded.
	Target string         `json:"target"`
	Action rewrite.Action `json:"action"`
	// Occurrences are where it occurs. File is a path on disk: the
	// manifest, the imageList, the chart's template
	// ("app/charts/web/templates/deployment.yaml", inside a packaged chart
	// "app/web-1.0.0.tgz/templates/deployment.yaml") or its Chart.yaml.
	Occurrences []rewrite.Location `json:"occurrences"`
}

// Listing is what List finds.
type Listing struct {
	// Images are the images to cache, sorted by Image: those that move to
	// the target registry, and those written in it already (Action
	// InTarget), which the cluster pulls as written.
	Images []Image `json:"images"`
	// Excluded are the images Config.Exclude leaves where they are.
	Excluded []Image `json:"excluded,omitempty"`
}

// ToCache returns the images to cache, fully qualified: one Image a line
// of a sealer imageList.
func (l *Listing) ToCache() []string {
	out := make([]string, len(l.Images))
	for i, img := range l.Images {
		out[i] = img.Image
	}
	return out
}

// List lists the images of the application at paths: each path a file or
// a directory, walked as manifest.ExpandPaths walks it (a directory
// without manifests, charts or image lists adds nothing; a missing path is
// an error). Every input is read, and their errors are returned together,
// each naming its file and line; a Listing is returned only without
// error.
func List(paths []string, opts Options) (*Listing, error) {
	warn := opts.Warn
	if warn == nil {
		warn = func(error) {}
	}
	ro := []manifest.Option{manifest.ListOnly(), manifest.WithWarnings(warn)}
	if opts.ListEmbedded {
		ro = append(ro, manifest.ListEmbedded())
	}
	rw, err := manifest.New(opts.Config, ro...)
	if err != nil {
		return nil, err
	}
	inputs, err := manifest.ExpandPaths(paths)
	if err != nil && !errors.Is(err, manifest.ErrNoInputs) {
		return nil, err
	}
	// A ConfigMap may hold an image that a container of another file
	// receives through $(VAR): scan the manifests for such references
	// before the first is read (charts scan their own, renderChart;
	// regular files only: a FIFO read now would be gone).
	for _, in := range inputs {
		if info, err := os.Stat(in.Path); err == nil && info.Mode().IsRegular() && !in.Chart && !in.ImageList {
			if err := readFile(in.Path, func(f *os.File) error { return rw.ScanEnvImages(f) }); err != nil {
				return nil, err
			}
		}
	}
	var errs []error
	for _, in := range inputs {
		var err error
		switch {
		case in.Path == "-":
			err = errors.New("-: standard input is not an application path")
		case in.Chart && opts.Renderer != nil:
			err = renderChart(rw, in.Path, opts.Renderer)
		case in.Chart:
			err = annotationsOnly(rw, in.Path)
		case in.ImageList:
			err = readFile(in.Path, func(f *os.File) error { return rw.ReadImageList(f, in.Path) })
		default:
			err = readFile(in.Path, func(f *os.File) error { return rw.Rewrite(nil, f, in.Path) })
		}
		if err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	// The run's findings, the same rehost images reports.
	sum := rw.Summary()
	if sum.Guessed != nil { // still a *manifest.GuessedImages to errors.As
		warn(fmt.Errorf("%w (Guessed in their Image.Occurrences); Options.Config.NoGuessImages leaves them as written, Options.Config.ImageFields makes them known", sum.Guessed))
	}
	for _, n := range sum.Operators {
		warn(errors.New(n.Message() + ": list them in a file named imageList among the paths so that they are mirrored"))
	}
	if msg := manifest.EmbeddedSummary(sum.EmbeddedLeftOut, "listed", "app.Options.ListEmbedded lists them"); msg != "" {
		warn(errors.New(msg))
	}
	out := &Listing{Images: []Image{}}
	for _, img := range rw.Images() {
		i := Image{Image: img.Source, Target: img.Target, Action: img.Action, Occurrences: img.Occurrences}
		seen := map[string]bool{}
		for _, o := range img.Occurrences {
			if !seen[o.Value] {
				seen[o.Value] = true
				i.Written = append(i.Written, o.Value)
			}
		}
		sort.Strings(i.Written)
		if img.Action == rewrite.Excluded {
			out.Excluded = append(out.Excluded, i)
		} else {
			out.Images = append(out.Images, i)
		}
	}
	return out, nil
}

// renderChart lists the images of the chart at path as r renders it.
func renderChart(rw *manifest.Rewriter, path string, r Renderer) error {
	c, err := r.Render(path)
	if err != nil {
		return fmt.Errorf("rendering chart %s: %w", path, err)
	}
	for _, msg := range c.Warnings {
		rw.Warn(fmt.Errorf("%s: %s", path, msg))
	}
	if err := addAnnotated(rw, path, c.Name, c.Images); err != nil {
		return err
	}
	if err := c.ScanEnvImages(rw); err != nil {
		return err
	}
	var errs []error
	for _, m := range c.Manifests {
		if err := rw.RewriteAt(nil, strings.NewReader(m.Content), onDisk(path, c.Name, m.Name), max(m.Line, 1)); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// annotationsOnly lists the images of the image annotations of the chart
// at path and of all its subcharts, with a warning that it was not
// rendered.
func annotationsOnly(rw *manifest.Rewriter, path string) error {
	meta, err := readChart(path)
	if err != nil {
		return err
	}
	imgs, err := meta.AnnotatedImages()
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	rw.Warn(fmt.Errorf("%s: chart not rendered (no renderer): %d image(s) listed from the image annotations of its Chart.yaml files (conditions not evaluated, every subchart read), none from its templates", path, len(imgs)))
	return addAnnotated(rw, path, meta.Name, imgs)
}

// addAnnotated adds the images of a chart's annotations, located in its
// Chart.yaml files on disk.
func addAnnotated(rw *manifest.Rewriter, path, chart string, imgs []rendered.AnnotatedImage) error {
	var errs []error
	for _, a := range imgs {
		loc := a.Location()
		loc.File = onDisk(path, chart, loc.File)
		if err := rw.Add(a.Image, loc); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// onDisk turns the name of a chart's file, as Helm names it from the
// chart's name ("web/templates/deployment.yaml"), into its path under the
// chart's path on disk.
func onDisk(path, chart, name string) string {
	rest, ok := strings.CutPrefix(name, chart+"/")
	if !ok {
		rest = name
	}
	return filepath.Join(path, filepath.FromSlash(rest))
}

func readFile(path string, fn func(*os.File) error) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return fn(f)
}
