package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/rehost/rehost/pkg/rewrite"
	"go.yaml.in/yaml/v3"
)

// Issue 29 (hostile input, second round), at the command line.

// TestPrefixNoRoom (item 8): a registry prefix that leaves no room for
// any image is refused by every command that maps images, before any
// input is read, naming its length and the longest allowed; the longest
// allowed is accepted, and the Kyverno policy's length check stays a
// valid expression.
func TestPrefixNoRoom(t *testing.T) {
	dir := writeFiles(t, map[string]string{"pod.yaml": podNginx, "list.txt": "quay.io/a:1\n"})
	pod := dir + "/pod.yaml"
	chart := chartDir(t) + "/app"
	tooLong := "sea.hub:5000/" + strings.Repeat("p", 254)
	nestTooLong := "sea.hub:5000/" + strings.Repeat("p", 250)
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"rewrite", "--registry", tooLong, pod}, "254 characters"},
		{[]string{"images", "--registry", tooLong, pod}, "254 characters"},
		{[]string{"mirror", "--dry-run", "--registry", tooLong, "--image-list", dir + "/list.txt"}, "254 characters"},
		{[]string{"policy", "--registry", tooLong}, "254 characters"},
		{[]string{"policy", "--format", "kyverno", "--registry", tooLong}, "254 characters"},
		{[]string{"values", "--registry", tooLong, chart}, "254 characters"},
		{[]string{"relocate", "--registry", tooLong, chart, "--output", dir + "/out.tgz"}, "254 characters"},
		{[]string{"rewrite", "--path-style", "nest", "--registry", nestTooLong, pod}, "250 characters"},
		{[]string{"policy", "--format", "kyverno", "--path-style", "nest", "--registry", nestTooLong}, "250 characters"},
	} {
		out, errOut, code := rehost(t, "", tt.args...)
		if code != 1 || out != "" || !strings.Contains(errOut, "rehost: --registry: the path prefix has "+tt.want) || !strings.Contains(errOut, "at most") {
			t.Errorf("%v: code %d, stdout %.80q, stderr %q", tt.args[:3], code, out, errOut)
		}
	}
	fits := "sea.hub:5000/" + strings.Repeat("p", 253)
	if out, errOut, code := rehost(t, "", "policy", "--format", "kyverno", "--registry", fits); code != 0 || !strings.Contains(out, "regex_match('^.{2}'") {
		t.Errorf("policy with a prefix of 253: code %d, %s", code, errOut)
	}
	if out, errOut, code := rehost(t, "", "rewrite", "--registry", fits, pod); code != 1 || out != "" || !strings.Contains(errOut, "255 characters") {
		// docker.io/library/nginx needs "library/nginx" below the prefix.
		t.Errorf("rewrite with a prefix of 253: code %d, stderr %q", code, errOut)
	}
}

// TestPinConflictCLI (item 9): a pin whose digest is not the one written
// in the manifest is an error naming the place and both digests, and
// nothing is written; rehost policy refuses it the same way. A large pin
// set makes a policy kubectl apply cannot store client-side: a warning
// says how to apply it.
func TestPinConflictCLI(t *testing.T) {
	d1, d7 := "sha256:"+strings.Repeat("01", 32), "sha256:"+strings.Repeat("07", 32)
	var many strings.Builder
	for i := 0; i < 3000; i++ {
		fmt.Fprintf(&many, "registry.example.com/team-%02d/app-%04d:1.%02d\tsea.hub:5000/team-%02d/app-%04d:1.%02d@sha256:%064x\n", i%97, i, i%89, i%97, i, i%89, i+1)
	}
	dir := writeFiles(t, map[string]string{
		"pins.tsv":   "docker.io/library/redis:7@" + d1 + "\tsea.hub:5000/library/redis:7@" + d7 + "\n",
		"many.tsv":   many.String(),
		"redis.yaml": "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - {name: c, image: \"redis:7@" + d1 + "\"}\n",
	})
	out, errOut, code := rehost(t, "", "rewrite", "--pins", dir+"/pins.tsv", dir+"/redis.yaml")
	if code != 1 || out != "" || !strings.Contains(errOut, "redis.yaml:6: Pod p: spec.containers[0].image:") || !strings.Contains(errOut, d1) || !strings.Contains(errOut, d7) {
		t.Errorf("rewrite: code %d, stdout %q, stderr %q", code, out, errOut)
	}
	out, errOut, code = rehost(t, "", "policy", "--pins", dir+"/pins.tsv")
	if code != 1 || out != "" || !strings.Contains(errOut, d1) || !strings.Contains(errOut, d7) {
		t.Errorf("policy: code %d, stdout %.80q, stderr %q", code, out, errOut)
	}
	out, errOut, code = rehost(t, "", "policy", "--pins", dir+"/many.tsv")
	if code != 0 || strings.Count(out, "'registry.example.com/team-00/app-0000:1.00'") != 1 ||
		!strings.Contains(errOut, "warning: the MutatingAdmissionPolicy is") || !strings.Contains(errOut, "kubectl apply --server-side") {
		t.Errorf("policy with 3,000 pins: code %d, stderr %q", code, errOut)
	}
	if len(out) > 1536<<10 {
		t.Errorf("policy with 3,000 pins: %d bytes", len(out))
	}
}

// TestBoundedMessages (item 12): messages quote untrusted values cut to a
// bounded length with their size: a 50 MB value (an invalid guessed image,
// an invalid image field, a chart source, an object's name) gives a few
// kilobytes on stderr, not three copies of it. With the race detector,
// which makes reading 50 MB take minutes and gigabytes, the value has 4 MB.
func TestBoundedMessages(t *testing.T) {
	size := 50 << 20
	if raceEnabled {
		size = 4 << 20
	}
	big := strings.Repeat("A", size)
	for _, tt := range []struct {
		name, in string
		code     int
		value    int // the size of the value cut
	}{
		{"guessed image", "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\nspec:\n  image: " + big + "\n", 0, size},
		{"image field", "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - {name: c, image: " + big + "}\n", 1, size},
		{"chart source", "apiVersion: source.toolkit.fluxcd.io/v1\nkind: HelmRepository\nmetadata: {name: r}\nspec: {url: 'https://x/" + big + "${X}'}\n", 0, size + len("https://x/${X}")},
		{"object name", "apiVersion: v1\nkind: Pod\nmetadata: {name: " + big + "}\nspec:\n  containers:\n  - {name: c, image: UPPER}\n", 1, size},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, errOut, code := rehost(t, tt.in, "rewrite")
			if code != tt.code || len(errOut) > 8<<10 || !strings.Contains(errOut, "…("+strconv.Itoa(tt.value)+" bytes)") {
				t.Errorf("code %d, stderr of %d bytes: %.300s", code, len(errOut), errOut)
			}
		})
	}
}

// TestOutputDirAndInputs (item 13): an --output-dir inside the input
// directory is left out of the inputs, so that a second run reads no
// earlier output (no out/out/); an --output-dir that is the input
// directory is refused, pointing at --in-place, and nothing is written.
func TestOutputDirAndInputs(t *testing.T) {
	dir := writeFiles(t, map[string]string{"app/pod.yaml": podNginx, "app/sub/job.yaml": strings.Replace(podNginx, "nginx:1.25", "busybox:1.36", 1), "app/Kubefile": "FROM scratch\n"})
	app := filepath.Join(dir, "app")
	out := filepath.Join(app, "out")
	for run := 1; run <= 2; run++ {
		_, errOut, code := rehost(t, "", "rewrite", app, "--output-dir", out, "--image-list", filepath.Join(out, "imageList"))
		if code != 0 {
			t.Fatalf("run %d: exit %d: %s", run, code, errOut)
		}
		var files []string
		filepath.WalkDir(out, func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				rel, _ := filepath.Rel(out, p)
				files = append(files, rel)
			}
			return err
		})
		if strings.Join(files, " ") != "Kubefile imageList pod.yaml sub/job.yaml" {
			t.Errorf("run %d: out holds %q", run, files)
		}
		if b, _ := os.ReadFile(filepath.Join(out, "imageList")); string(b) != "docker.io/library/busybox:1.36\ndocker.io/library/nginx:1.25\n" {
			t.Errorf("run %d: imageList %q", run, b)
		}
	}
	for _, args := range [][]string{
		{"rewrite", app, "--output-dir", app},
		{"rewrite", app, "--output-dir", filepath.Join(app, "sub", "..")},
		{"rewrite", filepath.Join(app, "pod.yaml"), "--output-dir", app},
	} {
		stdout, errOut, code := rehost(t, "", args...)
		if code != 1 || stdout != "" || !strings.Contains(errOut, "is the directory of the input") || !strings.Contains(errOut, "use --in-place") {
			t.Errorf("%v: code %d, stderr %q", args[1:], code, errOut)
		}
		if b, _ := os.ReadFile(filepath.Join(app, "pod.yaml")); string(b) != podNginx {
			t.Errorf("%v: the input was written: %q", args[1:], b)
		}
	}
}

// ipv6App is a directory of manifests whose values rehost writes in
// every context: block and flow maps and lists, quoted values, an
// anchor, JSON, an operator's absent registry setting, GitOps chart
// sources, an embedded reference; sources include IPv6 registries.
var ipv6App = map[string]string{
	"app/pods.yaml": "apiVersion: v1\nkind: Pod\nmetadata: {name: p, labels: {app: &app nginx}}\nspec:\n  containers:\n" +
		"  - name: a\n    image: *app\n  - {name: b, image: redis:7}\n  - name: c\n    image: \"[fd00::1]:5000/team/app:1\"\n" +
		"  - name: d\n    image: '[::1]/x/y@sha256:" + strings.Repeat("ab", 32) + "'\n    args: [--helper-image=quay.io/a/helper:2]\n" +
		"---\n{\"apiVersion\": \"v1\", \"kind\": \"Pod\", \"metadata\": {\"name\": \"j\"}, \"spec\": {\"containers\": [{\"name\": \"a\", \"image\": \"[fd00::1]:5000/b:1\"}]}}\n",
	"app/ops/tigera.yaml": "apiVersion: operator.tigera.io/v1\nkind: Installation\nmetadata: {name: default}\nspec: {variant: Calico}\n",
	"app/ops/argo.yaml":   "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: a}\nspec:\n  source:\n    repoURL: https://charts.example.com\n    chart: x\n    targetRevision: 1.0.0\n",
	"app/Kubefile":        "FROM scratch\n",
}

// docsOf parses a YAML stream into its documents.
func docsOf(t *testing.T, stream string) []any {
	t.Helper()
	var out []any
	dec := yaml.NewDecoder(strings.NewReader(stream))
	for {
		var v any
		err := dec.Decode(&v)
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatalf("the output does not parse: %v\n%s", err, stream)
		}
		out = append(out, v)
	}
}

// sameDocsBut compares two streams document by document, parsed, with
// every old in want's strings replaced by new.
func sameDocsBut(t *testing.T, what, want, got, old, new string) {
	t.Helper()
	// Replaced in the parsed values: the plain registry needs no quotes.
	w, g := docsOf(t, mustYAML(t, replaceValues(docsOf(t, want), old, new))), docsOf(t, got)
	if len(w) == 0 || !reflect.DeepEqual(w, g) {
		t.Errorf("%s: documents differ\n got: %v\nwant: %v", what, g, w)
	}
}

func replaceValues(v any, old, new string) any {
	switch x := v.(type) {
	case string:
		return strings.ReplaceAll(x, old, new)
	case []any:
		for i := range x {
			x[i] = replaceValues(x[i], old, new)
		}
	case map[string]any:
		for k := range x {
			x[k] = replaceValues(x[k], old, new)
		}
	}
	return v
}

func mustYAML(t *testing.T, docs any) string {
	t.Helper()
	var b strings.Builder
	enc := yaml.NewEncoder(&b)
	for _, d := range docs.([]any) {
		if err := enc.Encode(d); err != nil {
			t.Fatal(err)
		}
	}
	enc.Close()
	return b.String()
}

// TestIPv6EveryCommand (items 1 and 6): with an IPv6 target registry, in
// both path styles (nest puts IPv6 source hosts in a path component),
// every output parses back and holds, document by document, what the
// same run gives with a registry written plain: rewrite to stdout,
// --output-dir, --in-place, images -o mapping (each target a valid
// reference), and both policy forms.
func TestIPv6EveryCommand(t *testing.T) {
	const v6, plain = "[fd00::5]:5000", "v6.test:5000"
	for _, style := range []string{"strip", "nest"} {
		t.Run(style, func(t *testing.T) {
			dir := writeFiles(t, ipv6App)
			app := filepath.Join(dir, "app")
			flags := func(reg string) []string { return []string{"--registry", reg, "--path-style", style} }
			want, errOut, code := rehost(t, "", append([]string{"rewrite", app}, flags(plain)...)...)
			if code != 0 {
				t.Fatalf("plain: %s", errOut)
			}
			got, errOut, code := rehost(t, "", append([]string{"rewrite", app}, flags(v6)...)...)
			if code != 0 {
				t.Fatalf("IPv6: %s", errOut)
			}
			if !strings.Contains(got, "image: '"+v6+"/") || strings.Contains(got, "image: "+v6) {
				t.Errorf("plain IPv6 values:\n%s", got)
			}
			sameDocsBut(t, "rewrite", want, got, plain, v6)

			mapping, errOut, code := rehost(t, "", append([]string{"images", "-o", "mapping", app}, flags(v6)...)...)
			if code != 0 {
				t.Fatalf("-o mapping: %s", errOut)
			}
			m, err := rewrite.NewMapper(rewrite.Config{Registry: v6, PathStyle: rewrite.PathStyle(style)})
			if err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(strings.TrimSpace(mapping), "\n")
			for _, l := range lines {
				src, dst, _ := strings.Cut(l, "\t")
				mp, err := m.Map(src)
				if _, perr := rewrite.ParseRef(dst); perr != nil || err != nil || mp.Target.String() != dst {
					t.Errorf("-o mapping %q: target %v (parse: %v), mapper %v", l, mp.Target, perr, err)
				}
			}
			if len(lines) < 5 {
				t.Errorf("-o mapping:\n%s", mapping)
			}

			out := filepath.Join(dir, "out")
			if _, errOut, code := rehost(t, "", append([]string{"rewrite", app, "--output-dir", out}, flags(v6)...)...); code != 0 {
				t.Fatalf("--output-dir: %s", errOut)
			}
			for _, f := range []string{"pods.yaml", "ops/tigera.yaml", "ops/argo.yaml"} {
				b, err := os.ReadFile(filepath.Join(out, f))
				if err != nil {
					t.Fatal(err)
				}
				wantOne, _, _ := rehost(t, "", append([]string{"rewrite", filepath.Join(app, f)}, flags(plain)...)...)
				sameDocsBut(t, "--output-dir "+f, wantOne, string(b), plain, v6)
				if _, errOut, code := rehost(t, "", append([]string{"rewrite", "--in-place", filepath.Join(app, f)}, flags(v6)...)...); code != 0 {
					t.Fatalf("--in-place: %s", errOut)
				}
				if inPlace, _ := os.ReadFile(filepath.Join(app, f)); string(inPlace) != string(b) {
					t.Errorf("--in-place %s:\n%s\n--output-dir:\n%s", f, inPlace, b)
				}
			}

			for _, format := range []string{"admission", "kyverno"} {
				pol, errOut, code := rehost(t, "", append([]string{"policy", "--format", format, "--validate"}, flags(v6)...)...)
				if code != 0 || len(docsOf(t, pol)) < 1 || !strings.Contains(pol, v6) {
					t.Errorf("policy %s: code %d, %s", format, code, errOut)
				}
			}
		})
	}
}
