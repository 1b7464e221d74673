package main

import (
	"fmt"
	"io"
	"path/filepath"

	"github.com/rehost/rehost/pkg/manifest"
	"github.com/rehost/rehost/pkg/rendered"
	"github.com/spf13/cobra"
)

// helmFlags are the chart rendering flags, with helm template's names and
// meaning, except --release-name (the release name here; a boolean in helm,
// whose release name is positional) and --include-crds (true by default
// here: helm install installs crds/). They are passed on to rehost-helm.
type helmFlags struct {
	valueFiles   []string
	values       []string
	stringValues []string
	fileValues   []string
	releaseName  string
	namespace    string
	kubeVersion  string
	apiVersions  []string
	includeCRDs  bool
	skipTests    bool

	// writes: the command writes the charts' documents (rewrite), not
	// only their images.
	writes bool

	// Chart references (charts.go): --version, --repo, --plain-http,
	// --helm-user-config, and what was fetched.
	src chartSource

	cmd *cobra.Command
}

// changed lists the chart flags given on the command line.
func (f *helmFlags) changed() []string {
	var set []string
	if f.cmd == nil {
		return nil
	}
	for _, name := range []string{"values", "set", "set-string", "set-file", "release-name", "namespace", "kube-version", "api-versions", "include-crds", "skip-tests"} {
		if f.cmd.Flags().Changed(name) {
			set = append(set, "--"+name)
		}
	}
	return set
}

func (f *helmFlags) register(cmd *cobra.Command) {
	f.cmd = cmd
	fs := cmd.Flags()
	fs.StringSliceVarP(&f.valueFiles, "values", "f", nil, "charts: values YAML `FILE` (repeatable; the last wins)")
	fs.StringArrayVar(&f.values, "set", nil, "charts: set values, key1=val1,key2=val2 (repeatable)")
	fs.StringArrayVar(&f.stringValues, "set-string", nil, "charts: set STRING values, key1=val1,key2=val2 (repeatable)")
	fs.StringArrayVar(&f.fileValues, "set-file", nil, "charts: set values from files, key1=path1 (repeatable)")
	fs.StringVar(&f.releaseName, "release-name", "release-name", "charts: release name (.Release.Name)")
	fs.StringVarP(&f.namespace, "namespace", "n", "default", "charts: release namespace (.Release.Namespace)")
	fs.StringVar(&f.kubeVersion, "kube-version", rendered.DefaultKubeVersion, "charts: Kubernetes version for .Capabilities.KubeVersion and the charts' kubeVersion checks (the default is the version of the Kubernetes libraries rehost-helm's Helm is built with; Helm's own is v1.20.0)")
	fs.StringSliceVarP(&f.apiVersions, "api-versions", "a", nil, "charts: API versions for .Capabilities.APIVersions (repeatable)")
	fs.BoolVar(&f.includeCRDs, "include-crds", true, "charts: include the CRDs of crds/ directories")
	fs.BoolVar(&f.skipTests, "skip-tests", false, "charts: leave out test hooks (helm.sh/hook: test)")
	f.src.register(cmd)
}

// args is the rehost-helm command line that renders chart with the flags.
func (f *helmFlags) args(chart string) []string {
	var a []string
	for _, v := range f.valueFiles {
		a = append(a, "--values="+v)
	}
	for _, v := range f.values {
		a = append(a, "--set="+v)
	}
	for _, v := range f.stringValues {
		a = append(a, "--set-string="+v)
	}
	for _, v := range f.fileValues {
		a = append(a, "--set-file="+v)
	}
	a = append(a, "--release-name="+f.releaseName, "--namespace="+f.namespace)
	if f.kubeVersion != "" {
		a = append(a, "--kube-version="+f.kubeVersion)
	}
	for _, v := range f.apiVersions {
		a = append(a, "--api-versions="+v)
	}
	a = append(a, fmt.Sprintf("--include-crds=%t", f.includeCRDs))
	if f.skipTests {
		a = append(a, "--skip-tests")
	}
	return append(a, "--", chart)
}

// perTemplate reports whether the command writes one file per input
// (--output-dir): then a chart gives one stream per template file;
// otherwise one per document, in `helm template` order.
func (f *helmFlags) perTemplate() bool {
	if f.cmd == nil {
		return false
	}
	fl := f.cmd.Flags().Lookup("output-dir")
	return fl != nil && fl.Value.String() != ""
}

// chartStreams renders a chart input with rehost-helm and returns its
// documents as streams, and adds the images of its helm.sh/images
// annotations to rw.
//
// Joined, the streams are the chart's `helm template` output, hooks
// included. With --output-dir there is one stream per template file, at
// <chart>/templates/<file> under the chart input's directory.
func chartStreams(in manifest.Input, hf *helmFlags, rw *manifest.Rewriter, s streams) ([]stream, error) {
	hf.src.found = append(hf.src.found, chartInput{path: in.Path, source: hf.src.show(in.Path)})
	// The documents of the templates are processed while Helm sorts them
	// (it parses each one, on one processor, which it leaves the other):
	// what the rewrite of the chart finds done costs it nothing.
	c, err := renderChart(in.Path, hf, s, func(d *rendered.Draft) {
		fitGCToChart(documentBytes(d.Manifests))
		d.Prepare(rw, hf.writes)
	})
	if err != nil {
		return nil, err
	}
	fitGCToChart(documentBytes(c.Manifests)) // without a draft too
	if err := c.AddTo(rw); err != nil {
		return nil, err
	}
	dir := filepath.Dir(in.Rel)
	if !hf.perTemplate() {
		return []stream{{name: c.Name, rel: filepath.Join(dir, c.Name), rewrite: func(rw *manifest.Rewriter, w io.Writer) error {
			return c.RewriteDocuments(w, rw, "")
		}}}, nil
	}
	var out []stream
	for _, t := range c.Templates() {
		out = append(out, stream{name: t.Name, rel: filepath.Join(dir, filepath.FromSlash(t.Name)), rewrite: func(rw *manifest.Rewriter, w io.Writer) error {
			return c.RewriteDocuments(w, rw, t.Name)
		}})
	}
	return out, nil
}

// documentBytes is the bytes of the documents of ms.
func documentBytes(ms []rendered.Manifest) int {
	n := 0
	for _, m := range ms {
		n += len(m.Content)
	}
	return n
}

// renderChart runs rehost-helm on the chart at path; draft, when set,
// receives the documents of its templates as soon as they are rendered.
func renderChart(path string, hf *helmFlags, s streams, draft func(*rendered.Draft)) (*rendered.Chart, error) {
	hc, err := hf.src.helmClient()
	if err != nil {
		return nil, err
	}
	local, err := hf.src.withDependencies(path)
	if err != nil {
		return nil, err
	}
	c, err := hc.Render(hf.args(local), hf.valuesStdin(s), draft)
	if err != nil {
		return nil, helperError("rendering chart "+hf.src.show(path)+": ", err)
	}
	return c, nil
}

// findHelmHelper returns the path of rehost-helm.
func findHelmHelper() (string, error) {
	return findCompanion(helmHelper, "rendering Helm charts")
}
