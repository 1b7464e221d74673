package manifest

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/rehost/rehost/pkg/rewrite"
	"go.yaml.in/yaml/v3"
)

// chartLines lists "Kind field source -> target (action)" for chart
// sources, one per location, in input order of the sorted sources.
func chartLines(cs []ChartSource) []string {
	var out []string
	for _, c := range cs {
		for _, l := range c.Locations {
			s := fmt.Sprintf("%s %s %s -> %s (%s)", l.Kind, l.Field, c.Source, c.Target, c.Action)
			if l.TypeAdded {
				s += " type added"
			}
			if l.TypeWas != "" {
				s += " type was " + l.TypeWas
			}
			out = append(out, s)
		}
	}
	return out
}

const helmRepo = `apiVersion: source.toolkit.fluxcd.io/v1
kind: HelmRepository
metadata:
  name: podinfo
  namespace: flux-system
spec:
  interval: 5m
  url: https://stefanprodan.github.io/podinfo
`

// TestChartSources: the edge cases of each chart source, rewritten or
// not; the output is the input with exactly the expected changes, the
// node path gives the same values, and rewriting again changes nothing.
func TestChartSources(t *testing.T) {
	tests := []struct {
		name   string
		cfg    rewrite.Config
		in     string
		repl   []string // old, new pairs: the expected output
		charts []string
		images []string // sources
		warns  []string // substrings, one warning each
	}{
		{
			name:   "HelmRepository without type: added below spec",
			in:     helmRepo,
			repl:   []string{"spec:\n", "spec:\n  type: oci\n", "https://stefanprodan.github.io/podinfo", "oci://sea.hub:5000/charts"},
			charts: []string{"HelmRepository spec.url https://stefanprodan.github.io/podinfo -> oci://sea.hub:5000/charts (rewritten) type added"},
		},
		{
			name:   "CRLF line ends: the added line ends in CRLF too",
			in:     strings.ReplaceAll(helmRepo, "\n", "\r\n"),
			repl:   []string{"spec:\r\n", "spec:\r\n  type: oci\r\n", "https://stefanprodan.github.io/podinfo", "oci://sea.hub:5000/charts"},
			charts: []string{"HelmRepository spec.url https://stefanprodan.github.io/podinfo -> oci://sea.hub:5000/charts (rewritten) type added"},
		},
		{
			name:   "type null set",
			in:     strings.Replace(helmRepo, "  interval: 5m\n", "  type: ~\n  interval: 5m\n", 1),
			repl:   []string{"type: ~", "type: oci", "https://stefanprodan.github.io/podinfo", "oci://sea.hub:5000/charts"},
			charts: []string{"HelmRepository spec.url https://stefanprodan.github.io/podinfo -> oci://sea.hub:5000/charts (rewritten) type was ~"},
		},
		{
			name:   "type single-quoted default set in its quotes",
			in:     strings.Replace(helmRepo, "  interval: 5m\n", "  type: 'default'\n  interval: 5m\n", 1),
			repl:   []string{"type: 'default'", "type: 'oci'", "https://stefanprodan.github.io/podinfo", "oci://sea.hub:5000/charts"},
			charts: []string{"HelmRepository spec.url https://stefanprodan.github.io/podinfo -> oci://sea.hub:5000/charts (rewritten) type was default"},
		},
		{
			name:   "type oci kept",
			in:     strings.Replace(strings.Replace(helmRepo, "  interval: 5m\n", "  type: oci\n", 1), "https://stefanprodan.github.io/podinfo", "oci://ghcr.io/stefanprodan/charts", 1),
			repl:   []string{"oci://ghcr.io/stefanprodan/charts", "oci://sea.hub:5000/charts"},
			charts: []string{"HelmRepository spec.url oci://ghcr.io/stefanprodan/charts -> oci://sea.hub:5000/charts (rewritten)"},
		},
		{
			name:   "a cloud provider is reported",
			in:     strings.Replace(helmRepo, "  interval: 5m\n", "  type: oci\n  provider: aws\n", 1),
			repl:   []string{"https://stefanprodan.github.io/podinfo", "oci://sea.hub:5000/charts"},
			charts: []string{"HelmRepository spec.url https://stefanprodan.github.io/podinfo -> oci://sea.hub:5000/charts (rewritten)"},
			warns:  []string{"flux.yaml:9: HelmRepository flux-system/podinfo: spec.url: chart source rewritten to oci://sea.hub:5000/charts, but provider is set: its cloud login is for the source registry"},
		},
		{
			name:   "excluded: nothing added",
			cfg:    rewrite.Config{Exclude: []string{"stefanprodan.github.io"}},
			in:     helmRepo,
			charts: []string{"HelmRepository spec.url https://stefanprodan.github.io/podinfo -> https://stefanprodan.github.io/podinfo (excluded)"},
		},
		{
			// The anchor is not a chart source: the alias is replaced by
			// the target, as for images.
			name:   "url through an alias",
			in:     "x-repo: &repo https://charts.jetstack.io\n" + strings.Replace(helmRepo, "https://stefanprodan.github.io/podinfo", "*repo", 1),
			repl:   []string{"spec:\n", "spec:\n  type: oci\n", "url: *repo", "url: oci://sea.hub:5000/charts"},
			charts: []string{"HelmRepository spec.url https://charts.jetstack.io -> oci://sea.hub:5000/charts (rewritten) type added"},
		},
		{
			name:  "a template is left as written",
			in:    strings.Replace(helmRepo, "https://stefanprodan.github.io/podinfo", "oci://${REGISTRY}/charts", 1),
			warns: []string{"flux.yaml:8: HelmRepository flux-system/podinfo: spec.url: chart source oci://${REGISTRY}/charts left as written: a template or a variable"},
		},
		{
			name: "OCIRepository of a chart with semver and digest: the version listed is the semver",
			in: `apiVersion: source.toolkit.fluxcd.io/v1beta2
kind: OCIRepository
metadata: {name: podinfo, namespace: apps}
spec:
  layerSelector: {mediaType: application/vnd.cncf.helm.chart.content.v1.tar+gzip, operation: copy}
  url: oci://ghcr.io/stefanprodan/charts/podinfo
  ref: {semver: ">= 6.0.0", digest: "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"}
`,
			repl:   []string{"oci://ghcr.io/stefanprodan/charts/podinfo", "oci://sea.hub:5000/charts/podinfo"},
			charts: []string{"OCIRepository spec.url oci://ghcr.io/stefanprodan/charts/podinfo -> oci://sea.hub:5000/charts/podinfo (rewritten)"},
			warns:  []string{"ref.digest is set: it pins the source chart's digest"},
		},
		{
			name: "OCIRepository with another layer: an image",
			in: `apiVersion: source.toolkit.fluxcd.io/v1beta2
kind: OCIRepository
metadata: {name: podinfo, namespace: apps}
spec:
  layerSelector: {mediaType: application/vnd.cncf.flux.content.v1.tar+gzip}
  url: oci://ghcr.io/stefanprodan/manifests/podinfo
  ref: {tag: 6.5.4}
`,
			repl:   []string{"oci://ghcr.io/stefanprodan/manifests/podinfo", "oci://sea.hub:5000/stefanprodan/manifests/podinfo"},
			images: []string{"ghcr.io/stefanprodan/manifests/podinfo:6.5.4"},
		},
		{
			name: "OCIRepository of a chart with noChartSources: an image",
			cfg:  rewrite.Config{NoChartSources: true},
			in: `apiVersion: source.toolkit.fluxcd.io/v1
kind: OCIRepository
metadata: {name: podinfo, namespace: apps}
spec:
  layerSelector: {mediaType: application/vnd.cncf.helm.chart.content.v1.tar+gzip, operation: copy}
  url: oci://ghcr.io/stefanprodan/charts/podinfo
  ref: {tag: 6.5.4}
`,
			repl:   []string{"oci://ghcr.io/stefanprodan/charts/podinfo", "oci://sea.hub:5000/stefanprodan/charts/podinfo"},
			images: []string{"ghcr.io/stefanprodan/charts/podinfo:6.5.4"},
		},
		{
			name: "HelmRelease chart template of kind HelmChart: unchanged",
			in: `apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: podinfo, namespace: apps}
spec:
  chart:
    spec:
      chart: podinfo
      version: 6.5.4
      sourceRef: {kind: HelmRepository, name: podinfo}
`,
		},
		{
			name: "Argo CD Application in JSON, several sources",
			in: `{"apiVersion": "argoproj.io/v1alpha1", "kind": "Application", "metadata": {"name": "a", "namespace": "argocd"},
 "spec": {"sources": [{"repoURL": "https://github.com/x/values.git", "ref": "values"},
                      {"repoURL": "oci://ghcr.io/stefanprodan/charts", "chart": "podinfo", "targetRevision": "6.5.4"}]}}
`,
			repl:   []string{`"oci://ghcr.io/stefanprodan/charts"`, `"sea.hub:5000/charts"`},
			charts: []string{"Application spec.sources[1].repoURL oci://ghcr.io/stefanprodan/charts -> sea.hub:5000/charts (rewritten)"},
		},
		{
			name: "Argo CD chart source with an empty repoURL: nothing",
			in: `apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: a, namespace: argocd}
spec:
  source: {repoURL: "", chart: podinfo}
`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var warns []string
			rw, err := New(tt.cfg, WithWarnings(func(err error) { warns = append(warns, err.Error()) }))
			if err != nil {
				t.Fatal(err)
			}
			out, err := rw.RewriteBytes([]byte(tt.in), "flux.yaml")
			if err != nil {
				t.Fatal(err)
			}
			want := tt.in
			for i := 0; i+1 < len(tt.repl); i += 2 {
				if !strings.Contains(want, tt.repl[i]) {
					t.Fatalf("test input lacks %q", tt.repl[i])
				}
				want = strings.Replace(want, tt.repl[i], tt.repl[i+1], 1)
			}
			if string(out) != want {
				t.Errorf("output:\n%s\nwant:\n%s", out, want)
			}
			if got := chartLines(rw.Charts()); strings.Join(got, "\n") != strings.Join(tt.charts, "\n") {
				t.Errorf("charts:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.charts, "\n"))
			}
			var images []string
			for _, img := range rw.Images() {
				images = append(images, img.Source)
			}
			if strings.Join(images, " ") != strings.Join(tt.images, " ") {
				t.Errorf("images %v, want %v", images, tt.images)
			}
			if len(warns) != len(tt.warns) {
				t.Errorf("warnings %q, want %d", warns, len(tt.warns))
			}
			for i := range tt.warns {
				if i < len(warns) && !strings.Contains(warns[i], tt.warns[i]) {
					t.Errorf("warning %q, want one containing %q", warns[i], tt.warns[i])
				}
			}
			again, _ := New(tt.cfg)
			if out2, err := again.RewriteBytes(out, "flux.yaml"); err != nil || !bytes.Equal(out, out2) {
				t.Errorf("not idempotent (%v):\n%s", err, out2)
			}
			assertNodePathAgrees(t, tt.cfg, []byte(tt.in), out)
		})
	}
}

// TestChartSourceErrors: a chart source that cannot be mapped is an error
// naming the file, line, object and field, and nothing is written; with
// skipInvalid it is a warning and the source stays as written.
func TestChartSourceErrors(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"git URL in a HelmRepository", strings.Replace(helmRepo, "https://stefanprodan.github.io/podinfo", "git://github.com/x/y", 1),
			`in.yaml:8: HelmRepository flux-system/podinfo: spec.url: invalid chart source "git://github.com/x/y": scheme git: want oci:// or https:// or http://`},
		{"URL not a string", strings.Replace(helmRepo, "https://stefanprodan.github.io/podinfo", "{host: x}", 1),
			`in.yaml:8: HelmRepository flux-system/podinfo: spec.url: chart source is not a string: got a map`},
		{"type neither default nor oci", strings.Replace(helmRepo, "  interval: 5m\n", "  type: git\n", 1),
			`in.yaml:7: HelmRepository flux-system/podinfo: spec.type: chart source https://stefanprodan.github.io/podinfo not rewritten: spec.type got str git, want default or oci`},
		{"OCIRepository of a chart that names no chart", `apiVersion: source.toolkit.fluxcd.io/v1
kind: OCIRepository
metadata: {name: x, namespace: apps}
spec:
  layerSelector: {mediaType: application/vnd.cncf.helm.chart.content.v1.tar+gzip}
  url: oci://ghcr.io
`, `in.yaml:6: OCIRepository apps/x: spec.url: invalid chart source "oci://ghcr.io": it names no chart: want oci://host/path/NAME`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rw, err := New(rewrite.Config{})
			if err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			err = rw.Rewrite(&out, strings.NewReader(tt.in), "in.yaml")
			var me *Error
			if !errors.As(err, &me) || err.Error() != tt.want {
				t.Errorf("error %v, want %s", err, tt.want)
			}
			if out.Len() != 0 {
				t.Errorf("wrote %q on error", out.String())
			}
			var warns []string
			skip, _ := New(rewrite.Config{SkipInvalid: true}, WithWarnings(func(err error) { warns = append(warns, err.Error()) }))
			got, err := skip.RewriteBytes([]byte(tt.in), "in.yaml")
			if err != nil || string(got) != tt.in || len(warns) != 1 || warns[0] != tt.want {
				t.Errorf("skipInvalid: %v, warnings %q, output:\n%s", err, warns, got)
			}
		})
	}
}

// TestChartSourcesFirstOccurrences: with WithFirstOccurrences a source
// keeps its first location and the count of all.
func TestChartSourcesFirstOccurrences(t *testing.T) {
	in := helmRepo + "---\n" + strings.Replace(helmRepo, "name: podinfo", "name: podinfo-2", 1)
	for _, tt := range []struct {
		name string
		opts []Option
	}{{"all occurrences", nil}, {"first occurrences", []Option{WithFirstOccurrences()}}} {
		opts := tt.opts
		t.Run(tt.name, func(t *testing.T) {
			rw, err := New(rewrite.Config{}, opts...)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := rw.RewriteBytes([]byte(in), "in.yaml"); err != nil {
				t.Fatal(err)
			}
			cs := rw.Charts()
			wantLocs := 2
			if opts != nil {
				wantLocs = 1
			}
			if len(cs) != 1 || cs[0].Count != 2 || len(cs[0].Locations) != wantLocs || cs[0].Locations[0].Line != 8 {
				t.Errorf("opts %d: %+v", len(opts), cs)
			}
		})
	}
}

// TestChartSourcesListOnly: a Rewriter that only lists lists the chart
// sources; Finder.Find does not take a Flux OCIRepository of a chart for
// an image.
func TestChartSourcesListOnly(t *testing.T) {
	const ociChart = `apiVersion: source.toolkit.fluxcd.io/v1
kind: OCIRepository
metadata: {name: podinfo, namespace: apps}
spec:
  layerSelector: {mediaType: application/vnd.cncf.helm.chart.content.v1.tar+gzip}
  url: oci://ghcr.io/stefanprodan/charts/podinfo
  ref: {tag: 6.5.4}
`
	rw, err := New(rewrite.Config{}, ListOnly())
	if err != nil {
		t.Fatal(err)
	}
	if err := rw.Rewrite(nil, strings.NewReader(helmRepo+"---\n"+ociChart), "in.yaml"); err != nil {
		t.Fatal(err)
	}
	if got := chartLines(rw.Charts()); len(got) != 2 || len(rw.Images()) != 0 {
		t.Errorf("charts %q, images %v", got, rw.Images())
	}
	f, err := NewFinder(nil)
	if err != nil {
		t.Fatal(err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(ociChart), &doc); err != nil {
		t.Fatal(err)
	}
	if got := f.Find(&doc); len(got) != 0 {
		t.Errorf("Find: %+v, want no image", got)
	}
}

// TestBuiltinChartFields: every entry parses, and each kind's group is one
// of the GitOps tools'.
func TestBuiltinChartFields(t *testing.T) {
	groups := map[string]bool{"source.toolkit.fluxcd.io": true, "helm.toolkit.fluxcd.io": true, "argoproj.io": true}
	for _, c := range BuiltinChartFields() {
		if _, err := parseChartField(c); err != nil {
			t.Errorf("%+v: %v", c, err)
		}
		if !groups[c.Group] || len(c.Kinds) == 0 || c.Form == "" {
			t.Errorf("entry %+v", c)
		}
	}
}

// FuzzChartSources asserts, for any input both rewriters accept, that the
// output with chart sources differs from the output without them
// (noChartSources) only by the chart sources reported: each rewritten URL,
// each type set or added; that rewriting it again changes nothing; and
// that the fast path and a full parse agree. Seeds: the documents of the
// GitOps golden inputs and of the other corpora.
func FuzzChartSources(f *testing.F) {
	for _, p := range inputFiles(f, gitopsGoldenDir) {
		sp := newSplitter(bytes.NewReader(readFile(f, p)))
		for {
			d, err := sp.next()
			if err != nil {
				break
			}
			f.Add(d.data)
		}
	}
	for _, d := range corpusDocuments(f) {
		f.Add(d)
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		rw, err := New(rewrite.Config{}, WithWorkers(2))
		if err != nil {
			t.Fatal(err)
		}
		out, err := rw.RewriteBytes(in, "in.yaml")
		if err != nil {
			return
		}
		off, _ := New(rewrite.Config{NoChartSources: true})
		outOff, err := off.RewriteBytes(in, "in.yaml")
		if err != nil {
			t.Fatalf("fails without chart sources only: %v\n%q", err, in)
		}
		// Without chart sources a Flux OCIRepository of a chart is an
		// image: its URL is the image's target there.
		undo := func(c ChartSource, l ChartLocation) string {
			if l.Kind != "OCIRepository" {
				return c.Source
			}
			m, err := rw.Mapper().Map(strings.TrimPrefix(c.Source, "oci://"))
			if err != nil || m.Action != rewrite.Rewritten {
				return c.Source
			}
			return "oci://" + m.Target.RepositoryName()
		}
		chartsChanged(t, rw, outOff, out, undo, false)
		again, _ := New(rewrite.Config{})
		if out2, err := again.RewriteBytes(out, "in.yaml"); err != nil || !bytes.Equal(out, out2) {
			t.Fatalf("not idempotent (%v):\nin:   %q\nout:  %q\nout2: %q", err, in, out, out2)
		}
		full, _ := New(rewrite.Config{})
		full.fullParse = true
		// (A full parse also fails on malformed documents the fast path
		// skips as holding nothing.)
		if out3, err := full.RewriteBytes(in, "in.yaml"); err == nil && !bytes.Equal(out, out3) {
			t.Fatalf("fast path and full parse differ:\n%q\n%q", out, out3)
		}
	})
}
