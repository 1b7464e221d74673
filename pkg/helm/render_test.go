package helm

import (
	"errors"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/rehost/rehost/pkg/manifest"
	"github.com/rehost/rehost/pkg/rendered"
	"github.com/rehost/rehost/pkg/rewrite"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/cli/values"
)

const chartsDir = "../../testdata/charts"

func chartPath(name string) string { return filepath.Join(chartsDir, name) }

var defaultConfig = rewrite.Config{Registry: "sea.hub:5000"}

// sources renders the chart and returns its sorted unique source images.
func sources(t *testing.T, chart string, opts Options) []string {
	t.Helper()
	rw, err := manifest.New(defaultConfig)
	if err != nil {
		t.Fatal(err)
	}
	if err := Images(rw, chartPath(chart), opts); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, img := range rw.Images() {
		out = append(out, img.Source)
	}
	return out
}

func names(c *rendered.Chart) []string {
	var out []string
	for _, m := range c.Manifests {
		out = append(out, m.Name)
	}
	return out
}

func mustRender(t *testing.T, chart string, opts Options) *rendered.Chart {
	t.Helper()
	c, err := Render(chartPath(chart), opts)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestSubcharts covers the parent chart: its values override sub-a's image
// tag, a condition disables sub-c, sub-b is installed under an alias and a
// tag, and helm.sh/images annotations add images, one of them conditional.
func TestSubcharts(t *testing.T) {
	base := []string{
		"docker.io/library/nginx:1.25",
		"docker.io/library/redis:7.2",      // sub-b, as "worker"
		"docker.io/team/sub-a-migrate:1.0", // imported from sub-a's values (import-values)
		"docker.io/team/sub-a:2.0-parent",  // the parent's tag, not sub-a's 1.0-default
		"ghcr.io/parent/agent:v0.4.2",      // the DaemonSet of a two-document template
		"quay.io/parent/operand:3.1",       // parent's annotation
		"quay.io/sub-b/sidecar:1.2",        // worker's annotation
		"registry.k8s.io/pause:3.9",        // an init container
	}
	without := func(drop ...string) []string {
		return slices.DeleteFunc(slices.Clone(base), func(s string) bool { return slices.Contains(drop, s) })
	}
	with := func(add ...string) []string {
		out := append(slices.Clone(base), add...)
		slices.Sort(out)
		return out
	}
	valuesFile := filepath.Join(t.TempDir(), "values.yaml")
	if err := os.WriteFile(valuesFile, []byte("image: {tag: \"1.26\"}\nsub-a: {image: {tag: from-file}}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tagFile := filepath.Join(t.TempDir(), "tag")
	if err := os.WriteFile(tagFile, []byte("from-set-file"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		values values.Options
		want   []string
	}{
		{"defaults", values.Options{}, base},
		{"condition enables sub-c and its annotation",
			values.Options{Values: []string{"sub-c.enabled=true"}},
			with("docker.io/team/sub-c:9.9", "quay.io/sub-c/operand:9.9")},
		{"condition disables sub-a",
			values.Options{Values: []string{"sub-a.enabled=false"}},
			without("docker.io/team/sub-a:2.0-parent", "docker.io/team/sub-a-migrate:1.0")},
		{"tag disables the aliased sub-b and its annotation",
			values.Options{Values: []string{"tags.backend=false"}},
			without("docker.io/library/redis:7.2", "quay.io/sub-b/sidecar:1.2")},
		{"value under the alias",
			values.Options{Values: []string{"worker.image=redis:7.4"}},
			replace(base, "docker.io/library/redis:7.2", "docker.io/library/redis:7.4")},
		{"annotation entry condition",
			values.Options{Values: []string{"debug.enabled=true"}},
			with("docker.io/library/busybox:1.36")},
		{"values file, later --set wins",
			values.Options{ValueFiles: []string{valuesFile}, Values: []string{"image.tag=1.27"}},
			replace(replace(base, "docker.io/library/nginx:1.25", "docker.io/library/nginx:1.27"),
				"docker.io/team/sub-a:2.0-parent", "docker.io/team/sub-a:from-file")},
		{"set-string and set-file",
			values.Options{StringValues: []string{"image.tag=1.26"}, FileValues: []string{"sub-a.image.tag=" + tagFile}},
			replace(replace(base, "docker.io/library/nginx:1.25", "docker.io/library/nginx:1.26"),
				"docker.io/team/sub-a:2.0-parent", "docker.io/team/sub-a:from-set-file")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := sources(t, "parent", Options{Values: tt.values})
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("images:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

// replace returns list with old replaced by new, sorted.
func replace(list []string, old, new string) []string {
	out := slices.Clone(list)
	i := slices.Index(out, old)
	if i < 0 {
		panic(old + " not in list")
	}
	out[i] = new
	slices.Sort(out)
	return out
}

func TestParentManifests(t *testing.T) {
	c := mustRender(t, "parent", Options{})
	if c.Name != "parent" || c.Format != rendered.Format {
		t.Errorf("chart %q format %d", c.Name, c.Format)
	}
	// Helm's install order: ConfigMap, DaemonSet, then Deployments and the
	// StatefulSet by name; the two documents of agent.yaml are apart
	// from each other only by kind.
	want := []string{
		"parent/templates/agent.yaml",
		"parent/templates/agent.yaml",
		"parent/charts/sub-a/templates/deployment.yaml",
		"parent/templates/deployment.yaml",
		"parent/charts/worker/templates/statefulset.yaml",
	}
	if got := names(c); !reflect.DeepEqual(got, want) {
		t.Errorf("manifests:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, m := range c.Manifests {
		if strings.Contains(m.Content, "NOTES.txt") || strings.Contains(m.Content, "is installed as") {
			t.Errorf("NOTES.txt rendered as a manifest in %s", m.Name)
		}
		if strings.Contains(m.Content, "from-cluster") {
			t.Errorf("%s: lookup returned an object; it must return nothing offline", m.Name)
		}
		if m.IsHook() {
			t.Errorf("%s is a hook", m.Name)
		}
	}
	wantImages := []rendered.AnnotatedImage{
		{Chart: "parent", Key: "helm.sh/images", Index: 0, Name: "operand", Image: "quay.io/parent/operand:3.1"},
		{Chart: "parent/charts/worker", Key: "helm.sh/images", Index: 0, Name: "worker-sidecar", Image: "quay.io/sub-b/sidecar:1.2"},
	}
	if !reflect.DeepEqual(c.Images, wantImages) {
		t.Errorf("annotation images %+v, want %+v", c.Images, wantImages)
	}
}

func TestReleaseNameAndNamespace(t *testing.T) {
	c := mustRender(t, "parent", Options{ReleaseName: "shop", Namespace: "prod"})
	dep := c.Manifests[3]
	if dep.Name != "parent/templates/deployment.yaml" || !strings.Contains(dep.Content, "name: shop-parent\n  namespace: prod\n") {
		t.Errorf("%s:\n%s\nwant name shop-parent in namespace prod", dep.Name, dep.Content)
	}
	if _, err := Render(chartPath("parent"), Options{ReleaseName: "Not_Valid"}); err == nil || !strings.Contains(err.Error(), "release name") {
		t.Errorf("invalid release name: error %v", err)
	}
}

func TestHooks(t *testing.T) {
	c := mustRender(t, "hooks", Options{})
	type doc struct {
		name string
		hook []string
	}
	var got []doc
	for _, m := range c.Manifests {
		got = append(got, doc{m.Name, m.Hook})
	}
	want := []doc{
		{"hooks/templates/deployment.yaml", nil}, // Service
		{"hooks/templates/deployment.yaml", nil}, // Deployment
		{"hooks/templates/tests/test-connection.yaml", []string{"test"}},
		{"hooks/templates/migrate-job.yaml", []string{"pre-install", "pre-upgrade"}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("manifests %v, want %v", got, want)
	}
	all := []string{"docker.io/library/busybox:1.36", "ghcr.io/hooks/app:1.0", "ghcr.io/hooks/migrate:1.0"}
	if got := sources(t, "hooks", Options{}); !reflect.DeepEqual(got, all) {
		t.Errorf("images %q, want %q (hook and test images included)", got, all)
	}
	noTests := []string{"ghcr.io/hooks/app:1.0", "ghcr.io/hooks/migrate:1.0"}
	if got := sources(t, "hooks", Options{SkipTests: true}); !reflect.DeepEqual(got, noTests) {
		t.Errorf("SkipTests: images %q, want %q", got, noTests)
	}
}

func TestCRDsAndCapabilities(t *testing.T) {
	c := mustRender(t, "withcrd", Options{KubeVersion: "1.33.0", APIVersions: []string{"example.com/v1"}})
	want := []string{"withcrd/crds/widgets.yaml", "withcrd/templates/capabilities.yaml", "withcrd/templates/widget.yaml"}
	if got := names(c); !reflect.DeepEqual(got, want) {
		t.Errorf("manifests %q, want %q", got, want)
	}
	crd, err := os.ReadFile(chartPath("withcrd/crds/widgets.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if c.Manifests[0].Content != string(crd) {
		t.Errorf("the CRD is not rendered byte for byte")
	}
	if cm := c.Manifests[1].Content; !strings.Contains(cm, `kubeVersion: "v1.33.0"`) || !strings.Contains(cm, `hasWidgetsAPI: "true"`) {
		t.Errorf("capabilities not applied:\n%s", cm)
	}
	// The CRD schema's default is not an image; the Widget's container is.
	if got, want := sources(t, "withcrd", Options{}), []string{"quay.io/widgets/widget:2.0"}; !reflect.DeepEqual(got, want) {
		t.Errorf("images %q, want %q", got, want)
	}

	c = mustRender(t, "withcrd", Options{SkipCRDs: true})
	if got := names(c); slices.Contains(got, "withcrd/crds/widgets.yaml") {
		t.Errorf("SkipCRDs: manifests %q", got)
	}
	if cm := c.Manifests[0].Content; !strings.Contains(cm, `hasWidgetsAPI: "false"`) {
		t.Errorf("without --api-versions:\n%s", cm)
	}

	if _, err := Render(chartPath("withcrd"), Options{KubeVersion: "one.two"}); err == nil || !strings.Contains(err.Error(), "invalid kube version") {
		t.Errorf("bad kube version: error %v", err)
	}
}

// TestPackaged renders a packaged copy of the parent chart, made with
// Helm's chartutil.Save, and gets what the directory gives.
func TestPackaged(t *testing.T) {
	ch, err := Load(chartPath("parent"))
	if err != nil {
		t.Fatal(err)
	}
	tgz, err := chartutil.Save(ch, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Base(tgz) != "parent-0.1.0.tgz" {
		t.Fatalf("packaged as %s", tgz)
	}
	opts := Options{Values: values.Options{Values: []string{"sub-c.enabled=true"}}}
	fromDir := mustRender(t, "parent", opts)
	fromTgz, err := Render(tgz, opts)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(fromTgz, fromDir) {
		t.Errorf("packaged chart renders differently:\n%+v\nwant:\n%+v", fromTgz, fromDir)
	}
}

func TestMissingDependencies(t *testing.T) {
	_, err := Render(chartPath("missingdep"), Options{})
	if !errors.Is(err, ErrMissingDependencies) {
		t.Fatalf("error %v, want ErrMissingDependencies", err)
	}
	for _, s := range []string{"redis", "postgresql", "helm dependency build " + chartPath("missingdep")} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q does not name %q", err, s)
		}
	}
}

func TestTemplateError(t *testing.T) {
	_, err := Render(chartPath("tplerror"), Options{})
	if err == nil {
		t.Fatal("no error")
	}
	for _, s := range []string{"tplerror/templates/deployment.yaml:10:", "image.repository is required"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q does not contain %q", err, s)
		}
	}
	c := mustRender(t, "tplerror", Options{Values: values.Options{Values: []string{"image.repository=nginx"}}})
	if len(c.Manifests) != 1 || !strings.Contains(c.Manifests[0].Content, "image: nginx") {
		t.Errorf("with the value set: %+v", c.Manifests)
	}
}

func TestBadInput(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string) {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("lib/Chart.yaml", "apiVersion: v2\nname: lib\nversion: 1.0.0\ntype: library\n")
	write("badann/Chart.yaml", "apiVersion: v2\nname: badann\nversion: 1.0.0\nannotations:\n  helm.sh/images: \"- image: [\"\n")
	write("noimage/Chart.yaml", "apiVersion: v2\nname: noimage\nversion: 1.0.0\nannotations:\n  helm.sh/images: \"- name: x\"\n")
	tests := []struct {
		path string
		opts Options
		want string
	}{
		{"lib", Options{}, "library charts are not installable"},
		{"badann", Options{}, "badann/Chart.yaml: annotation helm.sh/images"},
		{"noimage", Options{}, "noimage/Chart.yaml: annotation helm.sh/images: entry 0 has no image"},
		{"nochart", Options{}, "loading chart"},
		// Values files are never fetched: a URL is a missing local file.
		{"lib", Options{Values: values.Options{ValueFiles: []string{"https://example.com/values.yaml"}}}, "https://example.com/values.yaml"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			_, err := Render(filepath.Join(dir, tt.path), tt.opts)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want it to contain %q", err, tt.want)
			}
		})
	}
}

// TestValuesURLNeverFetched: a values file given as a URL is read as a
// local path, which does not exist, and never fetched: a local server that
// would serve valid values receives no request.
func TestValuesURLNeverFetched(t *testing.T) {
	var requests atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		w.Write([]byte("sub-c:\n  enabled: true\n"))
	}))
	defer srv.Close()
	url := srv.URL + "/values.yaml"
	for _, render := range []func() error{
		func() error {
			_, err := Render(chartPath("parent"), Options{Values: values.Options{ValueFiles: []string{url}}})
			return err
		},
		func() error {
			rw, err := manifest.New(defaultConfig)
			if err != nil {
				return err
			}
			return Images(rw, chartPath("parent"), Options{Values: values.Options{ValueFiles: []string{url}}})
		},
	} {
		err := render()
		if err == nil {
			t.Fatal("no error: the values URL was fetched or ignored")
		}
		if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "open "+url+": ") {
			t.Errorf("error %q, want the missing local file %s", err, url)
		}
	}
	if n := requests.Load(); n != 0 {
		t.Errorf("the values URL was requested %d times, want never", n)
	}
}

func TestSplitManifest(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []rendered.Manifest
		err  bool
	}{
		{"empty", "", nil, false},
		{"one", "---\n# Source: a/templates/x.yaml\nkind: A\n", []rendered.Manifest{{Name: "a/templates/x.yaml", Content: "kind: A"}}, false},
		{"raw CRD file with its own separators", "---\n# Source: a/crds/c.yaml\n---\nkind: C1\n---\nkind: C2\n\n---\n# Source: a/templates/x.yaml\nkind: A\n",
			[]rendered.Manifest{{Name: "a/crds/c.yaml", Content: "---\nkind: C1\n---\nkind: C2\n"}, {Name: "a/templates/x.yaml", Content: "kind: A"}}, false},
		{"post-rendered", "kind: A\n", nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := splitManifest(tt.in)
			if (err != nil) != tt.err || !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("splitManifest() = %+v, %v; want %+v (error %t)", got, err, tt.want, tt.err)
			}
			var joined string
			for _, m := range got {
				joined += m.Text()
			}
			if !tt.err && joined != tt.in {
				t.Errorf("the documents do not join back into the manifest:\n%q\nwant:\n%q", joined, tt.in)
			}
		})
	}
}

// TestRenderChart renders a loaded chart with a values map, as a Go program
// holding its values would, and gets what Render gives with --set.
func TestRenderChart(t *testing.T) {
	ch, err := Load(chartPath("parent"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := RenderChart(ch, map[string]interface{}{"sub-c": map[string]interface{}{"enabled": true}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := mustRender(t, "parent", Options{Values: values.Options{Values: []string{"sub-c.enabled=true"}}})
	if !reflect.DeepEqual(got, want) {
		t.Errorf("RenderChart:\n%+v\nwant:\n%+v", got, want)
	}
	if !slices.Contains(names(got), "parent/charts/sub-c/templates/deployment.yaml") {
		t.Errorf("sub-c not rendered: %q", names(got))
	}
}
