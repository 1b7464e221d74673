package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// rehost runs the CLI in process.
func rehost(t *testing.T, stdin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var o, e bytes.Buffer
	code = run(args, strings.NewReader(stdin), &o, &e)
	return o.String(), e.String(), code
}

// decodeImages decodes the "images" of rehost images -o json into v.
func decodeImages(out string, v any) error {
	return json.Unmarshal([]byte(out), &struct {
		Images any `json:"images"`
	}{v})
}

func writeFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

const podNginx = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - {name: c, image: nginx:1.25}\n"
const podBad = "apiVersion: v1\nkind: Pod\nmetadata: {name: bad}\nspec:\n  containers:\n  - {name: c, image: Nginx}\n"

func TestRewriteStdin(t *testing.T) {
	want := strings.Replace(podNginx, "nginx:1.25", "sea.hub:5000/library/nginx:1.25", 1)
	for _, args := range [][]string{{"rewrite"}, {"rewrite", "-"}} {
		out, errOut, code := rehost(t, podNginx, args...)
		if code != 0 || out != want || errOut != "" {
			t.Errorf("%v: code %d, stdout %q, stderr %q", args, code, out, errOut)
		}
	}
}

func TestRewriteDirectory(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"b.yaml":         podNginx,
		"a/x.yml":        "kind: ConfigMap\nmetadata: {name: c}", // no trailing newline
		"c.json":         `{"kind": "Pod", "spec": {"containers": [{"image": "busybox"}]}}` + "\n",
		"README.md":      "image: not a manifest",
		".hidden/h.yaml": podBad,
	})
	out, errOut, code := rehost(t, "", "rewrite", dir)
	if code != 0 {
		t.Fatalf("code %d: %s", code, errOut)
	}
	want := "kind: ConfigMap\nmetadata: {name: c}\n---\n" +
		strings.Replace(podNginx, "nginx:1.25", "sea.hub:5000/library/nginx:1.25", 1) +
		"---\n" + `{"kind": "Pod", "spec": {"containers": [{"image": "sea.hub:5000/library/busybox"}]}}` + "\n"
	if out != want {
		t.Errorf("got:\n%s\nwant:\n%s", out, want)
	}
}

func TestRewriteOutputDir(t *testing.T) {
	dir := writeFiles(t, map[string]string{"in/app/pod.yaml": podNginx, "in/pod.json": `{"kind":"Pod","spec":{"containers":[{"image":"nginx"}]}}`})
	outDir := filepath.Join(dir, "out")
	list := filepath.Join(dir, "imageList")
	stdout, errOut, code := rehost(t, "", "rewrite", filepath.Join(dir, "in"), "--output-dir", outDir, "--image-list", list)
	if code != 0 || stdout != "" {
		t.Fatalf("code %d, stdout %q, stderr %s", code, stdout, errOut)
	}
	got, _ := os.ReadFile(filepath.Join(outDir, "app", "pod.yaml"))
	if !strings.Contains(string(got), "image: sea.hub:5000/library/nginx:1.25") {
		t.Errorf("app/pod.yaml:\n%s", got)
	}
	got, _ = os.ReadFile(filepath.Join(outDir, "pod.json"))
	if string(got) != `{"kind":"Pod","spec":{"containers":[{"image":"sea.hub:5000/library/nginx"}]}}` {
		t.Errorf("pod.json: %s", got)
	}
	got, _ = os.ReadFile(list)
	if string(got) != "docker.io/library/nginx:1.25\ndocker.io/library/nginx:latest\n" {
		t.Errorf("imageList: %q", got)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 3 {
		t.Errorf("staging left behind: %v", entries)
	}
}

// TestAllOrNothing: when any input fails, nothing is written: not to
// stdout, not to --output-dir, not in place, not the image list.
func TestAllOrNothing(t *testing.T) {
	files := map[string]string{"a.yaml": podNginx, "b.yaml": podBad}
	t.Run("stdout", func(t *testing.T) {
		dir := writeFiles(t, files)
		out, errOut, code := rehost(t, "", "rewrite", dir)
		if code == 0 || out != "" {
			t.Fatalf("code %d, stdout %q", code, out)
		}
		if !strings.Contains(errOut, filepath.Join(dir, "b.yaml")+":6: Pod bad: spec.containers[0].image") {
			t.Errorf("stderr does not name file, line, object and field: %s", errOut)
		}
	})
	t.Run("output-dir", func(t *testing.T) {
		dir := writeFiles(t, files)
		outDir := filepath.Join(dir, "out", "deep")
		_, _, code := rehost(t, "", "rewrite", dir, "--output-dir", outDir, "--image-list", filepath.Join(dir, "list"))
		if code == 0 {
			t.Fatal("exit 0")
		}
		for _, p := range []string{filepath.Join(dir, "out"), filepath.Join(dir, "list")} {
			if _, err := os.Stat(p); !os.IsNotExist(err) {
				t.Errorf("%s exists after a failed run", p)
			}
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 2 {
			t.Errorf("leftovers: %v", entries)
		}
	})
	t.Run("in-place", func(t *testing.T) {
		dir := writeFiles(t, files)
		_, _, code := rehost(t, "", "rewrite", "--in-place", dir)
		if code == 0 {
			t.Fatal("exit 0")
		}
		if got, _ := os.ReadFile(filepath.Join(dir, "a.yaml")); string(got) != podNginx {
			t.Errorf("a.yaml was changed by a failed run:\n%s", got)
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 2 {
			t.Errorf("leftovers: %v", entries)
		}
	})
}

func TestRewriteInPlace(t *testing.T) {
	dir := writeFiles(t, map[string]string{"a.yaml": podNginx})
	if err := os.Chmod(filepath.Join(dir, "a.yaml"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := rehost(t, "", "rewrite", "--in-place", filepath.Join(dir, "a.yaml"))
	if code != 0 || out != "" {
		t.Fatalf("code %d stdout %q stderr %s", code, out, errOut)
	}
	got, _ := os.ReadFile(filepath.Join(dir, "a.yaml"))
	if !strings.Contains(string(got), "sea.hub:5000/library/nginx:1.25") {
		t.Errorf("not rewritten:\n%s", got)
	}
	if st, _ := os.Stat(filepath.Join(dir, "a.yaml")); st.Mode().Perm() != 0o600 {
		t.Errorf("mode changed to %v", st.Mode().Perm())
	}
	if _, errOut, code := rehost(t, podNginx, "rewrite", "--in-place"); code == 0 || !strings.Contains(errOut, "not a file") {
		t.Errorf("--in-place on stdin: code %d, %s", code, errOut)
	}
}

func TestImagesFormats(t *testing.T) {
	in := podNginx + "---\n" + strings.Replace(podNginx, "nginx:1.25", "sea.hub:5000/library/busybox:1", 1) + "---\n" + strings.Replace(podNginx, "nginx:1.25", "quay.io/x/y", 1)
	out, _, code := rehost(t, in, "images")
	// The images to cache: not the one in sea.hub:5000 already.
	if code != 0 || out != "docker.io/library/nginx:1.25\nquay.io/x/y:latest\n" {
		t.Errorf("text: %d %q", code, out)
	}
	out, _, _ = rehost(t, in, "images", "-o", "mapping")
	if out != "docker.io/library/nginx:1.25\tsea.hub:5000/library/nginx:1.25\nquay.io/x/y:latest\tsea.hub:5000/x/y:latest\n" {
		t.Errorf("mapping: %q", out)
	}
	out, _, _ = rehost(t, in, "images", "-o", "json")
	var imgs []struct {
		Source, Target, Action string
		Occurrences            []map[string]any
	}
	if err := decodeImages(out, &imgs); err != nil {
		t.Fatal(err)
	}
	if len(imgs) != 3 || imgs[0].Occurrences[0]["file"] != "<stdin>" || imgs[0].Occurrences[0]["line"] != float64(6) ||
		imgs[0].Occurrences[0]["field"] != "spec.containers[0].image" || imgs[0].Occurrences[0]["kind"] != "Pod" || imgs[2].Action != "in-target" {
		t.Errorf("json: %s", out)
	}
	out, _, _ = rehost(t, "", "images", "-o", "json", "-")
	if strings.Join(strings.Fields(out), " ") != `{ "images": [], "charts": [] }` {
		t.Errorf("json of nothing: %q", out)
	}
	if _, errOut, code := rehost(t, in, "images", "-o", "yaml"); code == 0 || !strings.Contains(errOut, "want text, json or mapping") {
		t.Errorf("bad -o: %d %s", code, errOut)
	}
}

func TestFlagsAndConfig(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"config.yaml":  "apiVersion: rehost.dev/v1alpha1\nkind: RewriteConfig\nregistry: harbor.local\nexclude: [quay.io]\n",
		"typo.yaml":    "registyr: x.io\n",
		"collide.yaml": strings.Replace(podNginx, "nginx:1.25", "docker.io/team/app", 1) + "---\n" + strings.Replace(podNginx, "nginx:1.25", "quay.io/team/app", 1),
	})
	cfg := filepath.Join(dir, "config.yaml")
	in := podNginx + "---\n" + strings.Replace(podNginx, "nginx:1.25", "quay.io/x/y:1", 1)
	out, _, _ := rehost(t, in, "rewrite", "--config", cfg)
	if !strings.Contains(out, "harbor.local/library/nginx:1.25") || !strings.Contains(out, "image: quay.io/x/y:1") {
		t.Errorf("config not applied:\n%s", out)
	}
	out, _, _ = rehost(t, in, "rewrite", "--config", cfg, "--registry", "sea.hub:5000/mirror", "--exclude", "docker.io/library/nginx")
	if !strings.Contains(out, "image: nginx:1.25") || !strings.Contains(out, "image: quay.io/x/y:1") {
		t.Errorf("flags do not add to the config's exclusions:\n%s", out)
	}
	out, _, _ = rehost(t, in, "rewrite", "--registry", "sea.hub:5000/mirror")
	if !strings.Contains(out, "sea.hub:5000/mirror/library/nginx:1.25") || !strings.Contains(out, "sea.hub:5000/mirror/x/y:1") {
		t.Errorf("--registry with prefix:\n%s", out)
	}
	if _, errOut, code := rehost(t, in, "rewrite", "--config", filepath.Join(dir, "typo.yaml")); code == 0 || !strings.Contains(errOut, "registyr") {
		t.Errorf("unknown config field: %d %s", code, errOut)
	}
	if _, errOut, code := rehost(t, in, "rewrite", "--path-style", "flat"); code == 0 || !strings.Contains(errOut, "pathStyle") {
		t.Errorf("bad --path-style: %d %s", code, errOut)
	}
	out, errOut, code := rehost(t, "", "rewrite", filepath.Join(dir, "collide.yaml"))
	if code == 0 || out != "" || !strings.Contains(errOut, "collision") || !strings.Contains(errOut, "collide.yaml:6") || !strings.Contains(errOut, "collide.yaml:13") || !strings.Contains(errOut, "rehost: hint: --path-style nest") {
		t.Errorf("collision: %d %q %s", code, out, errOut)
	}
	out, _, code = rehost(t, "", "rewrite", "--path-style", "nest", filepath.Join(dir, "collide.yaml"))
	if code != 0 || !strings.Contains(out, "sea.hub:5000/quay.io/team/app") || !strings.Contains(out, "sea.hub:5000/docker.io/team/app") {
		t.Errorf("nest: %d\n%s", code, out)
	}
	if _, errOut, code := rehost(t, "", "rewrite", filepath.Join(dir, "missing.yaml")); code == 0 || !strings.Contains(errOut, "missing.yaml") {
		t.Errorf("missing file: %d %s", code, errOut)
	}
	if _, errOut, code := rehost(t, "", "rewrite", "--in-place", "--output-dir", dir, dir); code == 0 || !strings.Contains(errOut, "exclude each other") {
		t.Errorf("conflicting flags: %d %s", code, errOut)
	}
}

func TestSkipInvalidFlag(t *testing.T) {
	out, errOut, code := rehost(t, podBad+"---\n"+podNginx, "rewrite", "--skip-invalid")
	if code != 0 || !strings.Contains(out, "image: Nginx}") || !strings.Contains(out, "sea.hub:5000/library/nginx:1.25") {
		t.Errorf("code %d:\n%s", code, out)
	}
	if !strings.Contains(errOut, "warning: <stdin>:6: Pod bad") {
		t.Errorf("stderr: %s", errOut)
	}
}

func TestHelpHasExamples(t *testing.T) {
	for _, cmd := range []string{"rewrite", "images"} {
		out, _, code := rehost(t, "", cmd, "--help")
		if code != 0 || !strings.Contains(out, "Examples:") || !strings.Contains(out, "--registry") {
			t.Errorf("%s --help:\n%s", cmd, out)
		}
	}
	out, _, code := rehost(t, "", "version")
	if code != 0 || !strings.HasPrefix(out, "rehost ") {
		t.Errorf("version: %d %q", code, out)
	}
}

// TestExamples runs the README's first command on the bundled example: its
// output is what "kubectl apply -f -" accepts on any cluster, built-in
// kinds only (no Kustomization, RewriteConfig or custom resource), every
// document an object with a name.
func TestExamples(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	const first = "go run ./cmd/rehost rewrite testdata/examples/manifests/"
	if !strings.Contains(string(readme), "```sh\n"+first+" ") {
		t.Fatalf("README's first command is not %q", first)
	}
	out, errOut, code := rehost(t, "", "rewrite", "../../testdata/examples/manifests/")
	if code != 0 || errOut != "" {
		t.Fatalf("code %d: %s", code, errOut)
	}
	if strings.Count(out, "sea.hub:5000/") < 8 {
		t.Errorf("expected every example image rewritten:\n%s", out)
	}
	builtin := map[string]bool{"v1/Service": true, "v1/ConfigMap": true, "apps/v1/Deployment": true, "apps/v1/StatefulSet": true, "apps/v1/DaemonSet": true, "batch/v1/CronJob": true}
	docs := 0
	for _, doc := range strings.Split(out, "\n---\n") {
		var obj struct {
			APIVersion string `yaml:"apiVersion"`
			Kind       string `yaml:"kind"`
			Metadata   struct {
				Name string `yaml:"name"`
			} `yaml:"metadata"`
		}
		if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
			t.Fatalf("document %d: %v\n%s", docs+1, err, doc)
		}
		if onlyComments(doc) {
			continue // kubectl skips empty documents
		}
		docs++
		if !builtin[obj.APIVersion+"/"+obj.Kind] || obj.Metadata.Name == "" {
			t.Errorf("document %d is %s/%s %q: kubectl apply needs built-in kinds with names", docs, obj.APIVersion, obj.Kind, obj.Metadata.Name)
		}
	}
	if docs < 5 {
		t.Errorf("%d documents, want the 5 of the example", docs)
	}
}

// onlyComments reports whether a YAML document holds only comments and
// blank lines.
func onlyComments(doc string) bool {
	for _, l := range strings.Split(doc, "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") && l != "---" {
			return false
		}
	}
	return true
}

func TestChartFlagsWithoutChartWarn(t *testing.T) {
	out, errOut, code := rehost(t, podNginx, "rewrite", "--set", "a=1", "-n", "shop")
	if code != 0 || !strings.Contains(out, "sea.hub:5000/library/nginx:1.25") {
		t.Fatalf("code %d: %s", code, out)
	}
	if !hasFacts(errOut, "warning: ", "--set, --namespace", "charts") {
		t.Errorf("stderr: %q", errOut)
	}
	if _, errOut, _ := rehost(t, podNginx, "images"); errOut != "" {
		t.Errorf("warning without chart flags: %q", errOut)
	}
}

func TestRewritePins(t *testing.T) {
	const d = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	dir := writeFiles(t, map[string]string{
		"pins.tsv": "docker.io/library/nginx:1.25\tsea.hub:5000/library/nginx:1.25@" + d + "\n",
		"bad.tsv":  "docker.io/library/nginx:1.25\tsea.hub:5000/library/nginx:1.25\n",
	})
	out, errOut, code := rehost(t, podNginx, "rewrite", "--pins", filepath.Join(dir, "pins.tsv"))
	if code != 0 || !strings.Contains(out, "image: sea.hub:5000/library/nginx:1.25@"+d+"}") {
		t.Fatalf("code %d: %s %s", code, out, errOut)
	}
	if again, _, _ := rehost(t, out, "rewrite", "--pins", filepath.Join(dir, "pins.tsv")); again != out {
		t.Errorf("not idempotent:\n%s", again)
	}
	if _, errOut, code := rehost(t, podNginx, "rewrite", "--pins", filepath.Join(dir, "bad.tsv")); code == 0 || !strings.Contains(errOut, "bad.tsv:1: target sea.hub:5000/library/nginx:1.25 has no digest") {
		t.Errorf("bad pins: %d %s", code, errOut)
	}
}

// TestAllOrNothingOnCommit: a destination that cannot be written fails the
// run before anything is renamed into place, and two inputs with the same
// output path are an error, not a silent overwrite.
func TestAllOrNothingOnCommit(t *testing.T) {
	dir := writeFiles(t, map[string]string{"a/x.yaml": podNginx, "b/x.yaml": podNginx, "listdir/keep": "x"})
	out := filepath.Join(dir, "out")
	_, errOut, code := rehost(t, "", "rewrite", filepath.Join(dir, "a", "x.yaml"), "--output-dir", out, "--image-list", filepath.Join(dir, "listdir"))
	if code == 0 || !strings.Contains(errOut, "is a directory") {
		t.Errorf("image list onto a directory: %d %s", code, errOut)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("output dir written by a failed run")
	}
	inPlace := filepath.Join(dir, "a", "x.yaml")
	if _, _, code := rehost(t, "", "rewrite", "--in-place", inPlace, "--image-list", filepath.Join(dir, "listdir")); code == 0 {
		t.Error("in place with a bad image list succeeded")
	}
	if got, _ := os.ReadFile(inPlace); string(got) != podNginx {
		t.Errorf("input rewritten by a failed run:\n%s", got)
	}
	if entries, _ := os.ReadDir(filepath.Join(dir, "a")); len(entries) != 1 {
		t.Errorf("leftovers: %v", entries)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 3 {
		t.Errorf("leftovers: %v", entries)
	}
	_, errOut, code = rehost(t, "", "rewrite", filepath.Join(dir, "a", "x.yaml"), filepath.Join(dir, "b", "x.yaml"), "--output-dir", out)
	if code == 0 || !strings.Contains(errOut, "two outputs would be written") {
		t.Errorf("duplicate output path: %d %s", code, errOut)
	}
}
