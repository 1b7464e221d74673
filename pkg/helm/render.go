package helm

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/rehost/rehost/internal/bounded"
	"github.com/rehost/rehost/internal/chartarchive"
	"github.com/rehost/rehost/internal/safefile"
	"github.com/rehost/rehost/pkg/helm/internal/valuetree"
	"github.com/rehost/rehost/pkg/manifest"
	"github.com/rehost/rehost/pkg/rendered"
	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/cli/values"
	"helm.sh/helm/v3/pkg/getter"
)

// DefaultReleaseName is the release name `helm template` renders with when
// none is given.
const DefaultReleaseName = "release-name"

// DefaultNamespace is the namespace charts render into when none is given,
// as with Helm.
const DefaultNamespace = "default"

// DefaultKubeVersion is the Kubernetes version charts are rendered for
// when Options.KubeVersion is empty: the one of the Kubernetes libraries
// Helm is built with (see [rendered.DefaultKubeVersion]), not Helm's own
// default v1.20.0, which most current charts reject.
const DefaultKubeVersion = rendered.DefaultKubeVersion

// ErrKubeVersion is wrapped by the error of a chart whose kubeVersion
// constraint (Chart.yaml) the Kubernetes version rendered for does not
// satisfy.
var ErrKubeVersion = errors.New("the chart does not support this Kubernetes version")

// ErrMissingDependencies is wrapped by the error of a chart whose
// Chart.yaml declares dependencies that are missing from its charts/
// directory.
var ErrMissingDependencies = errors.New("missing chart dependencies")

// Options are the rendering options, with the meaning of the `helm template`
// flags of the same names. The zero value renders as `helm template
// --include-crds` does.
type Options struct {
	// ReleaseName is .Release.Name; default [DefaultReleaseName].
	ReleaseName string
	// Namespace is .Release.Namespace; default [DefaultNamespace].
	Namespace string
	// KubeVersion is .Capabilities.KubeVersion ("1.33.0"), and the version
	// a chart's kubeVersion constraint must accept; default
	// [DefaultKubeVersion].
	KubeVersion string
	// APIVersions are added to .Capabilities.APIVersions.
	APIVersions []string
	// Values are the -f/--values files and the --set, --set-string,
	// --set-file, --set-json and --set-literal values. Files are read from
	// the local file system only ("-" is standard input); URLs are not
	// fetched.
	Values values.Options
	// SkipCRDs leaves out the CRDs of the charts' crds/ directories
	// (`helm template` without --include-crds).
	SkipCRDs bool
	// SkipTests leaves out the test hooks (helm.sh/hook: test).
	SkipTests bool
	// Draft, when set, is called with the CRD files and the documents of
	// the chart's templates as soon as they are rendered, before Helm
	// sorts them (which parses each one and takes most of the time of
	// rendering): the caller can start working on them
	// (rendered.Draft.Prepare). It is called on a goroutine of its own,
	// while Render still runs and captures Helm's log: it must not call
	// this package's rendering functions (they would wait for it), what it
	// writes with the standard logger becomes Helm's warnings, and a
	// panic of it is Render's. Render returns after it does. It is not
	// called when the templates do not render.
	Draft func(*rendered.Draft)

	// skipLocate leaves Manifest.Line unset (a second template pass):
	// AirgapValues's probes do not need it.
	skipLocate bool
}

// Load loads the chart directory or packaged chart (.tgz) at path with
// Helm's loader. Nothing is fetched: dependencies must be in the chart's
// charts/ directory.
//
// Helm's loader follows symbolic links, so a chart directory is checked
// first: a link that leaves the chart (a files/ entry pointing at a secret
// elsewhere, which would reach .Files.Get and a relocated chart), dangles,
// or leads to a directory holding it is an error naming the link and its
// target. Links inside the chart are followed; Render and AirgapValues
// report each as a warning.
func Load(path string) (*chart.Chart, error) {
	ch, _, err := load(path)
	return ch, err
}

// load is Load that also returns the warnings: the loader's, one per
// symbolic link followed.
func load(path string) (*chart.Chart, []string, error) {
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		if _, err := safefile.CheckLinks(path); err != nil {
			return nil, nil, fmt.Errorf("loading chart %s: %w", path, err)
		}
	} else if err == nil {
		if err := checkArchive(path); err != nil {
			return nil, nil, fmt.Errorf("loading chart %s: %w", path, err)
		}
	}
	var ch *chart.Chart
	// The loader logs each link it follows with the global logger.
	warnings, err := captureLog(func() (err error) {
		ch, err = loader.Load(path)
		return err
	})
	if err != nil {
		return nil, nil, fmt.Errorf("loading chart %s: %w", path, err)
	}
	return ch, warnings, nil
}

// ErrAmbiguousArchive is wrapped by the error of Load (Render, Images,
// AirgapValues, Relocate, Package, Pull) for a packaged chart that Helm's
// loader would read as another chart than it appears to be: an archive
// with more than one top-level directory (Helm reads them all as one
// chart, each Chart.yaml's fields over the previous one's), or a file
// twice, in it or in a packaged subchart.
var ErrAmbiguousArchive = chartarchive.ErrAmbiguous

// checkArchive refuses a packaged chart that Helm's loader would read as
// other than what it appears to be: more than one top-level directory, a
// file twice, here or in a packaged subchart (internal/chartarchive). A
// fault of another kind is left to the loader to report in its words.
func checkArchive(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	err = chartarchive.Check(f, loader.MaxDecompressedChartSize)
	if errors.Is(err, chartarchive.ErrAmbiguous) {
		return err
	}
	return nil
}

// Render loads the chart directory or packaged chart (.tgz) at path and
// renders it offline, as `helm template` does: client-only, so lookup and
// other cluster calls return nothing, and values files are read locally.
func Render(path string, opts Options) (*rendered.Chart, error) {
	// No getters: values files given as URLs are read as (missing) local
	// files and never fetched.
	vals, err := opts.Values.MergeValues(getter.Providers{})
	if err != nil {
		return nil, err
	}
	ch, warnings, err := load(path)
	if err != nil {
		return nil, err
	}
	c, err := render(ch, vals, opts, path)
	if err != nil {
		return nil, err
	}
	c.Warnings = append(warnings, c.Warnings...)
	return c, nil
}

// RenderChart renders a loaded chart with the values given (the user's
// values, as from values.Options.MergeValues; opts.Values is not used), as
// `helm template` does. Helm's dependency processing modifies the chart
// (it removes disabled subcharts and imports values): load it again to
// render it with other values.
func RenderChart(ch *chart.Chart, vals map[string]interface{}, opts Options) (*rendered.Chart, error) {
	return render(ch, vals, opts, ch.Name())
}

// Images renders the chart at path and adds every image it uses to rw's
// image set, with the images of rw's other inputs, so that collisions
// across charts and manifests are found: those of its manifests and hooks,
// and those of the image annotations of the chart and its enabled
// subcharts. Helm's warnings reach rw's warning function.
func Images(rw *manifest.Rewriter, path string, opts Options) error {
	c, err := Render(path, opts)
	if err != nil {
		return err
	}
	return c.Rewrite(nil, rw)
}

// render renders ch as `helm template` does (helm's cmd/helm/template.go and
// runInstall); where names the chart in errors.
func render(ch *chart.Chart, vals map[string]interface{}, opts Options, where string) (*rendered.Chart, error) {
	switch ch.Metadata.Type {
	case "", "application":
	default:
		return nil, fmt.Errorf("%s: %s charts are not installable", where, ch.Metadata.Type)
	}
	if req := ch.Metadata.Dependencies; req != nil {
		if err := action.CheckDependencies(ch, req); err != nil {
			return nil, fmt.Errorf("%s: %w: %v; run `helm dependency build %s` to fetch them (rehost renders offline and never downloads charts)", where, ErrMissingDependencies, err, where)
		}
	}

	cfg := &action.Configuration{Log: func(string, ...interface{}) {}}
	install := action.NewInstall(cfg)
	install.DryRun = true
	install.DryRunOption = "client"
	install.ClientOnly = true
	install.Replace = true
	install.ReleaseName = opts.ReleaseName
	if install.ReleaseName == "" {
		install.ReleaseName = DefaultReleaseName
	}
	install.Namespace = opts.Namespace
	if install.Namespace == "" {
		install.Namespace = DefaultNamespace
	}
	version := opts.KubeVersion
	if version == "" {
		version = DefaultKubeVersion
	}
	kv, err := chartutil.ParseKubeVersion(version)
	if err != nil {
		return nil, fmt.Errorf("invalid kube version %q: %w", version, err)
	}
	install.KubeVersion = kv
	// Helm checks the constraint in install.Run; checked here first, the
	// error says which version was rendered for and how to choose another.
	if c := ch.Metadata.KubeVersion; c != "" && !chartutil.IsCompatibleRange(c, kv.String()) {
		return nil, fmt.Errorf("%s: %w: its kubeVersion is %q and it is rendered for Kubernetes %s", where, ErrKubeVersion, c, kv.String())
	}
	install.APIVersions = chartutil.VersionSet(opts.APIVersions)
	install.IncludeCRDs = !opts.SkipCRDs
	if vals == nil {
		vals = map[string]interface{}{}
	}

	out := &rendered.Chart{Format: rendered.Format, Name: ch.Name(), Version: ch.Metadata.Version}
	var drafted map[string]string // the outputs of the templates, when drafted
	waitDraft := func() {}        // until the draft is written
	warnings, err := captureLog(func() error {
		if opts.Draft != nil {
			// The draft renders a copy of the chart while the install
			// renders and sorts it, on another processor: it adds no
			// time to a helper with one to spare. Its log is the
			// install's, in the same words (a line once).
			c, v, caps, ro, crds := cloneChart(ch), valuetree.CopyMap(vals), installCapabilities(install), installOptions(install), install.IncludeCRDs
			done := make(chan struct{})
			var panicked interface{}
			go func() {
				defer close(done)
				defer func() { panicked = recover() }()
				var d *rendered.Draft
				if d, drafted = draft(c, v, caps, ro, crds); d != nil {
					opts.Draft(d)
				}
			}()
			// Whatever the install does, the draft is written before the
			// chart or the failure, and read by locate.
			waitDraft = func() {
				<-done
				if panicked != nil {
					p := panicked
					panicked = nil
					panic(p)
				}
			}
			defer waitDraft()
		}
		rel, err := install.Run(ch, vals)
		if err != nil {
			return &RenderError{Chart: where, Err: err}
		}
		if out.Manifests, err = splitManifest(rel.Manifest); err != nil {
			return fmt.Errorf("%s: %w", where, err)
		}
		for _, h := range rel.Hooks {
			m := rendered.Manifest{Name: h.Path, Content: h.Manifest}
			for _, e := range h.Events {
				m.Hook = append(m.Hook, string(e))
			}
			if opts.SkipTests && isTest(m) {
				continue
			}
			out.Manifests = append(out.Manifests, m)
		}
		// The install ran Helm's dependency processing on ch: only the
		// subcharts the values enable are left in it.
		if out.Images, err = annotatedImages(ch, vals); err != nil {
			return err
		}
		if !opts.skipLocate {
			waitDraft()
			locate(out.Manifests, ch, vals, install, cfg, drafted)
		}
		return nil
	})
	out.Warnings = warnings
	if err != nil {
		return nil, err
	}
	return out, nil
}

// RenderError is Helm's error rendering a chart. Its message names the
// chart and gives Helm's, cut to maxRenderError bytes with its size: a
// template that includes itself makes Helm repeat the chain of includes
// in a message of tens of kilobytes (issue 29). Err is Helm's error whole.
type RenderError struct {
	Chart string
	Err   error
}

// maxRenderError is how much of Helm's message a RenderError shows.
const maxRenderError = 1024

func (e *RenderError) Error() string {
	return e.Chart + ": " + bounded.Cut(e.Err.Error(), maxRenderError)
}

func (e *RenderError) Unwrap() error { return e.Err }

func isTest(m rendered.Manifest) bool {
	for _, e := range m.Hook {
		if e == "test" {
			return true
		}
	}
	return false
}

// sourceLine starts every document of a release manifest rendered without a
// post-renderer (helm's pkg/action renderResources).
const sourceLine = "---\n# Source: "

// splitManifest splits a release manifest into its documents.
func splitManifest(s string) ([]rendered.Manifest, error) {
	if s == "" {
		return nil, nil
	}
	if !strings.HasPrefix(s, sourceLine) {
		return nil, errors.New("unexpected release manifest: it does not start with a # Source: line")
	}
	var out []rendered.Manifest
	for s != "" {
		s = s[len(sourceLine):]
		end := strings.Index(s, "\n"+sourceLine)
		doc := s
		if end >= 0 {
			doc, s = s[:end+1], s[end+1:]
		} else {
			s = ""
		}
		name, content, ok := strings.Cut(doc, "\n")
		if !ok {
			return nil, fmt.Errorf("unexpected release manifest: no document after # Source: %s", name)
		}
		out = append(out, rendered.Manifest{Name: name, Content: strings.TrimSuffix(content, "\n")})
	}
	return out, nil
}
