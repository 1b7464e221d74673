package helm

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/rehost/rehost/pkg/manifest"
	"github.com/rehost/rehost/pkg/rewrite"
	"helm.sh/helm/v3/pkg/cli/values"
)

// rewrittenDocs renders the chart and returns each document rewritten with
// cfg: what `rehost rewrite CHART` prints, document by document.
func rewrittenDocs(t *testing.T, chart string, opts Options, cfg rewrite.Config) []string {
	t.Helper()
	c, err := Render(chart, opts)
	if err != nil {
		t.Fatal(err)
	}
	rw, err := manifest.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	// One call per template: scan them all first, as a ConfigMap may be
	// an image passed to a later template's container (envimages.go).
	for _, m := range c.Manifests {
		if err := rw.ScanEnvImages(strings.NewReader(m.Content)); err != nil {
			t.Fatal(err)
		}
	}
	var out []string
	for _, m := range c.Manifests {
		b, err := rw.RewriteBytes([]byte(m.Content), m.Name)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, m.Name+"\n"+string(b))
	}
	return out
}

// renderedDocs renders the chart and returns its documents.
func renderedDocs(t *testing.T, chart string, opts Options) []string {
	t.Helper()
	c, err := Render(chart, opts)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range c.Manifests {
		out = append(out, m.Name+"\n"+m.Content)
	}
	return out
}

// withOverlay returns opts with the overlay's bytes as the last values file.
func withOverlay(t *testing.T, opts Options, o *Overlay) Options {
	t.Helper()
	b, err := o.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "airgap-values.yaml")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	opts.Values.ValueFiles = append(append([]string(nil), opts.Values.ValueFiles...), p)
	return opts
}

func diffDocs(t *testing.T, got, want []string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d documents, want %d", len(got), len(want))
	}
	for i := range got {
		if got[i] != want[i] {
			t.Errorf("document %d with the overlay:\n%s\nwant (rehost rewrite):\n%s", i, got[i], want[i])
		}
	}
}

// TestAirgapValuesEqualsRewrite: rendering with the user's values and the
// overlay gives, document by document and byte for byte, the rewritten
// rendering, for every mapping option; excluded images stay.
func TestAirgapValuesEqualsRewrite(t *testing.T) {
	chart := chartPath("airgap")
	userFile := filepath.Join(t.TempDir(), "user.yaml")
	if err := os.WriteFile(userFile, []byte("web: {image: \"nginx:1.27\"}\ncache: {image: {tag: 7.4.0}}\njobs: {image: {repository: bitnami/kubectl-custom}}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// busybox is hard-coded in a template: excluded here so that the
	// overlay is complete (TestAirgapValuesReportsHardCoded covers it).
	busybox := "docker.io/library/busybox"
	tests := []struct {
		name string
		opts Options
		cfg  rewrite.Config
		keys []string // the overlay's keys
	}{
		{"default", Options{}, rewrite.Config{Registry: "sea.hub:5000", Exclude: []string{busybox}},
			[]string{"api.image.repository", "global.image.registry", "global.imageRegistry", "jobs.git.image.repository", "mesh.hub", "migrate.image.repository", "sidecars[0].image", "tools.registry", "web.image"}},
		{"user values", Options{Values: values.Options{ValueFiles: []string{userFile}}, Namespace: "prod", ReleaseName: "shop"}, rewrite.Config{Registry: "sea.hub:5000", Exclude: []string{busybox}},
			[]string{"api.image.repository", "global.image.registry", "global.imageRegistry", "jobs.git.image.repository", "mesh.hub", "migrate.image.repository", "sidecars[0].image", "tools.registry", "web.image"}},
		{"nest and prefix", Options{}, rewrite.Config{Registry: "harbor.local:8443/mirror", PathStyle: rewrite.PathStyleNest, Exclude: []string{busybox}},
			[]string{"api.image.repository", "global.image.registry", "global.imageRegistry", "jobs.git.image.repository", "mesh.hub", "migrate.image.repository", "sidecars[0].image", "tools.registry", "web.image"}},
		// quay.io excluded: the hook keeps its image; docker.io/bitnami
		// excluded: the global registry must not move redis or kubectl.
		{"exclusions", Options{}, rewrite.Config{Registry: "sea.hub:5000", Exclude: []string{busybox, "quay.io", "docker.io/bitnami"}},
			[]string{"api.image.repository", "global.image.registry", "jobs.git.image.repository", "mesh.hub", "sidecars[0].image", "tools.registry", "web.image"}},
		{"set flags", Options{Values: values.Options{Values: []string{"mesh.tag=1.23.0,api.image.digest=sha256:0123456789012345678901234567890123456789012345678901234567890123"}, StringValues: []string{"tools.tag=2"}}}, rewrite.Config{Registry: "sea.hub:5000", Exclude: []string{busybox}},
			[]string{"api.image.repository", "global.image.registry", "global.imageRegistry", "jobs.git.image.repository", "mesh.hub", "migrate.image.repository", "sidecars[0].image", "tools.registry", "web.image"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, err := AirgapValues(chart, tt.opts, tt.cfg)
			if err != nil {
				t.Fatal(err)
			}
			if !o.Complete() {
				t.Fatalf("unmoved: %v", o.Unmoved)
			}
			var keys []string
			for _, k := range o.Keys {
				keys = append(keys, PathString(k.Path))
			}
			if !reflect.DeepEqual(keys, tt.keys) {
				t.Errorf("keys %q, want %q", keys, tt.keys)
			}
			want := rewrittenDocs(t, chart, tt.opts, tt.cfg)
			got := renderedDocs(t, chart, withOverlay(t, tt.opts, o))
			diffDocs(t, got, want)
			// The base, the values probed together, the empty
			// global.imageRegistry and global.image.registry probed
			// together, the check.
			if o.Renders != 4 || o.Alone != 0 {
				t.Errorf("%d renders, %d candidates probed alone; want 4 and 0", o.Renders, o.Alone)
			}
		})
	}
}

// TestAirgapValuesSideEffects: a key that also feeds a label or free text
// (an annotation) is not used: the overlay must change what rehost rewrite
// changes and nothing else. A key that also feeds a named reference (an
// env var SIDECAR_IMAGE), which rehost rewrite rewrites with the image, is
// used. The batch probe sees the label and the annotation change and
// probes the keys of that document alone.
func TestAirgapValuesSideEffects(t *testing.T) {
	o, err := AirgapValues(chartPath("airgap-labels"), Options{}, defaultConfig)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, k := range o.Keys {
		keys = append(keys, PathString(k.Path)+"="+k.Value)
	}
	if want := []string{"image.registry=sea.hub:5000", "sidecar.image=sea.hub:5000/library/redis:7.2"}; !reflect.DeepEqual(keys, want) {
		t.Errorf("keys %q, want %q", keys, want)
	}
	if len(o.Unmoved) != 1 || o.Unmoved[0].Image != "quay.io/prometheus/statsd-exporter:v0.26.0" ||
		!strings.Contains(o.Unmoved[0].Reason, "metrics.image: it changes airgap-labels/templates/deploy.yaml beyond image fields") {
		t.Errorf("unmoved: %+v", o.Unmoved)
	}
	// base, batch, base again (is the document that changed beyond its
	// image fields volatile? no), the two keys whose markers show in the
	// label and the annotation alone (the batch learnt the other two),
	// check.
	if o.Candidates != 4 || o.Alone != 2 || o.Renders != 6 {
		t.Errorf("%d candidates, %d alone, %d renders", o.Candidates, o.Alone, o.Renders)
	}
	got := renderedDocs(t, chartPath("airgap-labels"), withOverlay(t, Options{}, o))
	want := rewrittenDocs(t, chartPath("airgap-labels"), Options{}, defaultConfig)
	want[0] = strings.Replace(want[0], "image: sea.hub:5000/prometheus/statsd-exporter:v0.26.0", "image: quay.io/prometheus/statsd-exporter:v0.26.0", 1)
	diffDocs(t, got, want)
}

// TestAirgapValuesVolatile: documents that differ at every render (a
// genCA certificate, randAlphaNum) do not stop the search: they are found
// by rendering the chart again and compared by their image fields.
func TestAirgapValuesVolatile(t *testing.T) {
	o, err := AirgapValues(chartPath("airgap-random"), Options{}, defaultConfig)
	if err != nil {
		t.Fatal(err)
	}
	if !o.Complete() || len(o.Keys) != 1 || PathString(o.Keys[0].Path) != "image.registry" || o.Keys[0].Value != "sea.hub:5000" {
		t.Fatalf("keys %+v, unmoved %+v", o.Keys, o.Unmoved)
	}
	// base, batch (the registry and the repository), base again (the
	// StatefulSet changed beyond its image: volatile), check.
	if o.Renders != 4 || o.Alone != 0 {
		t.Errorf("%d renders", o.Renders)
	}
}

// TestAirgapValuesSetWins: --set values come after the overlay (Helm
// applies them after every file), so a registry pinned with --set cannot
// be overridden; the images it holds are reported, the others move.
func TestAirgapValuesSetWins(t *testing.T) {
	opts := Options{Values: values.Options{Values: []string{"global.imageRegistry=mirror.example.com"}}}
	cfg := rewrite.Config{Registry: "sea.hub:5000", Exclude: []string{"docker.io/library/busybox"}}
	o, err := AirgapValues(chartPath("airgap"), opts, cfg)
	if err != nil {
		t.Fatal(err)
	}
	var unmoved []string
	for _, u := range o.Unmoved {
		unmoved = append(unmoved, u.Template+" "+u.Image)
	}
	want := []string{
		"airgap/templates/api.yaml mirror.example.com/bitnami/redis:7.2.5",
		"airgap/charts/jobs/templates/cronjob.yaml mirror.example.com/bitnami/kubectl:1.30",
		"airgap/templates/tests/test-web.yaml mirror.example.com/bitnami/redis:7.2.5",
	}
	if !reflect.DeepEqual(unmoved, want) {
		t.Errorf("unmoved %q, want %q", unmoved, want)
	}
	for _, k := range o.Keys {
		if PathString(k.Path) == "global.imageRegistry" {
			t.Errorf("the overlay sets global.imageRegistry, which --set overrides")
		}
	}
}

// TestAirgapValuesReportsHardCoded: the hard-coded busybox is reported with
// its template file and line; everything else moves.
func TestAirgapValuesReportsHardCoded(t *testing.T) {
	o, err := AirgapValues(chartPath("airgap"), Options{}, defaultConfig)
	if err != nil {
		t.Fatal(err)
	}
	want := []UnmovedImage{{
		Image: "busybox:1.36", Target: "sea.hub:5000/library/busybox:1.36",
		Template: "airgap/templates/web.yaml", Line: 18,
		Kind: "Deployment", Name: "release-name-web", Field: "spec.template.spec.initContainers[0].image",
		Reason: "hard-coded in the template: no value drives it",
	}}
	if !reflect.DeepEqual(o.Unmoved, want) {
		t.Errorf("unmoved:\n%+v\nwant\n%+v", o.Unmoved, want)
	}
	b, err := o.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "#   airgap/templates/web.yaml:18: Deployment release-name-web: spec.template.spec.initContainers[0].image: busybox:1.36") {
		t.Errorf("the overlay's header does not list busybox:\n%s", b)
	}
	// Everything but busybox is rewritten.
	got := renderedDocs(t, chartPath("airgap"), withOverlay(t, Options{}, o))
	want2 := rewrittenDocs(t, chartPath("airgap"), Options{}, defaultConfig)
	for i := range want2 {
		want2[i] = strings.ReplaceAll(want2[i], "sea.hub:5000/library/busybox:1.36", "busybox:1.36")
	}
	diffDocs(t, got, want2)
}

// TestAirgapValuesStable: the overlay is the same bytes at every run.
func TestAirgapValuesStable(t *testing.T) {
	var first []byte
	for i := 0; i < 3; i++ {
		o, err := AirgapValues(chartPath("airgap"), Options{}, defaultConfig)
		if err != nil {
			t.Fatal(err)
		}
		b, err := o.Bytes()
		if err != nil {
			t.Fatal(err)
		}
		if first == nil {
			first = b
		} else if string(b) != string(first) {
			t.Fatalf("run %d:\n%s\nfirst run:\n%s", i, b, first)
		}
	}
}

// TestAirgapValuesNothingToMove: a chart whose images are all in the target
// registry or excluded needs no keys, and no probe.
func TestAirgapValuesNothingToMove(t *testing.T) {
	o, err := AirgapValues(chartPath("airgap"), Options{}, rewrite.Config{Registry: "sea.hub:5000", Exclude: []string{"docker.io", "ghcr.io", "quay.io", "gcr.io", "registry.k8s.io"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(o.Keys) != 0 || !o.Complete() || o.Renders != 1 {
		t.Errorf("keys %v, unmoved %v, %d renders", o.Keys, o.Unmoved, o.Renders)
	}
	b, err := o.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(string(b), "{}\n") {
		t.Errorf("overlay:\n%s", b)
	}
}

// TestAirgapValuesWarnings: Helm's warnings about the user's values come
// back once, from the render as given (not once per probe).
func TestAirgapValuesWarnings(t *testing.T) {
	o, err := AirgapValues(chartPath("warnings"), Options{Values: values.Options{Values: []string{"resources.limits=big"}}}, defaultConfig)
	if err != nil {
		t.Fatal(err)
	}
	if len(o.Warnings) != 1 || !strings.Contains(o.Warnings[0], "resources.limits") {
		t.Errorf("warnings %q", o.Warnings)
	}
}

// TestAirgapValuesInteraction: two keys that each move their image alone
// but change another together (the template tests both) fail the check;
// the check drops the key of the document that came out wrong and solves
// again; what is left unmoved is reported, never an overlay that renders
// otherwise than rehost rewrite.
func TestAirgapValuesInteraction(t *testing.T) {
	o, err := AirgapValues(chartPath("airgap-interact"), Options{}, defaultConfig)
	if err != nil {
		t.Fatal(err)
	}
	if len(o.Keys) != 1 || PathString(o.Keys[0].Path) != "a.registry" {
		t.Errorf("keys %+v", o.Keys)
	}
	if len(o.Unmoved) != 1 || o.Unmoved[0].Image != "docker.io/acme/b:1" || !strings.Contains(o.Unmoved[0].Reason, "setting b.registry along with the other keys does not give the target") {
		t.Errorf("unmoved %+v", o.Unmoved)
	}
	// base, batch (the suffix shows in b's image: b probed again), b
	// alone, the failed check, the check that passes.
	if o.Renders != 5 || o.Alone != 1 {
		t.Errorf("%d renders, %d alone", o.Renders, o.Alone)
	}
	got := renderedDocs(t, chartPath("airgap-interact"), withOverlay(t, Options{}, o))
	want := rewrittenDocs(t, chartPath("airgap-interact"), Options{}, defaultConfig)
	want[1] = strings.Replace(want[1], "sea.hub:5000/acme/b:1", "docker.io/acme/b:1", 1)
	diffDocs(t, got, want)
}

// TestAirgapValuesRegistrySetting: an operator's registry setting that
// rehost rewrite adds (tigera's Installation.spec.registry) is set through
// the empty value that the template writes only when set; an image the
// operator starts, named in its arguments (--config-reloader-image=), moves
// through the registry key it is built from.
func TestAirgapValuesRegistrySetting(t *testing.T) {
	o, err := AirgapValues(chartPath("airgap-operator"), Options{}, defaultConfig)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, k := range o.Keys {
		keys = append(keys, fmt.Sprintf("%s=%s %v", PathString(k.Path), k.Value, k.Images))
	}
	want := []string{
		"installation.registry=sea.hub:5000/ [Installation default: spec.registry unset -> sea.hub:5000/]",
		"operator.image=sea.hub:5000/tigera/operator:v1.36.2 [quay.io/tigera/operator:v1.36.2 -> sea.hub:5000/tigera/operator:v1.36.2]",
		"reloader.registry=sea.hub:5000 [--config-reloader-image=quay.io/prometheus-operator/prometheus-config-reloader:v0.75.0 -> --config-reloader-image=sea.hub:5000/prometheus-operator/prometheus-config-reloader:v0.75.0]",
	}
	if !reflect.DeepEqual(keys, want) || !o.Complete() {
		t.Errorf("keys %q, want %q; unmoved %+v", keys, want, o.Unmoved)
	}
	diffDocs(t, renderedDocs(t, chartPath("airgap-operator"), withOverlay(t, Options{}, o)), rewrittenDocs(t, chartPath("airgap-operator"), Options{}, defaultConfig))
}

// TestAirgapValuesBitnami: Bitnami's shape (the common library's image
// helper, global.imageRegistry, and NOTES.txt that fail the render when an
// image's registry/repository is not in the images annotation): every
// probe and the relocated values fail that check, so the overlay sets
// Bitnami's documented switch, with a comment saying why, and moves every
// image, the hook's included. The relocated chart, whose annotation names
// the target, needs no switch.
func TestAirgapValuesBitnami(t *testing.T) {
	chart := chartPath("airgap-bitnami")
	o, err := AirgapValues(chart, Options{}, defaultConfig)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, k := range o.Keys {
		keys = append(keys, PathString(k.Path)+"="+k.Value)
	}
	if want := []string{"global.imageRegistry=sea.hub:5000", "global.security.allowInsecureImages=true"}; !reflect.DeepEqual(keys, want) || !o.Complete() {
		t.Fatalf("keys %q, want %q; unmoved %+v", keys, want, o.Unmoved)
	}
	if o.Keys[1].Why == "" || len(o.Keys[1].Images) != 0 || o.Keys[0].Why != "" || len(o.Keys[0].Images) != 3 {
		t.Errorf("keys %+v", o.Keys)
	}
	b, err := o.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "    # Bitnami's image verification (common.errors.insecureImages, https://github.com/bitnami/charts/issues/30850) rejects any registry but the original: the relocated images are the same images, in sea.hub:5000\n    allowInsecureImages: true\n") {
		t.Errorf("the switch has no comment:\n%s", b)
	}
	// base; the values together, failing Bitnami's check, then again
	// with its switch; global.imageRegistry alone (the only empty key);
	// the check without the switch (fails), then with it.
	if o.Candidates != 7 || o.Alone != 1 || o.Renders != 6 {
		t.Errorf("%d candidates, %d alone, %d renders", o.Candidates, o.Alone, o.Renders)
	}
	diffDocs(t, renderedDocs(t, chart, withOverlay(t, Options{}, o)), rewrittenDocs(t, chart, Options{}, defaultConfig))
	// Without the switch, the overlay fails the render.
	noSwitch := *o
	noSwitch.Keys = o.Keys[:1]
	noSwitch.tree = map[string]interface{}{"global": map[string]interface{}{"imageRegistry": "sea.hub:5000"}}
	if _, err := Render(chart, withOverlay(t, Options{}, &noSwitch)); err == nil || !strings.Contains(err.Error(), "Original containers have been substituted for unrecognized ones") {
		t.Errorf("the chart renders without the switch: %v", err)
	}

	out := filepath.Join(t.TempDir(), "bitnami.tgz")
	rel, err := Relocate(chart, out, Options{}, defaultConfig)
	if err != nil {
		t.Fatal(err)
	}
	if len(rel.Overlay.Keys) != 1 || PathString(rel.Overlay.Keys[0].Path) != "global.imageRegistry" {
		t.Errorf("relocated with %+v", rel.Overlay.Keys)
	}
	diffDocs(t, renderedDocs(t, out, Options{}), rewrittenDocs(t, chart, Options{}, defaultConfig))
	if vals := string(chartFile(t, out, "values.yaml")); !strings.Contains(vals, "allowInsecureImages: false") {
		t.Errorf("the relocated chart's values set the switch:\n%s", vals)
	}
}

// chartFile returns a file of the chart at path (a directory or a .tgz),
// by its name in the chart.
func chartFile(t *testing.T, path, name string) []byte {
	t.Helper()
	ch, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range ch.Raw {
		if f.Name == name {
			return f.Data
		}
	}
	t.Fatalf("%s has no %s", path, name)
	return nil
}
