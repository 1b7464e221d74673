package e2e

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// chartFixture is a source registry holding the images of a chart "shop"
// 1.2.0 written in a temporary directory: a Deployment, a pre-install Job
// hook, a test Pod hook and a subchart's StatefulSet, each image given by
// a value, and a helm.sh/images annotation.
type chartFixture struct {
	src, dst string
	chart    string            // the chart directory
	images   map[string]string // source reference -> digest
}

func newChartFixture(t *testing.T) *chartFixture {
	t.Helper()
	f := &chartFixture{src: startRegistry(t), dst: startRegistry(t), images: map[string]string{}}
	for _, ref := range []string{"shop/web:1.0", "shop/migrate:1.0", "shop/tester:1.0", "shop/cache:7.2"} {
		img, err := random.Image(1024, 1)
		if err != nil {
			t.Fatal(err)
		}
		f.images[f.src+"/"+ref] = seed(t, f.src+"/"+ref, img)
	}
	f.chart = filepath.Join(t.TempDir(), "shop")
	s := f.src
	writeFiles(t, f.chart, map[string]string{
		"Chart.yaml": `apiVersion: v2
name: shop
version: 1.2.0
description: A shop, for rehost's end-to-end tests.
annotations:
  helm.sh/images: |
    - name: web
      image: ` + s + `/shop/web:1.0
dependencies:
- name: cache
  version: 0.1.0
`,
		"values.yaml": "# The shop.\nweb:\n  image: " + s + "/shop/web:1.0   # the web server\nmigrate:\n  image: " + s + "/shop/migrate:1.0\ntests:\n  image: " + s + "/shop/tester:1.0\n",
		"templates/web.yaml": `apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Release.Name }}-web
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: web
        image: {{ .Values.web.image }}
`,
		"templates/migrate.yaml": `apiVersion: batch/v1
kind: Job
metadata:
  name: {{ .Release.Name }}-migrate
  annotations:
    helm.sh/hook: pre-install
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: migrate
        image: {{ .Values.migrate.image }}
`,
		"templates/tests/test-web.yaml": `apiVersion: v1
kind: Pod
metadata:
  name: {{ .Release.Name }}-test
  annotations:
    helm.sh/hook: test
spec:
  restartPolicy: Never
  containers:
  - name: test
    image: {{ .Values.tests.image }}
`,
		"charts/cache/Chart.yaml":  "apiVersion: v2\nname: cache\nversion: 0.1.0\n",
		"charts/cache/values.yaml": "image: " + s + "/shop/cache:7.2\n",
		"charts/cache/templates/cache.yaml": `apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: {{ .Release.Name }}-cache
spec:
  selector: {matchLabels: {app: cache}}
  template:
    metadata: {labels: {app: cache}}
    spec:
      containers:
      - name: cache
        image: {{ .Values.image }}
`,
	})
	return f
}

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// helmEnv is an environment with private Helm directories.
func helmEnv(t *testing.T) []string {
	home := t.TempDir()
	return append(os.Environ(),
		"HELM_CACHE_HOME="+filepath.Join(home, "cache"),
		"HELM_CONFIG_HOME="+filepath.Join(home, "config"),
		"HELM_DATA_HOME="+filepath.Join(home, "data"))
}

// pullAndTemplate pulls chart NAME 1.2.0 from the charts repository of
// registry with helm pull --plain-http, and renders it with helm template
// and no values: it returns the rendered stream.
func pullAndTemplate(t *testing.T, helm, registry, chart, version string) []byte {
	t.Helper()
	env, dir := helmEnv(t), t.TempDir()
	runEnv(t, env, nil, helm, "pull", "oci://"+registry+"/charts/"+chart, "--version", version, "--plain-http", "--destination", dir)
	return runEnv(t, env, nil, helm, "template", filepath.Join(dir, chart+"-"+version+".tgz"), "--kube-version", chartKube)
}

// checkAllAtTarget checks that a rendered stream has the four images of
// the fixture, hooks included, each in the target registry with the
// digest of its source.
func (f *chartFixture) checkAllAtTarget(t *testing.T, what string, stream []byte) {
	t.Helper()
	for _, hook := range []string{"helm.sh/hook: pre-install", "helm.sh/hook: test"} {
		if !bytes.Contains(stream, []byte(hook)) {
			t.Errorf("%s: no %s document:\n%s", what, hook, stream)
		}
	}
	var got []string
	for _, m := range imageLine.FindAllStringSubmatch(string(stream), -1) {
		got = append(got, m[1])
	}
	sort.Strings(got)
	var want []string
	for src := range f.images {
		want = append(want, f.dst+strings.TrimPrefix(src, f.src))
	}
	sort.Strings(want)
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("%s renders the images %v, want %v", what, got, want)
	}
	for src, d := range f.images {
		if got := digestOf(t, f.dst+strings.TrimPrefix(src, f.src)); got != d {
			t.Errorf("%s: %s has digest %q at the target, want %s", what, src, got, d)
		}
	}
}

// TestMirrorChartRelocated: rehost mirror copies a chart's images and
// pushes the chart, relocated, as an OCI Helm chart to
// <registry>/charts/shop:1.2.0; helm pull oci://… (Helm 3 and Helm 4)
// then helm template with no values renders every image, hooks and the
// subchart's included, at the target, where each is. A second run skips
// the chart; a dry run lists it with its digest.
func TestMirrorChartRelocated(t *testing.T) {
	helms := helmBinaries(t)
	f := newChartFixture(t)
	_, errOut := mustMirror(t, "--registry", f.dst, "--insecure", "--progress", "plain", "--kube-version", chartKube, f.chart)
	for _, want := range []string{"4 copied, 0 skipped, 0 failed", "charts: 1 pushed, 0 skipped, 0 failed", "copied  chart " + f.chart + " -> " + f.dst + "/charts/shop:1.2.0 (sha256:"} {
		if !strings.Contains(string(errOut), want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
	for name, helm := range helms {
		f.checkAllAtTarget(t, name+" template of the pulled chart", pullAndTemplate(t, helm, f.dst, "shop", "1.2.0"))
	}
	// Its values file keeps its comments; the annotation names the target.
	env := helmEnv(t)
	values := runEnv(t, env, nil, helms["helm3"], "show", "values", "oci://"+f.dst+"/charts/shop", "--version", "1.2.0", "--plain-http")
	if !bytes.Contains(values, []byte("image: "+f.dst+"/shop/web:1.0   # the web server")) {
		t.Errorf("helm show values:\n%s", values)
	}
	meta := runEnv(t, env, nil, helms["helm3"], "show", "chart", "oci://"+f.dst+"/charts/shop", "--version", "1.2.0", "--plain-http")
	if !bytes.Contains(meta, []byte("image: "+f.dst+"/shop/web:1.0")) {
		t.Errorf("helm show chart: the helm.sh/images annotation is not relocated:\n%s", meta)
	}

	digest := digestOf(t, f.dst+"/charts/shop:1.2.0")
	_, errOut = mustMirror(t, "--registry", f.dst, "--insecure", "--progress", "plain", "--kube-version", chartKube, f.chart)
	if !strings.Contains(string(errOut), "4 skipped") || !strings.Contains(string(errOut), "charts: 0 pushed, 1 skipped, 0 failed") {
		t.Errorf("second run:\n%s", errOut)
	}
	plan, _ := mustMirror(t, "--dry-run", "--registry", f.dst, "--insecure", "--kube-version", chartKube, f.chart)
	if want := "would copy chart " + f.chart + " -> " + f.dst + "/charts/shop:1.2.0 (" + digest + ")\n"; !strings.Contains(string(plan), want) {
		t.Errorf("dry run plan lacks %q:\n%s", want, plan)
	}
	if got := digestOf(t, f.dst+"/charts/shop:1.2.0"); got != digest {
		t.Errorf("the chart's digest changed from %s to %s over runs", digest, got)
	}
	// --pin lines are for rehost rewrite --pins: images only.
	pins, _ := mustMirror(t, "--dry-run", "--pin", "--registry", f.dst, "--insecure", "--kube-version", chartKube, f.chart)
	if lines := strings.Split(strings.TrimSpace(string(pins)), "\n"); len(lines) != len(f.images) || strings.Contains(string(pins), "charts/shop") {
		t.Errorf("--pin:\n%s", pins)
	}
	manifest := filepath.Join(t.TempDir(), "web.yaml")
	writeFiles(t, filepath.Dir(manifest), map[string]string{"web.yaml": "apiVersion: v1\nkind: Pod\nmetadata: {name: web}\nspec:\n  containers:\n  - {name: web, image: " + f.src + "/shop/web:1.0}\n"})
	pinsFile := filepath.Join(t.TempDir(), "pins.tsv")
	if err := os.WriteFile(pinsFile, pins, 0o644); err != nil {
		t.Fatal(err)
	}
	if got := run(t, nil, rehostBin(), "rewrite", "--pins", pinsFile, "--registry", f.dst, manifest); !bytes.Contains(got, []byte("image: "+f.dst+"/shop/web:1.0@"+f.images[f.src+"/shop/web:1.0"])) {
		t.Errorf("rewrite --pins with the pins of a chart:\n%s", got)
	}
}

// TestMirrorChartOCILayout: with --to-oci the chart travels in the layout
// beside its images; --from-oci pushes both, and the pulled chart renders
// every image at the target. A layout pushed into another registry than
// the one its chart was relocated for fails the chart, named, and pushes
// the images.
func TestMirrorChartOCILayout(t *testing.T) {
	helm := needTool(t, "helm")
	f := newChartFixture(t)
	bundle := filepath.Join(t.TempDir(), "bundle")
	_, errOut := mustMirror(t, "--to-oci", bundle, "--registry", f.dst, "--kube-version", chartKube, f.chart)
	if !strings.Contains(string(errOut), "charts: 1 pushed") {
		t.Errorf("--to-oci:\n%s", errOut)
	}
	_, errOut = mustMirror(t, "--from-oci", bundle, "--registry", f.dst, "--insecure", "--progress", "plain")
	if !strings.Contains(string(errOut), "4 copied") || !strings.Contains(string(errOut), "charts: 1 pushed, 0 skipped, 0 failed") {
		t.Errorf("--from-oci:\n%s", errOut)
	}
	f.checkAllAtTarget(t, "helm template of the chart pushed from the layout", pullAndTemplate(t, helm, f.dst, "shop", "1.2.0"))

	other := startRegistry(t)
	out, errOut2, err := runErr(nil, rehostBin(), "mirror", "--from-oci", bundle, "--registry", other, "--insecure", "--progress", "plain")
	if err == nil {
		t.Fatalf("pushing a chart relocated for %s into %s succeeded:\n%s%s", f.dst, other, out, errOut2)
	}
	for _, want := range []string{"4 copied", "charts: 0 pushed, 0 skipped, 1 failed", "mirror: 1 of 1 charts failed:", "chart " + f.chart + " -> " + other + "/charts/shop:1.2.0: its values were relocated for \"" + f.dst + " (path style strip)\""} {
		if !strings.Contains(string(errOut2), want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut2)
		}
	}
	if d := digestOf(t, other+"/charts/shop:1.2.0"); d != "" {
		t.Errorf("the chart was pushed: %s", d)
	}
}

// TestMirrorChartAsIs: --charts as-is pushes a packaged chart's own bytes,
// as helm push does: the same config and chart layer, and the manifest
// annotations but the creation time; helm pull gives the file back.
func TestMirrorChartAsIs(t *testing.T) {
	helm := needTool(t, "helm")
	f := newChartFixture(t)
	env := helmEnv(t)
	pkgDir := t.TempDir()
	runEnv(t, env, nil, helm, "package", f.chart, "--destination", pkgDir)
	tgz := filepath.Join(pkgDir, "shop-1.2.0.tgz")
	mustMirror(t, "--charts", "as-is", "--registry", f.dst, "--insecure", "--kube-version", chartKube, tgz)
	runEnv(t, env, nil, helm, "push", tgz, "oci://"+f.dst+"/helm-pushed", "--plain-http")

	ours, theirs := manifestOf(t, f.dst+"/charts/shop:1.2.0"), manifestOf(t, f.dst+"/helm-pushed/shop:1.2.0")
	if mustJSON(t, ours.Config) != mustJSON(t, theirs.Config) {
		t.Errorf("config %+v, helm push's %+v", ours.Config, theirs.Config)
	}
	if len(ours.Layers) != 1 || len(theirs.Layers) != 1 || ours.Layers[0].Digest != theirs.Layers[0].Digest || ours.Layers[0].MediaType != theirs.Layers[0].MediaType {
		t.Errorf("layers %+v, helm push's %+v", ours.Layers, theirs.Layers)
	}
	if _, ok := theirs.Annotations["org.opencontainers.image.created"]; !ok {
		t.Error("helm push wrote no creation time")
	}
	delete(theirs.Annotations, "org.opencontainers.image.created")
	if a, b := mustJSON(t, ours.Annotations), mustJSON(t, theirs.Annotations); a != b {
		t.Errorf("annotations %s, helm push's %s", a, b)
	}
	dir := t.TempDir()
	runEnv(t, env, nil, helm, "pull", "oci://"+f.dst+"/charts/shop", "--version", "1.2.0", "--plain-http", "--destination", dir)
	if a, b := fileSum(t, tgz), fileSum(t, filepath.Join(dir, "shop-1.2.0.tgz")); a != b {
		t.Errorf("pulled chart %s, pushed %s", b, a)
	}
	// As is, the chart still pulls from the source registry.
	stream := runEnv(t, env, nil, helm, "template", filepath.Join(dir, "shop-1.2.0.tgz"))
	if !bytes.Contains(stream, []byte("image: "+f.src+"/shop/web:1.0")) {
		t.Errorf("the chart pushed as is was changed:\n%s", stream)
	}
}

func manifestOf(t *testing.T, ref string) *v1.Manifest {
	t.Helper()
	r, err := name.ParseReference(ref)
	if err != nil {
		t.Fatal(err)
	}
	img, err := remote.Image(r)
	if err != nil {
		t.Fatalf("%s: %v", ref, err)
	}
	m, err := img.Manifest()
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func mustJSON(t *testing.T, v interface{}) string {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func fileSum(t *testing.T, p string) string {
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// chartRepoServer serves the fixture's chart, packaged by helm package, as
// a chart repository indexed by helm repo index.
func (f *chartFixture) chartRepoServer(t *testing.T, helm string) string {
	t.Helper()
	dir := t.TempDir()
	env := helmEnv(t)
	runEnv(t, env, nil, helm, "package", f.chart, "--destination", dir)
	srv := httptest.NewServer(http.FileServer(http.Dir(dir)))
	t.Cleanup(srv.Close)
	runEnv(t, env, nil, helm, "repo", "index", dir, "--url", srv.URL)
	return srv.URL
}

// TestChartReferences: a chart in a chart repository served over HTTP
// (NAME with --repo URL), in the user's repositories (REPO/NAME with
// --helm-user-config) and in an OCI registry (oci://… with --version) is
// accepted wherever a chart path is: images, rewrite, values, relocate and
// mirror give what they give for the chart directory.
func TestChartReferences(t *testing.T) {
	helm := needTool(t, "helm")
	f := newChartFixture(t)
	repoURL := f.chartRepoServer(t, helm)
	mapping := []string{"--registry", f.dst, "--kube-version", chartKube}
	byRepo := []string{"--repo", repoURL, "shop", "--version", "1.2.0"}

	wantImages := run(t, nil, rehostBin(), append([]string{"images", f.chart}, mapping...)...)
	if got := run(t, nil, rehostBin(), append(append([]string{"images"}, byRepo...), mapping...)...); !bytes.Equal(got, wantImages) || len(wantImages) == 0 {
		t.Errorf("images --repo:\n%s\nwant:\n%s", got, wantImages)
	}
	wantRewrite := run(t, nil, rehostBin(), append([]string{"rewrite", f.chart}, mapping...)...)
	if got := run(t, nil, rehostBin(), append(append([]string{"rewrite"}, byRepo...), mapping...)...); !bytes.Equal(got, wantRewrite) {
		t.Errorf("rewrite --repo:\n%s\nwant:\n%s", got, wantRewrite)
	}
	wantValues := run(t, nil, rehostBin(), append([]string{"values", f.chart}, mapping...)...)
	if got := run(t, nil, rehostBin(), append(append([]string{"values"}, byRepo...), mapping...)...); !bytes.Equal(got, wantValues) {
		t.Errorf("values --repo:\n%s\nwant:\n%s", got, wantValues)
	}
	relocated := filepath.Join(t.TempDir(), "shop-airgap.tgz")
	run(t, nil, rehostBin(), append(append([]string{"relocate", "--output", relocated}, byRepo...), mapping...)...)
	if got := runEnv(t, helmEnv(t), nil, helm, "template", relocated, "--include-crds", "--kube-version", chartKube); !sameStream(got, wantRewrite) {
		t.Errorf("relocate --repo renders:\n%s\nwant:\n%s", got, wantRewrite)
	}

	// The URL of a packaged chart.
	if got := run(t, nil, rehostBin(), append([]string{"images", repoURL + "/shop-1.2.0.tgz"}, mapping...)...); !bytes.Equal(got, wantImages) {
		t.Errorf("images URL:\n%s\nwant:\n%s", got, wantImages)
	}

	// REPO/NAME: a repository the user added, with their Helm directories.
	env := helmEnv(t)
	runEnv(t, env, nil, helm, "repo", "add", "myrepo", repoURL)
	if got := runEnv(t, env, nil, rehostBin(), append([]string{"images", "myrepo/shop", "--helm-user-config"}, mapping...)...); !bytes.Equal(got, wantImages) {
		t.Errorf("images myrepo/shop --helm-user-config:\n%s\nwant:\n%s", got, wantImages)
	}

	// mirror by reference: the chart is pushed, named by its URL.
	_, errOut := mustMirror(t, append(append([]string{}, byRepo...), "--registry", f.dst, "--insecure", "--progress", "plain", "--kube-version", chartKube)...)
	if want := "copied  chart " + repoURL + "/shop-1.2.0.tgz -> " + f.dst + "/charts/shop:1.2.0"; !strings.Contains(string(errOut), want) {
		t.Errorf("mirror --repo: stderr lacks %q:\n%s", want, errOut)
	}
	// oci://: the pushed chart pulls every image from the target, so
	// nothing is left to cache; rewrite leaves it as it is.
	byOCI := []string{"oci://" + f.dst + "/charts/shop", "--version", "1.2.0", "--plain-http"}
	if got := run(t, nil, rehostBin(), append(append([]string{"images"}, byOCI...), mapping...)...); len(got) != 0 {
		t.Errorf("images of the pushed chart: %s", got)
	}
	if got := run(t, nil, rehostBin(), append(append([]string{"rewrite"}, byOCI...), mapping...)...); !bytes.Equal(got, wantRewrite) {
		t.Errorf("rewrite of the pushed chart:\n%s\nwant:\n%s", got, wantRewrite)
	}
}

// sameStream compares two rendered streams without their "# Source:"
// lines and blank lines.
func sameStream(a, b []byte) bool {
	clean := func(x []byte) string {
		var keep []string
		for _, l := range strings.Split(string(x), "\n") {
			if strings.TrimSpace(l) != "" && !strings.HasPrefix(l, "# Source:") {
				keep = append(keep, l)
			}
		}
		return strings.Join(keep, "\n")
	}
	return clean(a) == clean(b)
}

// TestChartBadInput: a reference that cannot be resolved, a version that
// does not exist and a target that refuses the push are each an error
// naming the chart; nothing is pushed, and nothing is reported done.
func TestChartBadInput(t *testing.T) {
	helm := needTool(t, "helm")
	f := newChartFixture(t)
	repoURL := f.chartRepoServer(t, helm)
	readonly := startRegistryWith(t, "127.0.0.1", nil, "  maintenance:\n    readonly:\n      enabled: true\n")
	// The chart is in f.dst at 1.2.0, not at 9.9.9.
	mustMirror(t, "--charts", "as-is", "--registry", f.dst, "--insecure", "--kube-version", chartKube, f.chart)
	for _, tt := range []struct {
		name string
		args []string
		want []string
	}{
		{"unknown repository", []string{"oci://" + f.dst + "/charts/nope", "--version", "1.0.0", "--plain-http"},
			[]string{"fetching chart oci://" + f.dst + "/charts/nope version 1.0.0: "}},
		{"unreachable registry", []string{"oci://127.0.0.1:1/charts/shop", "--version", "1.2.0", "--plain-http"},
			[]string{"fetching chart oci://127.0.0.1:1/charts/shop version 1.2.0: "}},
		{"no such version in the registry", []string{"oci://" + f.dst + "/charts/shop", "--version", "9.9.9", "--plain-http"},
			[]string{"fetching chart oci://" + f.dst + "/charts/shop version 9.9.9: ", "not found"}},
		{"no such version in the repository", []string{"--repo", repoURL, "shop", "--version", "9.9.9"},
			[]string{"fetching chart shop version 9.9.9 in repository " + repoURL + ": no version 9.9.9 of chart shop in " + repoURL + " (it has 1.2.0)"}},
		{"no such chart in the repository", []string{"--repo", repoURL, "nope"},
			[]string{"fetching chart nope in repository " + repoURL + ": no chart nope in " + repoURL}},
		{"REPO/NAME without a repository", []string{"stable/shop"},
			[]string{"stat stable/shop: no such file or directory (a chart in a repository: --repo URL, or --helm-user-config"}},
		{"plain HTTP not allowed", []string{"oci://" + f.dst + "/charts/shop", "--version", "1.2.0"},
			[]string{"server gave HTTP response to HTTPS client (a registry over plain HTTP: --plain-http)"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dst := startRegistry(t)
			out, errOut, err := runErr(nil, rehostBin(), append(append([]string{"mirror"}, tt.args...), "--registry", dst, "--insecure", "--progress", "plain")...)
			if exitCode(err) != 1 {
				t.Fatalf("exit %v, want 1:\n%s%s", err, out, errOut)
			}
			for _, want := range tt.want {
				if !strings.Contains(string(errOut), want) {
					t.Errorf("stderr lacks %q:\n%s", want, errOut)
				}
			}
			if regexp.MustCompile(`copied|pushed`).Match(errOut) {
				t.Errorf("something is reported done:\n%s", errOut)
			}
			if catalog := registryCatalog(t, dst); len(catalog) != 0 {
				t.Errorf("the target holds %v", catalog)
			}
		})
	}

	t.Run("target refuses the push", func(t *testing.T) {
		tiny := filepath.Join(t.TempDir(), "tiny")
		writeFiles(t, tiny, map[string]string{
			"Chart.yaml":        "apiVersion: v2\nname: tiny\nversion: 0.1.0\n",
			"templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: tiny\ndata:\n  a: b\n",
		})
		out, errOut, err := runErr(nil, rehostBin(), "mirror", tiny, "--registry", readonly, "--insecure", "--progress", "plain")
		if exitCode(err) != 1 {
			t.Fatalf("exit %v, want 1:\n%s%s", err, out, errOut)
		}
		for _, want := range []string{"failed  chart " + tiny + " -> " + readonly + "/charts/tiny:0.1.0: ", "charts: 0 pushed, 0 skipped, 1 failed", "mirror: 1 of 1 charts failed:\n  chart " + tiny + " -> " + readonly + "/charts/tiny:0.1.0: ", "405"} {
			if !strings.Contains(string(errOut), want) {
				t.Errorf("stderr lacks %q:\n%s", want, errOut)
			}
		}
		if d := digestOf(t, readonly+"/charts/tiny:0.1.0"); d != "" {
			t.Errorf("the refused chart resolves: %s", d)
		}
	})

	t.Run("image no value moves", func(t *testing.T) {
		chart := filepath.Join(repoRoot(), "testdata", "charts", "airgap")
		dst := startRegistry(t)
		_, errOut, err := runErr(nil, rehostBin(), "mirror", "--dry-run", chart, "--registry", dst, "--kube-version", chartKube, "--attachments", "none")
		if exitCode(err) != 1 || !strings.Contains(string(errOut), "chart "+chart+": 1 image field(s) no value moves") || !strings.Contains(string(errOut), "airgap/templates/web.yaml:18: Deployment release-name-web: spec.template.spec.initContainers[0].image: busybox:1.36") {
			t.Errorf("exit %v:\n%s", err, errOut)
		}
		if _, errOut, err := runErr(nil, rehostBin(), "mirror", "--dry-run", chart, "--registry", dst, "--kube-version", chartKube, "--attachments", "none", "--allow-partial"); err != nil || !strings.Contains(string(errOut), "warning: chart "+chart+": 1 image field(s) no value moves") {
			t.Errorf("--allow-partial: %v\n%s", err, errOut)
		}
	})
}

// exitCode is the exit status of a command that ran (-1 when it did not
// run, 0 without an error).
func exitCode(err error) int {
	var e *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &e):
		return e.ExitCode()
	}
	return -1
}

// registryCatalog lists the repositories of a registry.
func registryCatalog(t *testing.T, host string) []string {
	t.Helper()
	resp, err := http.Get("http://" + host + "/v2/_catalog")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var c struct{ Repositories []string }
	if err := json.NewDecoder(resp.Body).Decode(&c); err != nil {
		t.Fatal(err)
	}
	return c.Repositories
}

// TestMirrorChartsDirectory: a directory of charts (a chart directory and
// a packaged chart) gives a chart job each, beside the manifests' images.
func TestMirrorChartsDirectory(t *testing.T) {
	helm := needTool(t, "helm")
	f := newChartFixture(t)
	dir := t.TempDir()
	tiny := filepath.Join(t.TempDir(), "tiny")
	writeFiles(t, tiny, map[string]string{
		"Chart.yaml":        "apiVersion: v2\nname: tiny\nversion: 0.1.0+g1\n",
		"templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: tiny\ndata:\n  a: b\n",
	})
	runEnv(t, helmEnv(t), nil, helm, "package", tiny, "--destination", filepath.Join(dir, "packaged"))
	if err := os.Rename(f.chart, filepath.Join(dir, "shop")); err != nil {
		t.Fatal(err)
	}
	writeFiles(t, dir, map[string]string{"manifests/pod.yaml": "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - {name: c, image: " + f.src + "/shop/web:1.0}\n"})
	plan, errOut := mustMirror(t, "--dry-run", "--attachments", "none", "--registry", f.dst, "--kube-version", chartKube, dir)
	for _, want := range []string{
		"would copy chart " + filepath.Join(dir, "packaged", "tiny-0.1.0+g1.tgz") + " -> " + f.dst + "/charts/tiny:0.1.0_g1 (sha256:",
		"would copy chart " + filepath.Join(dir, "shop") + " -> " + f.dst + "/charts/shop:1.2.0 (sha256:",
	} {
		if !strings.Contains(string(plan), want) {
			t.Errorf("plan lacks %q:\n%s", want, plan)
		}
	}
	if !strings.Contains(string(errOut), "dry run: 4 images would be copied, 0 failed; charts: 2 would be pushed, 0 failed") {
		t.Errorf("stderr:\n%s", errOut)
	}
}
