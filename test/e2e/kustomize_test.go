package e2e

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// The example kustomization the README and docs/kustomize.md point at, and what its build must
// hold once rehost has run as its transformer.
var (
	kzExampleImages = []string{
		"busybox:1.36", // excluded in rehost.yaml
		"sea.hub:5000/acme/shop-report:2.4.1",
		"sea.hub:5000/library/nginx:1.27.3", // tag set by kustomize's images: first
		"sea.hub:5000/library/postgres:16.4",
		"sea.hub:5000/prometheus/nginx-exporter:0.11.0",
	}
	// The images to cache: busybox is excluded in rehost.yaml.
	kzExampleImageList = `docker.io/library/nginx:1.27.3
docker.io/library/postgres:16.4
ghcr.io/acme/shop-report:2.4.1
quay.io/prometheus/nginx-exporter:0.11.0
`
)

// kzExample copies testdata/examples/kustomize into a temporary directory,
// with exec.path in rehost.yaml set to the rehost binary under test.
func kzExample(t *testing.T) string {
	t.Helper()
	src := filepath.Join(repoRoot(), "testdata", "examples", "kustomize")
	dir := t.TempDir()
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if e.Name() == "rehost.yaml" {
			b = kzSetExecPath(t, b, fnBin())
		}
		if err := os.WriteFile(filepath.Join(dir, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// kzSetExecPath replaces the "path: rehost" line of a function annotation.
func kzSetExecPath(t *testing.T, config []byte, path string) []byte {
	t.Helper()
	old := []byte("path: rehost-fn\n")
	if bytes.Count(config, old) != 1 {
		t.Fatalf("rehost.yaml: want exactly one %q line", old)
	}
	return bytes.Replace(config, old, []byte("path: "+path+"\n"), 1)
}

var kzImageLine = regexp.MustCompile(`(?m)^\s*(?:-\s+)?image: (\S+)$`)

// kzImages returns the sorted values of the image: lines of a stream.
func kzImages(stream []byte) []string {
	var out []string
	for _, m := range kzImageLine.FindAllSubmatch(stream, -1) {
		out = append(out, string(m[1]))
	}
	sort.Strings(out)
	return out
}

// kzDocs splits a kustomize build output into its documents.
func kzDocs(stream []byte) []string {
	var out []string
	for _, d := range strings.Split(string(stream), "\n---\n") {
		if strings.TrimSpace(d) != "" {
			out = append(out, strings.TrimSuffix(d, "\n")+"\n")
		}
	}
	return out
}

// TestKustomizeBuildExample builds the documented example kustomization with
// the real kustomize, rehost running as its exec KRM function.
func TestKustomizeBuildExample(t *testing.T) {
	kustomize := needTool(t, "kustomize")
	dir := kzExample(t)
	out := run(t, nil, kustomize, "build", "--enable-alpha-plugins", "--enable-exec", dir)

	if got := kzImages(out); strings.Join(got, "\n") != strings.Join(kzExampleImages, "\n") {
		t.Errorf("images after kustomize build:\n%s\nwant:\n%s\noutput:\n%s", strings.Join(got, "\n"), strings.Join(kzExampleImages, "\n"), out)
	}

	// The image-list ConfigMap is the only resource rehost adds.
	var imageList string
	var rest []string
	for _, d := range kzDocs(out) {
		if strings.Contains(d, "kind: ConfigMap\n") && strings.Contains(d, "name: rehost-images\n") {
			imageList = d
			continue
		}
		rest = append(rest, d)
	}
	wantList := "  imageList: |\n" + regexp.MustCompile(`(?m)^`).ReplaceAllString(strings.TrimSuffix(kzExampleImageList, "\n"), "    ") + "\n"
	if !strings.Contains(imageList, wantList) {
		t.Errorf("ConfigMap rehost-images:\n%s\nwant it to hold:\n%s", imageList, wantList)
	}

	// Every resource is exactly what "rehost rewrite" makes of the build
	// without the transformer, with the same config file.
	plain := filepath.Join(dir, "kustomization.yaml")
	k, err := os.ReadFile(plain)
	if err != nil {
		t.Fatal(err)
	}
	without := bytes.Replace(k, []byte("transformers:\n- rehost.yaml\n"), []byte{}, 1)
	if bytes.Equal(without, k) {
		t.Fatal("kustomization.yaml: no transformers: [rehost.yaml] to remove")
	}
	if err := os.WriteFile(plain, without, 0o644); err != nil {
		t.Fatal(err)
	}
	raw := run(t, nil, kustomize, "build", dir)
	rewritten := run(t, raw, rehostBin(), "rewrite", "--config", filepath.Join(dir, "rehost.yaml"))
	if got, want := strings.Join(rest, "---\n"), strings.Join(kzDocs(rewritten), "---\n"); got != want {
		t.Errorf("kustomize build with rehost as transformer:\n%s\nkustomize build | rehost rewrite:\n%s", got, want)
	}
	if list := run(t, raw, rehostBin(), "images", "--config", filepath.Join(dir, "rehost.yaml")); string(list) != kzExampleImageList {
		t.Errorf("rehost images:\n%s\nwant the ConfigMap's list:\n%s", list, kzExampleImageList)
	}
}

// TestKustomizeBuildCollision: a collision fails the kustomize build, with
// rehost's message on stderr.
func TestKustomizeBuildCollision(t *testing.T) {
	kustomize := needTool(t, "kustomize")
	dir := kzExample(t)
	clash := `apiVersion: apps/v1
kind: Deployment
metadata:
  name: mirror
spec:
  selector: {matchLabels: {app: mirror}}
  template:
    metadata: {labels: {app: mirror}}
    spec:
      containers:
      - name: exporter
        image: prometheus/nginx-exporter:0.11.0
`
	if err := os.WriteFile(filepath.Join(dir, "clash.yaml"), []byte(clash), 0o644); err != nil {
		t.Fatal(err)
	}
	k, _ := os.ReadFile(filepath.Join(dir, "kustomization.yaml"))
	k = bytes.Replace(k, []byte("- worker.yaml\n"), []byte("- worker.yaml\n- clash.yaml\n"), 1)
	if err := os.WriteFile(filepath.Join(dir, "kustomization.yaml"), k, 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, err := runErr(nil, kustomize, "build", "--enable-alpha-plugins", "--enable-exec", dir)
	if err == nil {
		t.Fatalf("kustomize build succeeded, want a collision error; output:\n%s", out)
	}
	if len(out) != 0 {
		t.Errorf("stdout not empty:\n%s", out)
	}
	for _, want := range []string{
		"rehost-fn: [error] apps/v1/Deployment/shop/mirror spec.template.spec.containers[0].image: image collision:",
		"quay.io/prometheus/nginx-exporter",
		"docker.io/prometheus/nginx-exporter",
		"both map to sea.hub:5000/prometheus/nginx-exporter",
	} {
		if !bytes.Contains(errOut, []byte(want)) {
			t.Errorf("stderr does not contain %q:\n%s", want, errOut)
		}
	}
}

// TestKustomizeBuildBadConfig: a misspelt config field fails the build,
// naming the field.
func TestKustomizeBuildBadConfig(t *testing.T) {
	kustomize := needTool(t, "kustomize")
	dir := kzExample(t)
	cfg := filepath.Join(dir, "rehost.yaml")
	b, _ := os.ReadFile(cfg)
	b = bytes.Replace(b, []byte("registry: sea.hub:5000\n"), []byte("registyr: sea.hub:5000\n"), 1)
	if err := os.WriteFile(cfg, b, 0o644); err != nil {
		t.Fatal(err)
	}
	_, errOut, err := runErr(nil, kustomize, "build", "--enable-alpha-plugins", "--enable-exec", dir)
	if err == nil || !bytes.Contains(errOut, []byte("field registyr not found")) {
		t.Errorf("kustomize build: err = %v, stderr:\n%s\nwant a failure naming registyr", err, errOut)
	}
}

// kzFnRunDir is a directory of plain manifests for "kustomize fn run": the
// example's resources without its kustomization.
func kzFnRunDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, name := range []string{"web.yaml", "worker.yaml"} {
		b, err := os.ReadFile(filepath.Join(repoRoot(), "testdata", "examples", "kustomize", name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// kzCheckFnRun checks a directory after "kustomize fn run": each manifest
// differs from the original only on its rewritten image lines, and the
// image-list ConfigMap was written to a new file.
func kzCheckFnRun(t *testing.T, dir string, wantImages []string) {
	t.Helper()
	var all []byte
	for _, name := range []string{"web.yaml", "worker.yaml"} {
		orig, _ := os.ReadFile(filepath.Join(repoRoot(), "testdata", "examples", "kustomize", name))
		got, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, got...)
		ol, gl := strings.Split(string(orig), "\n"), strings.Split(string(got), "\n")
		if len(ol) != len(gl) {
			t.Errorf("%s: %d lines, want %d:\n%s", name, len(gl), len(ol), got)
			continue
		}
		for i := range ol {
			if ol[i] != gl[i] && !(kzImageLine.MatchString(ol[i]) && kzImageLine.MatchString(gl[i])) {
				t.Errorf("%s:%d: %q became %q; only image lines may change", name, i+1, ol[i], gl[i])
			}
		}
	}
	if got := kzImages(all); strings.Join(got, "\n") != strings.Join(wantImages, "\n") {
		t.Errorf("images after kustomize fn run:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(wantImages, "\n"))
	}
	cm, err := os.ReadFile(filepath.Join(dir, "configmap_rehost-images.yaml"))
	if err != nil {
		t.Fatalf("image-list ConfigMap file: %v", err)
	}
	if !bytes.Contains(cm, []byte("name: rehost-images\n")) || !bytes.Contains(cm, []byte("docker.io/library/nginx:latest\n")) {
		t.Errorf("configmap_rehost-images.yaml:\n%s", cm)
	}
}

// fnRunImages are the example's images after "kustomize fn run" (no
// kustomize images: transformer, so nginx keeps its implicit :latest).
var fnRunImages = []string{
	"busybox:1.36",
	"sea.hub:5000/acme/shop-report:2.4.1",
	"sea.hub:5000/library/nginx",
	"sea.hub:5000/library/postgres:16.4",
	"sea.hub:5000/prometheus/nginx-exporter:0.11.0",
}

// TestKustomizeFnRunExecPath runs rehost on a directory with "kustomize fn
// run --enable-exec --exec-path", configured by a ConfigMap built from the
// key=value arguments. --exec-path execs the path with no arguments: the
// rehost-fn binary. Re-running leaves the
// manifests unchanged; the image list then names the images as the
// manifests now hold them (in the target registry: the sources are gone).
func TestKustomizeFnRunExecPath(t *testing.T) {
	kustomize := needTool(t, "kustomize")
	dir := kzFnRunDir(t)
	wrapper := fnBin()
	args := []string{"fn", "run", dir, "--enable-exec", "--exec-path", wrapper, "--",
		"registry=sea.hub:5000", "exclude=docker.io/library/busybox", "imageList=rehost-images"}
	run(t, nil, kustomize, args...)
	kzCheckFnRun(t, dir, fnRunImages)

	const listFile = "configmap_rehost-images.yaml"
	snapshot := func() map[string]string {
		m := map[string]string{}
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			b, _ := os.ReadFile(filepath.Join(dir, e.Name()))
			m[e.Name()] = string(b)
		}
		return m
	}
	before := snapshot()
	run(t, nil, kustomize, args...)
	after := snapshot()
	if len(after) != len(before) {
		t.Errorf("second run: %d files, want %d", len(after), len(before))
	}
	for name, b := range before {
		if name != listFile && after[name] != b {
			t.Errorf("second run changed %s:\n%s\nwas:\n%s", name, after[name], b)
		}
	}
	if !strings.Contains(after[listFile], "    sea.hub:5000/library/nginx:latest\n") || strings.Contains(after[listFile], "docker.io/library/nginx") {
		t.Errorf("second run: %s:\n%s\nwant the images as the manifests now hold them", listFile, after[listFile])
	}
}

// TestKustomizeFnRunDiscovered runs "kustomize fn run --enable-exec" on a
// directory holding the example's rehost.yaml: kustomize finds the function
// by its annotation and execs exec.path with exec.args ([fn]).
func TestKustomizeFnRunDiscovered(t *testing.T) {
	kustomize := needTool(t, "kustomize")
	dir := kzFnRunDir(t)
	cfg, err := os.ReadFile(filepath.Join(repoRoot(), "testdata", "examples", "kustomize", "rehost.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "rehost.yaml"), kzSetExecPath(t, cfg, fnBin()), 0o644); err != nil {
		t.Fatal(err)
	}
	run(t, nil, kustomize, "fn", "run", dir, "--enable-exec")
	kzCheckFnRun(t, dir, fnRunImages)
}

// TestFnResourceList pipes a ResourceList whose items carry kyaml's
// annotations through the binary: the output is the golden file the unit
// tests of pkg/krmfn check (annotations kept, images rewritten, results).
func TestFnResourceList(t *testing.T) {
	dir := filepath.Join(repoRoot(), "testdata", "krmfn", "annotations")
	in, err := os.ReadFile(filepath.Join(dir, "resourcelist.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(filepath.Join(dir, "resourcelist.expected.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if got := run(t, in, rehostBin(), "fn"); !bytes.Equal(got, want) {
		t.Errorf("rehost fn:\n%s\nwant:\n%s", got, want)
	}
}

// TestFnFailure: on a collision "rehost fn" exits non-zero, prints the
// error results on stderr and still writes the ResourceList with them.
func TestFnFailure(t *testing.T) {
	in, err := os.ReadFile(filepath.Join(repoRoot(), "testdata", "krmfn", "collision", "input.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	out, errOut, err := runErr(in, rehostBin(), "fn")
	if err == nil {
		t.Fatal("rehost fn succeeded on a collision")
	}
	if !bytes.HasPrefix(errOut, []byte("rehost fn: [error] apps/v1/Deployment/team/b spec.template.spec.containers[0].image: image collision:")) {
		t.Errorf("stderr:\n%s", errOut)
	}
	if !bytes.Contains(out, []byte("kind: ResourceList")) || !bytes.Contains(out, []byte("severity: error")) {
		t.Errorf("stdout has no ResourceList with an error result:\n%s", out)
	}
}

// TestFnHelpAndFiles: "rehost fn --help" is rehost-fn's help under the name
// "rehost fn", and "rehost fn CONFIG FILE..." rewrites every file, also one
// that does not start with "---".
func TestFnHelpAndFiles(t *testing.T) {
	help := string(run(t, nil, rehostBin(), "fn", "--help"))
	if !strings.Contains(help, "Usage:\n  rehost fn [CONFIG [FILE...]]") || strings.Contains(help, "Usage:\n  rehost-fn") {
		t.Errorf("rehost fn --help:\n%s", help)
	}
	dir := t.TempDir()
	files := map[string]string{
		"rehost.yaml": "apiVersion: rehost.dev/v1alpha1\nkind: RewriteConfig\nregistry: sea.hub:5000\n",
		"a.yaml":      "apiVersion: v1\nkind: Pod\nmetadata:\n  name: a\nspec:\n  containers:\n  - name: main\n    image: nginx:1.25\n",
		"b.yaml":      "apiVersion: v1\nkind: Pod\nmetadata:\n  name: b\nspec:\n  containers:\n  - name: main\n    image: redis:7\n",
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out := string(run(t, nil, rehostBin(), "fn", filepath.Join(dir, "rehost.yaml"), filepath.Join(dir, "a.yaml"), filepath.Join(dir, "b.yaml")))
	if !strings.Contains(out, "image: sea.hub:5000/library/nginx:1.25\n") || !strings.Contains(out, "image: sea.hub:5000/library/redis:7\n") || !strings.Contains(out, "name: b\n") {
		t.Errorf("rehost fn CONFIG a.yaml b.yaml:\n%s\nwant both Pods rewritten", out)
	}
}

// TestKustomizeFnRunOperator: through "kustomize fn run", the function
// sets the tigera Installation's registry, as "rehost rewrite" does, and
// leaves the other lines of the upstream custom-resources.yaml alone.
func TestKustomizeFnRunOperator(t *testing.T) {
	kustomize := needTool(t, "kustomize")
	dir := t.TempDir()
	orig, err := os.ReadFile(filepath.Join(repoRoot(), "testdata", "operators", "calico-app", "custom-resources.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "custom-resources.yaml")
	if err := os.WriteFile(file, orig, 0o644); err != nil {
		t.Fatal(err)
	}
	run(t, nil, kustomize, "fn", "run", dir, "--enable-exec", "--exec-path", fnBin(), "--", "registry=sea.hub:5000")
	got, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	// A key of the Installation's spec (kyaml places it).
	inst, _, _ := strings.Cut(string(got), "kind: APIServer")
	if !strings.Contains(inst, "\n  registry: sea.hub:5000/\n") || strings.Count(string(got), "registry:") != 1 {
		t.Fatalf("no registry in the Installation's spec:\n%s", got)
	}
	// Every original line is still there, in order.
	rest := string(got)
	for _, l := range strings.Split(strings.TrimSpace(string(orig)), "\n") {
		if l = strings.TrimSpace(l); l == "" || l == "---" {
			continue
		}
		i := strings.Index(rest, l)
		if i < 0 {
			t.Fatalf("line %q lost or reordered:\n%s", l, got)
		}
		rest = rest[i+len(l):]
	}
}
