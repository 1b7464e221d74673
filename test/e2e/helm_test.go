package e2e

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// chartKube is the Kubernetes version the chart tests render for: a helm
// built with `go install` defaults to v1.20.0.
const chartKube = "1.33.0"

// testChart is the path of a chart under testdata/charts.
func testChart(name string) string { return filepath.Join(repoRoot(), "testdata", "charts", name) }

// helmDocs parses a rendered stream and returns its documents, normalised
// (parsed and encoded as JSON, so comments and layout do not count), split
// into ordinary resources and hooks (helm.sh/hook).
func helmDocs(t *testing.T, stream []byte) (ordinary, hooks []string) {
	t.Helper()
	dec := yaml.NewDecoder(bytes.NewReader(stream))
	for {
		var doc map[string]interface{}
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("parsing the rendered stream: %v\n%s", err, stream)
		}
		if doc == nil {
			continue
		}
		js, err := json.Marshal(doc)
		if err != nil {
			t.Fatal(err)
		}
		meta, _ := doc["metadata"].(map[string]interface{})
		ann, _ := meta["annotations"].(map[string]interface{})
		if _, ok := ann["helm.sh/hook"]; ok {
			hooks = append(hooks, string(js))
		} else {
			ordinary = append(ordinary, string(js))
		}
	}
	return ordinary, hooks
}

// TestChartRewriteIsHelmTemplateRewritten: `rehost rewrite CHART` prints
// byte for byte what `helm template CHART --include-crds | rehost rewrite`
// prints, hooks included, with the rendering flags passed the same way.
func TestChartRewriteIsHelmTemplateRewritten(t *testing.T) {
	helm := needTool(t, "helm")
	values := filepath.Join(t.TempDir(), "values.yaml")
	if err := os.WriteFile(values, []byte("image: {tag: \"1.26\"}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, chart string
		flags       []string // the same meaning for helm template and rehost
	}{
		{"parent", "parent", nil},
		{"parent with values", "parent", []string{"-f", values, "--set", "sub-c.enabled=true,tags.backend=false", "--set-string", "sub-a.image.tag=3", "-n", "prod"}},
		{"hooks", "hooks", nil},
		{"hooks skip tests, set-file", "hooks", []string{"--skip-tests", "--set-file", "migrate.image=" + writeTemp(t, "ghcr.io/hooks/migrate:from-file")}},
		{"withcrd api-versions", "withcrd", []string{"--api-versions", "example.com/v1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			common := append([]string{"--kube-version", chartKube}, tt.flags...)
			rendered := run(t, nil, helm, append([]string{"template", "shop", testChart(tt.chart), "--include-crds"}, common...)...)
			want := run(t, rendered, rehostBin(), "rewrite")
			got := run(t, nil, rehostBin(), append([]string{"rewrite", testChart(tt.chart), "--release-name", "shop"}, common...)...)
			if !bytes.Equal(got, want) {
				t.Errorf("rehost rewrite CHART:\n%s\nwant (helm template | rehost rewrite):\n%s", got, want)
			}
			if !bytes.Contains(got, []byte("sea.hub:5000/")) {
				t.Errorf("nothing was rewritten:\n%s", got)
			}
		})
	}
}

func writeTemp(t *testing.T, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "value")
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestChartPostRenderer runs rehost as helm's post-renderer: the ordinary
// documents come out as `rehost rewrite CHART` gives them, while Helm keeps
// the hooks from the post-renderer, so only rehost's own rendering rewrites
// hook images.
func TestChartPostRenderer(t *testing.T) {
	helm := needTool(t, "helm")
	for _, tt := range []struct {
		chart string
		args  []string // rehost arguments after "rewrite"
	}{
		{"parent", nil},
		{"hooks", nil},
		{"withcrd", nil},
		{"parent", []string{"--registry=harbor.local:8443/mirror", "--path-style=nest"}},
	} {
		t.Run(tt.chart+" "+strings.Join(tt.args, " "), func(t *testing.T) {
			args := []string{"template", testChart(tt.chart), "--include-crds", "--kube-version", chartKube, "--post-renderer", rehostBin(), "--post-renderer-args", "rewrite"}
			for _, a := range tt.args {
				args = append(args, "--post-renderer-args", a)
			}
			post := run(t, nil, helm, args...)
			own := run(t, nil, rehostBin(), append([]string{"rewrite", testChart(tt.chart), "--kube-version", chartKube}, tt.args...)...)
			postDocs, postHooks := helmDocs(t, post)
			ownDocs, ownHooks := helmDocs(t, own)
			if len(ownDocs) == 0 {
				t.Fatal("no documents")
			}
			if !reflect.DeepEqual(postDocs, ownDocs) {
				t.Errorf("post-rendered documents:\n%s\nwant (rehost rewrite CHART, hooks left out):\n%s", strings.Join(postDocs, "\n"), strings.Join(ownDocs, "\n"))
			}
			if len(postHooks) != len(ownHooks) {
				t.Fatalf("%d hooks from helm, %d from rehost", len(postHooks), len(ownHooks))
			}
			for i := range ownHooks {
				if strings.Contains(postHooks[i], "sea.hub:5000/") {
					t.Errorf("helm post-rendered a hook (Helm 3 does not; update docs/helm.md):\n%s", postHooks[i])
				}
				if !strings.Contains(ownHooks[i], `"image":"sea.hub:5000/`) {
					t.Errorf("rehost rewrite CHART left a hook image as written:\n%s", ownHooks[i])
				}
			}
		})
	}
}

// chartImages runs `rehost images -o json` and returns the images.
type chartImage struct {
	Source      string `json:"source"`
	Occurrences []struct {
		File   string `json:"file"`
		Origin string `json:"origin"`
	} `json:"occurrences"`
}

// imagesOf decodes the "images" of rehost images -o json into v.
func imagesOf(out []byte, v any) error {
	return json.Unmarshal(out, &struct {
		Images any `json:"images"`
	}{v})
}

func chartImagesJSON(t *testing.T, args ...string) []chartImage {
	t.Helper()
	var imgs []chartImage
	out := run(t, nil, rehostBin(), append([]string{"images", "-o", "json"}, args...)...)
	if err := imagesOf(out, &imgs); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	return imgs
}

// TestChartImagesAgainstHelmTemplate: `helm template CHART | rehost images`
// lists what `rehost images CHART` lists, minus the images only the
// helm.sh/images annotations declare.
func TestChartImagesAgainstHelmTemplate(t *testing.T) {
	helm := needTool(t, "helm")
	for _, tt := range []struct {
		chart          string
		flags          []string
		annotationOnly []string
	}{
		{"parent", nil, []string{"quay.io/parent/operand:3.1", "quay.io/sub-b/sidecar:1.2"}},
		{"parent", []string{"--set", "sub-c.enabled=true,debug.enabled=true"},
			[]string{"docker.io/library/busybox:1.36", "quay.io/parent/operand:3.1", "quay.io/sub-b/sidecar:1.2", "quay.io/sub-c/operand:9.9"}},
		{"hooks", nil, nil},
		{"withcrd", nil, nil},
	} {
		t.Run(tt.chart+" "+strings.Join(tt.flags, " "), func(t *testing.T) {
			common := append([]string{"--kube-version", chartKube}, tt.flags...)
			rendered := run(t, nil, helm, append([]string{"template", testChart(tt.chart), "--include-crds"}, common...)...)
			fromHelm := strings.Fields(string(run(t, rendered, rehostBin(), "images")))
			all := chartImagesJSON(t, append([]string{testChart(tt.chart)}, common...)...)
			var want, annotated []string
			for _, img := range all {
				onlyAnnotation := true
				for _, o := range img.Occurrences {
					if o.Origin != "annotation" {
						onlyAnnotation = false
					}
				}
				if onlyAnnotation {
					annotated = append(annotated, img.Source)
				} else {
					want = append(want, img.Source)
				}
			}
			if !reflect.DeepEqual(fromHelm, want) {
				t.Errorf("helm template | rehost images:\n%s\nwant (rehost images CHART minus annotation-only images):\n%s", strings.Join(fromHelm, "\n"), strings.Join(want, "\n"))
			}
			if !slices.Equal(annotated, tt.annotationOnly) {
				t.Errorf("annotation-only images %q, want %q", annotated, tt.annotationOnly)
			}
			text := strings.Fields(string(run(t, nil, rehostBin(), append([]string{"images", testChart(tt.chart)}, common...)...)))
			if wantAll := slices.Sorted(slices.Values(append(want, annotated...))); !reflect.DeepEqual(text, wantAll) {
				t.Errorf("rehost images CHART:\n%s\nwant:\n%s", strings.Join(text, "\n"), strings.Join(wantAll, "\n"))
			}
		})
	}
	// The hook and test images are in rehost's list.
	hooks := strings.Fields(string(run(t, nil, rehostBin(), "images", testChart("hooks"))))
	for _, img := range []string{"ghcr.io/hooks/migrate:1.0", "docker.io/library/busybox:1.36"} {
		if !slices.Contains(hooks, img) {
			t.Errorf("rehost images hooks: %q lacks the hook image %s", hooks, img)
		}
	}
}

// TestChartOutputDir: `rehost rewrite CHART --output-dir DIR` writes the
// files `helm template --output-dir` writes, each rewritten.
func TestChartOutputDir(t *testing.T) {
	helm := needTool(t, "helm")
	for _, chart := range []string{"parent", "hooks", "withcrd"} {
		t.Run(chart, func(t *testing.T) {
			helmDir, ownDir := t.TempDir(), filepath.Join(t.TempDir(), "out")
			run(t, nil, helm, "template", testChart(chart), "--include-crds", "--kube-version", chartKube, "--output-dir", helmDir)
			if out := run(t, nil, rehostBin(), "rewrite", testChart(chart), "--kube-version", chartKube, "--output-dir", ownDir); len(out) != 0 {
				t.Errorf("stdout with --output-dir: %s", out)
			}
			helmFiles, ownFiles := listFiles(t, helmDir), listFiles(t, ownDir)
			if !reflect.DeepEqual(ownFiles, helmFiles) {
				t.Fatalf("files:\n%s\nwant (helm template --output-dir):\n%s", strings.Join(ownFiles, "\n"), strings.Join(helmFiles, "\n"))
			}
			if chart == "parent" {
				agent, err := os.ReadFile(filepath.Join(ownDir, "parent/templates/agent.yaml"))
				if err != nil || bytes.Count(agent, []byte("# Source: parent/templates/agent.yaml\n")) != 2 {
					t.Errorf("parent/templates/agent.yaml does not hold its two documents (%v):\n%s", err, agent)
				}
			}
			for _, f := range helmFiles {
				want := run(t, nil, rehostBin(), "rewrite", filepath.Join(helmDir, f))
				got, err := os.ReadFile(filepath.Join(ownDir, f))
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, want) {
					t.Errorf("%s:\n%s\nwant:\n%s", f, got, want)
				}
			}
		})
	}
}

func listFiles(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		out = append(out, filepath.ToSlash(rel))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

// TestChartPackaged lists the images of a chart packaged by `helm package`,
// alone and found in a directory beside manifests.
func TestChartPackaged(t *testing.T) {
	helm := needTool(t, "helm")
	dir := t.TempDir()
	run(t, nil, helm, "package", testChart("parent"), "--destination", dir)
	tgz := filepath.Join(dir, "parent-0.1.0.tgz")
	want := run(t, nil, rehostBin(), "images", testChart("parent"))
	if got := run(t, nil, rehostBin(), "images", tgz); !bytes.Equal(got, want) {
		t.Errorf("rehost images %s:\n%s\nwant (the chart directory):\n%s", filepath.Base(tgz), got, want)
	}
	pod := "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers: [{name: c, image: alpine:3.20}]\n"
	if err := os.WriteFile(filepath.Join(dir, "pod.yaml"), []byte(pod), 0o644); err != nil {
		t.Fatal(err)
	}
	got := strings.Fields(string(run(t, nil, rehostBin(), "images", dir)))
	wantAll := slices.Sorted(slices.Values(append(strings.Fields(string(want)), "docker.io/library/alpine:3.20")))
	if !reflect.DeepEqual(got, wantAll) {
		t.Errorf("rehost images DIR:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(wantAll, "\n"))
	}
	// With --output-dir, the packaged chart's templates go under its name.
	out := filepath.Join(t.TempDir(), "out")
	run(t, nil, rehostBin(), "rewrite", dir, "--output-dir", out)
	files := listFiles(t, out)
	for _, f := range []string{"pod.yaml", "parent/templates/agent.yaml", "parent/charts/worker/templates/statefulset.yaml"} {
		if !slices.Contains(files, f) {
			t.Errorf("--output-dir files %q lack %s", files, f)
		}
	}
}

// TestChartInDirectory: a directory holding a chart renders it; its
// templates are never read as manifests.
func TestChartInDirectory(t *testing.T) {
	dir := t.TempDir()
	if err := os.CopyFS(filepath.Join(dir, "apps", "hooks"), os.DirFS(testChart("hooks"))); err != nil {
		t.Fatal(err)
	}
	pod := "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers: [{name: c, image: alpine:3.20}]\n"
	if err := os.WriteFile(filepath.Join(dir, "pod.yaml"), []byte(pod), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "out")
	run(t, nil, rehostBin(), "rewrite", dir, "--output-dir", out)
	want := []string{
		"apps/hooks/templates/deployment.yaml",
		"apps/hooks/templates/migrate-job.yaml",
		"apps/hooks/templates/tests/test-connection.yaml",
		"pod.yaml",
	}
	if got := listFiles(t, out); !reflect.DeepEqual(got, want) {
		t.Errorf("--output-dir files %q, want %q", got, want)
	}
	job, err := os.ReadFile(filepath.Join(out, "apps/hooks/templates/migrate-job.yaml"))
	if err != nil || !bytes.Contains(job, []byte("image: sea.hub:5000/hooks/migrate:1.0\n")) {
		t.Errorf("the hook is not rendered and rewritten (%v):\n%s", err, job)
	}
}

// TestChartErrors: missing dependencies and template errors fail with a
// clear message and nothing on stdout.
func TestChartErrors(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want []string
	}{
		{[]string{"images", testChart("missingdep"), "--no-fetch-dependencies"}, []string{"redis, postgresql", "helm dependency build"}},
		{[]string{"rewrite", testChart("tplerror")}, []string{"tplerror/templates/deployment.yaml:10:18", "image.repository is required"}},
		{[]string{"rewrite", testChart("hooks"), "--kube-version", "not-a-version"}, []string{"invalid kube version"}},
		{[]string{"images", testChart("hooks"), "-f", "/nonexistent/values.yaml"}, []string{"/nonexistent/values.yaml"}},
	} {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			out, errOut, err := runErr(nil, rehostBin(), tt.args...)
			if err == nil {
				t.Fatalf("no error; stdout:\n%s", out)
			}
			if len(out) != 0 {
				t.Errorf("stdout on error: %s", out)
			}
			for _, w := range tt.want {
				if !strings.Contains(string(errOut), w) {
					t.Errorf("stderr %q lacks %q", errOut, w)
				}
			}
		})
	}
}

// TestChartHelper: rehost finds rehost-helm next to itself when it is not
// on PATH, and says how to install it when it is nowhere.
func TestChartHelper(t *testing.T) {
	dir := t.TempDir()
	copyFile(t, rehostBin(), filepath.Join(dir, "rehost"))
	t.Setenv("PATH", t.TempDir())
	_, errOut, err := runErr(nil, filepath.Join(dir, "rehost"), "images", testChart("hooks"))
	if err == nil || !strings.Contains(string(errOut), "`go install ./cmd/rehost-helm`") || !strings.Contains(string(errOut), "make build") || strings.Contains(string(errOut), "@latest") {
		t.Errorf("without rehost-helm: %v, stderr %q", err, errOut)
	}
	copyFile(t, filepath.Join(binDir, "rehost-helm"), filepath.Join(dir, "rehost-helm"))
	if out := run(t, nil, filepath.Join(dir, "rehost"), "images", testChart("hooks")); !bytes.Contains(out, []byte("ghcr.io/hooks/app:1.0")) {
		t.Errorf("with rehost-helm beside rehost: %s", out)
	}
}

func copyFile(t *testing.T, src, dst string) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, b, 0o755); err != nil {
		t.Fatal(err)
	}
}

// BenchmarkChartCLI compares `rehost images CHART` and `rehost rewrite
// CHART` with `helm template CHART`, process start included. Each
// iteration runs all three, so that a shared machine's load weighs on
// each alike; it reports the time of each and the ratios to helm template.
//
//	go test -run '^$' -bench ChartCLI -count 6 ./test/e2e
func BenchmarkChartCLI(b *testing.B) {
	helm, err := exec.LookPath("helm")
	if err != nil {
		b.Skip("helm not found on PATH")
	}
	chart := testChart("parent")
	cmds := [][]string{
		{helm, "template", chart, "--include-crds"},
		{rehostBin(), "images", chart},
		{rehostBin(), "rewrite", chart},
	}
	total := make([]time.Duration, len(cmds))
	n := 0
	for b.Loop() {
		for k := range cmds {
			i := (n + k) % len(cmds)
			start := time.Now()
			if out, err := exec.Command(cmds[i][0], cmds[i][1:]...).CombinedOutput(); err != nil {
				b.Fatalf("%v: %v\n%s", cmds[i], err, out)
			}
			total[i] += time.Since(start)
		}
		n++
	}
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 / float64(n) }
	b.ReportMetric(ms(total[0]), "helm-template-ms/op")
	b.ReportMetric(ms(total[1]), "rehost-images-ms/op")
	b.ReportMetric(ms(total[2]), "rehost-rewrite-ms/op")
	b.ReportMetric(float64(total[1])/float64(total[0]), "images/helm")
	b.ReportMetric(float64(total[2])/float64(total[0]), "rewrite/helm")
}

// TestRehostDoesNotLinkHelm guards rehost's start-up time: Helm's packages
// cost tens of milliseconds of initialisation at every start, so only the
// rehost-helm helper links them.
func TestRehostDoesNotLinkHelm(t *testing.T) {
	out := run(t, nil, "go", "version", "-m", rehostBin())
	if bytes.Contains(out, []byte("helm.sh/")) || !bytes.Contains(out, []byte("dep\t")) {
		t.Errorf("rehost links Helm (or go version -m lists no modules):\n%s", out)
	}
	if out := run(t, nil, "go", "version", "-m", filepath.Join(binDir, "rehost-helm")); !bytes.Contains(out, []byte("helm.sh/helm/v3")) {
		t.Errorf("rehost-helm does not link Helm:\n%s", out)
	}
}
