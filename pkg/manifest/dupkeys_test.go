package manifest

import (
	"bytes"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/rehost/rehost/pkg/rewrite"
)

// dupCases are documents with duplicate mapping keys: every image value in
// the bytes is listed and rewritten, and each duplicated key holding one
// is reported as a warning naming the file and line.
var dupCases = []struct {
	name string
	in   string
	// images are the sources listed, warnings substrings of the warnings
	// (one entry per warning, in order).
	images   []string
	warnings []string
}{
	{
		name:     "duplicate image key",
		in:       "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n  - name: c\n    image: nginx:1.25\n    image: nginx:1.26\n",
		images:   []string{"docker.io/library/nginx:1.25", "docker.io/library/nginx:1.26"},
		warnings: []string{`in.yaml:9: Pod p: spec.containers[0].image: duplicate key "image" (lines 8, 9) holds image references`},
	},
	{
		name: "duplicate containers key",
		in: "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\n  namespace: ns\nspec:\n  template:\n    spec:\n" +
			"      containers:\n      - name: a\n        image: redis:7\n      containers:\n      - name: b\n        image: quay.io/b/b:1\n",
		images:   []string{"docker.io/library/redis:7", "quay.io/b/b:1"},
		warnings: []string{`in.yaml:12: Deployment ns/d: spec.template.spec.containers: duplicate key "containers" (lines 9, 12)`},
	},
	{
		name:   "duplicate spec in a custom resource",
		in:     "apiVersion: example.com/v1\nkind: Runner\nmetadata:\n  name: r\nspec:\n  containers:\n  - image: a.io/x:1\nspec:\n  containers:\n  - image: a.io/y:2\n",
		images: []string{"a.io/x:1", "a.io/y:2"},
		// The key is at the root but the object is one: no "---" hint.
		warnings: []string{`in.yaml:8: Runner r: spec: duplicate key "spec" (lines 5, 8)`},
	},
	{
		name:     "objects run together without ---",
		in:       pod("nginx:1.25") + strings.Replace(pod("redis:7"), "name: p\n", "name: q\n", 1),
		images:   []string{"docker.io/library/nginx:1.25", "docker.io/library/redis:7"},
		warnings: []string{`in.yaml:10: Pod ns/q: no "---" line before this object`},
	},
	{
		name:     "a Service then a Deployment run together",
		in:       "apiVersion: v1\nkind: Service\nmetadata:\n  name: s\nspec:\n  ports: [{port: 80}]\n" + "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\nspec:\n  template:\n    spec:\n      containers:\n      - name: c\n        image: nginx:1.25\n",
		images:   []string{"docker.io/library/nginx:1.25"},
		warnings: []string{`in.yaml:7: Deployment d: no "---" line before this object`},
	},
	{
		name:     "list item with duplicate image",
		in:       "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Pod\n  metadata: {name: p}\n  spec:\n    containers:\n    - {name: c, image: nginx:1.25, image: nginx:1.26}\n",
		images:   []string{"docker.io/library/nginx:1.25", "docker.io/library/nginx:1.26"},
		warnings: []string{`in.yaml:9: Pod p: items[0].spec.containers[0].image: duplicate key "image" (lines 9, 9)`},
	},
	{
		name:     "duplicate image key, one an alias",
		in:       "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  annotations: {base: &img nginx:1.25}\nspec:\n  containers:\n  - name: c\n    image: *img\n    image: redis:7\n",
		images:   []string{"docker.io/library/nginx:1.25", "docker.io/library/redis:7"},
		warnings: []string{`in.yaml:10: Pod p: spec.containers[0].image: duplicate key "image" (lines 9, 10) holds image references`},
	},
	{
		name:   "duplicate key without an image: no warning",
		in:     "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  labels: {a: b}\n  labels: {c: d}\nspec:\n  containers:\n  - name: c\n    image: nginx:1.25\n",
		images: []string{"docker.io/library/nginx:1.25"},
	},
	{
		name:     "second document: lines counted in the stream",
		in:       "kind: ConfigMap\ndata: {}\n---\n" + "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  initContainers:\n  - name: c\n    image: busybox:1\n    image: busybox:2\n",
		images:   []string{"docker.io/library/busybox:1", "docker.io/library/busybox:2"},
		warnings: []string{`in.yaml:12: Pod p: spec.initContainers[0].image: duplicate key "image" (lines 11, 12)`},
	},
}

func TestDuplicateKeys(t *testing.T) {
	for _, tt := range dupCases {
		t.Run(tt.name, func(t *testing.T) {
			var warns []string
			rw, err := New(rewrite.Config{}, WithWarnings(func(err error) { warns = append(warns, err.Error()) }))
			if err != nil {
				t.Fatal(err)
			}
			out, err := rw.RewriteBytes([]byte(tt.in), "in.yaml")
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(rw.Sources(), "\n"); got != strings.Join(tt.images, "\n") {
				t.Errorf("images:\n%s\nwant:\n%s", got, strings.Join(tt.images, "\n"))
			}
			checkWarnings(t, warns, tt.warnings)
			// Every image value in the bytes was rewritten: no source left.
			for _, img := range rw.Images() {
				for _, o := range img.Occurrences {
					if bytes.Contains(out, []byte("image: "+o.Value+"\n")) || bytes.Contains(out, []byte("image: "+o.Value+"}")) {
						t.Errorf("%s left as written:\n%s", o.Value, out)
					}
				}
			}
			if c := bytes.Count(out, []byte("sea.hub:5000/")); c < len(tt.images) {
				t.Errorf("%d rewritten values, want at least %d:\n%s", c, len(tt.images), out)
			}
		})
	}
}

// TestDuplicateKeysFilter: the kio filter (and so the KRM function) finds
// the same images, rewrites every occurrence and warns the same way.
func TestDuplicateKeysFilter(t *testing.T) {
	for _, tt := range dupCases {
		t.Run(tt.name, func(t *testing.T) {
			var warns []string
			rw, err := New(rewrite.Config{}, WithWarnings(func(err error) { warns = append(warns, err.Error()) }))
			if err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			err = rewriteNodes(rw, tt.in, &out)
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(rw.Sources(), "\n"); got != strings.Join(tt.images, "\n") {
				t.Errorf("images:\n%s\nwant:\n%s", got, strings.Join(tt.images, "\n"))
			}
			if c := strings.Count(out.String(), "sea.hub:5000/"); c < len(tt.images) {
				t.Errorf("%d rewritten values, want at least %d:\n%s", c, len(tt.images), out.String())
			}
			// Compare from the object on, without the lines (a pipeline
			// may count them per document).
			want := make([]string, len(tt.warnings))
			for i, w := range tt.warnings {
				_, rest, _ := strings.Cut(w, ": ")
				want[i] = linesRE.ReplaceAllString(rest, "")
			}
			for i := range warns {
				warns[i] = linesRE.ReplaceAllString(warns[i], "")
			}
			checkWarnings(t, warns, want)
		})
	}
}

func checkWarnings(t *testing.T, got, want []string) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%d warnings, want %d:\n%s", len(got), len(want), strings.Join(got, "\n"))
		return
	}
	for i := range want {
		if !strings.Contains(got[i], want[i]) {
			t.Errorf("warning %d:\n%s\nwant it to contain:\n%s", i, got[i], want[i])
		}
	}
}

var linesRE = regexp.MustCompile(` \(lines [0-9, ]+\)`)

// dupChartCases are GitOps chart sources with a duplicated key: every
// occurrence is listed and rewritten, and the key reported as a duplicate
// image key is (issue 29, item 4).
var dupChartCases = []struct {
	name, in string
	// sources are the chart sources as written, each rewritten once;
	// warning is a substring of the one warning.
	sources []string
	warning string
}{
	{
		name: "Flux HelmRepository url",
		in: "apiVersion: source.toolkit.fluxcd.io/v1\nkind: HelmRepository\nmetadata: {name: r, namespace: flux-system}\nspec:\n" +
			"  interval: 5m\n  url: https://charts.example.com/a\n  url: https://charts.example.com/b\n",
		sources: []string{"https://charts.example.com/a", "https://charts.example.com/b"},
		warning: `in.yaml:7: HelmRepository flux-system/r: spec.url: duplicate key "url" (lines 6, 7) holds chart sources`,
	},
	{
		name: "Flux OCIRepository of a chart url, in a flow map",
		in: "apiVersion: source.toolkit.fluxcd.io/v1\nkind: OCIRepository\nmetadata: {name: o, namespace: apps}\n" +
			"spec: {layerSelector: {mediaType: application/vnd.cncf.helm.chart.content.v1.tar+gzip}, url: oci://ghcr.io/a/podinfo, url: oci://quay.io/b/podinfo, ref: {tag: 6.5.4}}\n",
		sources: []string{"oci://ghcr.io/a/podinfo", "oci://quay.io/b/podinfo"},
		warning: `in.yaml:4: OCIRepository apps/o: spec.url: duplicate key "url" (lines 4, 4) holds chart sources`,
	},
	{
		name: "Flux HelmRelease chart template url",
		in: "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata: {name: h, namespace: apps}\nspec:\n  chart:\n    kind: OCIRepository\n" +
			"    spec:\n      url: oci://ghcr.io/a/podinfo\n      ref: {tag: 6.5.4}\n      url: oci://docker.io/b/podinfo\n",
		sources: []string{"oci://ghcr.io/a/podinfo", "oci://docker.io/b/podinfo"},
		warning: `in.yaml:10: HelmRelease apps/h: spec.chart.spec.url: duplicate key "url" (lines 8, 10) holds chart sources`,
	},
	{
		name: "Argo CD Application repoURL",
		in: "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: a, namespace: argocd}\nspec:\n  source:\n" +
			"    repoURL: https://charts.example.com/a\n    chart: podinfo\n    targetRevision: 6.5.4\n    repoURL: https://charts.example.com/b\n",
		sources: []string{"https://charts.example.com/a", "https://charts.example.com/b"},
		warning: `in.yaml:9: Application argocd/a: spec.source.repoURL: duplicate key "repoURL" (lines 6, 9) holds chart sources`,
	},
	{
		name: "Argo CD Application sources item repoURL",
		in: "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: a, namespace: argocd}\nspec:\n  sources:\n" +
			"  - {repoURL: https://github.com/x/values.git, ref: values}\n  - {repoURL: 'https://charts.example.com/a', chart: podinfo, repoURL: \"https://charts.example.com/b\"}\n",
		sources: []string{"https://charts.example.com/a", "https://charts.example.com/b"},
		warning: `in.yaml:7: Application argocd/a: spec.sources[1].repoURL: duplicate key "repoURL" (lines 7, 7) holds chart sources`,
	},
	{
		name: "Argo CD ApplicationSet template repoURL",
		in: "apiVersion: argoproj.io/v1alpha1\nkind: ApplicationSet\nmetadata: {name: s, namespace: argocd}\nspec:\n  template:\n    spec:\n      source:\n" +
			"        repoURL: https://charts.example.com/a\n        repoURL: https://charts.example.com/b\n        chart: podinfo\n",
		sources: []string{"https://charts.example.com/a", "https://charts.example.com/b"},
		warning: `in.yaml:9: ApplicationSet argocd/s: spec.template.spec.source.repoURL: duplicate key "repoURL" (lines 8, 9) holds chart sources`,
	},
	{
		name: "Argo CD Application duplicate source",
		in: "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: a, namespace: argocd}\nspec:\n" +
			"  source: {repoURL: https://charts.example.com/a, chart: podinfo}\n  source: {repoURL: https://charts.example.com/b, chart: podinfo}\n",
		sources: []string{"https://charts.example.com/a", "https://charts.example.com/b"},
		warning: `in.yaml:6: Application argocd/a: spec.source: duplicate key "source" (lines 5, 6) holds chart sources`,
	},
}

// TestDuplicateChartKeys: in the stream and through the kio filter, each
// value of a duplicated chart source key is rewritten, and one warning
// names the key; a Flux HelmRepository gets one spec.type for its map.
func TestDuplicateChartKeys(t *testing.T) {
	for _, tt := range dupChartCases {
		for _, path := range []string{"stream", "filter"} {
			t.Run(tt.name+"/"+path, func(t *testing.T) {
				var warns []string
				rw, err := New(rewrite.Config{}, WithWarnings(func(err error) { warns = append(warns, err.Error()) }))
				if err != nil {
					t.Fatal(err)
				}
				var out []byte
				if path == "stream" {
					out, err = rw.RewriteBytes([]byte(tt.in), "in.yaml")
				} else {
					var b bytes.Buffer
					err = rewriteNodes(rw, tt.in, &b)
					out = b.Bytes()
				}
				if err != nil {
					t.Fatal(err)
				}
				var sources []string
				for _, c := range rw.Charts() {
					for range c.Locations {
						sources = append(sources, c.Source)
					}
					if c.Action != rewrite.Rewritten {
						t.Errorf("%s: %s", c.Source, c.Action)
					}
				}
				sort.Strings(sources)
				want := append([]string(nil), tt.sources...)
				sort.Strings(want)
				if strings.Join(sources, " ") != strings.Join(want, " ") {
					t.Errorf("chart sources %q, want %q", sources, want)
				}
				for _, s := range tt.sources {
					if bytes.Contains(out, []byte(s)) {
						t.Errorf("%s left as written:\n%s", s, out)
					}
				}
				if n := bytes.Count(out, []byte("sea.hub:5000/charts")); n != len(tt.sources) {
					t.Errorf("%d sources rewritten, want %d:\n%s", n, len(tt.sources), out)
				}
				if n := bytes.Count(out, []byte("type: oci")); strings.Contains(tt.in, "HelmRepository") && n != 1 {
					t.Errorf("spec.type written %d times:\n%s", n, out)
				}
				w := tt.warning
				if path == "filter" {
					_, rest, _ := strings.Cut(w, ": ")
					w = linesRE.ReplaceAllString(rest, "")
					for i := range warns {
						warns[i] = linesRE.ReplaceAllString(warns[i], "")
					}
				}
				checkWarnings(t, warns, []string{w})
			})
		}
	}
}
