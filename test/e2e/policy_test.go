package e2e

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rehost/rehost/pkg/rewrite"
	"go.yaml.in/yaml/v3"
)

const policyDigest = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

// policyHardCases are references at the edges of the grammar and the
// mapping (test/policy has the same list for the in-process evaluator).
var policyHardCases = []string{
	"nginx", "nginx:1.25", "library/nginx", "docker.io/nginx", "index.docker.io/nginx", "docker.io/library/nginx:1",
	"Docker.IO/nginx", "INDEX.docker.io/nginx:1", "registry-1.docker.io/nginx", "localhost/a", "localhost:5000/a:1", "localhost", "localhost:5000",
	"LOCALHOST/a", "[::1]:5000/a", "[::1]/a", "[fe80::1%25en0]:5000/a", "127.0.0.1:5000/a/b:c", "a.b:0/c", "sea.hub:5000/x@" + policyDigest,
	"x:1@" + policyDigest, "x@sha256:" + strings.Repeat("A", 64), "x@sha384:" + strings.Repeat("0", 96),
	"x@sha512:" + strings.Repeat("0", 128), "x@md5:" + strings.Repeat("0", 32), "x@sha256:abc", "x@", "x@@" + policyDigest,
	"a@b@c", ":1", "x:", "/x", "x/", "x//y", "a/b/c/d/e:f", "A/b", "UPPER/case:1", "host.io/Upper", "bad_host.io/x:1", "-a.io/x", "a-.io/x",
	"a.io:port/x", "a.io:5000:1/x", "x:" + strings.Repeat("t", 128), "x:" + strings.Repeat("t", 129), "x:.t", "x:-t", "x:_t",
	"quay.io/" + strings.Repeat("a", 255), "quay.io/" + strings.Repeat("a", 256), strings.Repeat("a", 255), strings.Repeat("a", 256),
	"quay.io/" + strings.Repeat("a", 240), "ghcr.io/" + strings.Repeat("b/", 100) + "c",
	"a__b", "a___b", "a--b", "a..b", "a._b", "a.-b", "é", "quay.io/é", "quay.io/a:é", " nginx", "nginx ", "{{ .Values.image }}",
	"[.]/0", "[1.2.3.4]/x", "[::ffff:1.2.3.4]:5/x", "[1::2::3]/x", "[::1]:/x", "[1:2:3:4:5:6:7:8]/x", "[1:2:3:4:5:6:7::]/x", "[::1.2.3.04]/x",
	"[1:2:3:4:5:6:1.2.3.4]/x", "[12345::1]/x", "[::]/x:1", "a|b", "a\nb", "$(x)", "${1}",
	"auto", "<YOUR-CONTAINER>", "ghcr.io/org/app:v2", "gcr.io/distroless/static:nonroot", "registry.k8s.io/pause:3.9",
	"quay.io/team/app:1", "Quay.IO/team/app:1", "docker.io/bitnami/redis:7", "bitnami/redis", "bitnami", "docker.io/bitnami",
	"busybox", "busybox:1.36", "busybox/tool:1", "docker.io/library/busybox@" + policyDigest, "ghcr.io/a/b", "ghcr.io/a/b/c:1", "ghcr.io/a/bc",
	"localhost:5000/x", "localhost:5001/x", "alpine:3", "index.docker.io/library/alpine", "docker.io/alpine/git",
	"sea.hub:5000/library/nginx:1.25", "SEA.HUB:5000/x", "sea.hub:5000/apps/x/library/nginx", "sea.hub:5000/other/y",
	"harbor.local:8443/mirror/quay.io/a/b", "harbor.local:8443/x", "10.0.0.5:5000/library/nginx", "10.0.0.5:5000/y:1",
	"registry.example.com:8443/x/y/z:2.0@" + policyDigest, "quay.io/a/b@" + policyDigest,
}

// randomRefs makes n references from the pieces of the grammar, valid and
// not, with a fixed seed.
func randomRefs(n int) []string {
	r := rand.New(rand.NewSource(24))
	pick := func(xs ...string) string { return xs[r.Intn(len(xs))] }
	var out []string
	for len(out) < n {
		var b strings.Builder
		if r.Intn(3) > 0 {
			b.WriteString(pick("quay.io", "Quay.IO", "docker.io", "index.docker.io", "localhost", "localhost:5000", "10.0.0.5:5000", "[::1]:5000", "[fd00::1]", "sea.hub:5000", "SEA.hub:5000", "harbor.local:8443", "ghcr.io", "a_b.io", "a.io:x", "registry-1.docker.io") + "/")
		}
		for i, k := 0, 1+r.Intn(3); i < k; i++ {
			if i > 0 {
				b.WriteString("/")
			}
			b.WriteString(pick("nginx", "library", "bitnami", "a", "b", "x.y", "a__b", "a-b", "A", "busybox", "apps", "mirror", "alpine", "team", "quay.io", "", "a..b", strings.Repeat("z", r.Intn(300))))
		}
		if r.Intn(2) == 0 {
			b.WriteString(":" + pick("1", "1.25", "latest", "v2.0.1-rc.1", "_x", ".x", "", strings.Repeat("t", 120+r.Intn(20))))
		}
		if r.Intn(4) == 0 {
			b.WriteString("@" + pick(policyDigest, "sha512:"+strings.Repeat("f", 128), "sha256:abc", "md5:"+strings.Repeat("0", 32)))
		}
		out = append(out, b.String())
	}
	return out
}

// corpusImages are the image values and the words of the YAML files
// under testdata.
func corpusImages(t *testing.T) []string {
	seen := map[string]bool{}
	var out []string
	add := func(s string) {
		if s != "" && !seen[s] && len(s) <= 300 {
			seen[s] = true
			out = append(out, s)
		}
	}
	var walk func(n *yaml.Node)
	walk = func(n *yaml.Node) {
		if n.Kind == yaml.ScalarNode {
			add(n.Value)
		}
		for _, c := range n.Content {
			walk(c)
		}
	}
	err := filepath.WalkDir(filepath.Join(repoRoot(), "testdata"), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !(strings.HasSuffix(p, ".yaml") || strings.HasSuffix(p, ".yml") || strings.HasSuffix(p, ".json")) {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, w := range strings.FieldsFunc(string(data), func(r rune) bool { return strings.ContainsRune(" \t\n\"'=,[]{}", r) }) {
			add(strings.TrimSuffix(w, ":"))
		}
		dec := yaml.NewDecoder(bytes.NewReader(data))
		for {
			var doc yaml.Node
			if err := dec.Decode(&doc); err != nil {
				break
			}
			walk(&doc)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) < 1000 {
		t.Fatalf("only %d strings: the corpora were not found", len(out))
	}
	return out
}

// policyPods writes Pods of 30 containers each, in turn in containers,
// initContainers and ephemeralContainers, named c<index>.
func policyPods(images []string) []byte {
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	for start := 0; start < len(images); start += 30 {
		spec := map[string][]map[string]string{}
		for i := start; i < min(start+30, len(images)); i++ {
			list := []string{"containers", "initContainers", "ephemeralContainers"}[i%3]
			spec[list] = append(spec[list], map[string]string{"name": fmt.Sprintf("c%d", i), "image": images[i]})
		}
		if err := enc.Encode(map[string]any{
			"apiVersion": "v1", "kind": "Pod",
			"metadata": map[string]string{"name": fmt.Sprintf("p%d", start/30), "namespace": "apps"},
			"spec":     spec,
		}); err != nil {
			panic(err)
		}
	}
	enc.Close()
	return b.Bytes()
}

// podImages reads the container images of kyverno apply's output, by
// container name.
func podImages(t *testing.T, out []byte) map[string]string {
	t.Helper()
	got := map[string]string{}
	dec := yaml.NewDecoder(bytes.NewReader(out))
	for {
		var pod struct {
			Spec map[string][]struct{ Name, Image string }
		}
		if err := dec.Decode(&pod); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			t.Fatalf("reading kyverno's output: %v", err)
		}
		for _, list := range pod.Spec {
			for _, c := range list {
				got[c.Name] = c.Image
			}
		}
	}
	return got
}

// TestPolicyKyverno: the Kyverno policy rehost policy prints, applied by
// the real Kyverno CLI to Pods of every image reference of the corpora,
// the hard cases and 3000 random references, gives each container the
// image rehost rewrite gives it; applied again to its output, it changes
// nothing. The MutatingAdmissionPolicy at v1alpha1 (the version the
// Kyverno CLI evaluates) is applied the same way, as a second evaluator
// beside test/policy's.
func TestPolicyKyverno(t *testing.T) {
	kyverno := needTool(t, "kyverno")
	images := append(append(append([]string{}, policyHardCases...), corpusImages(t)...), randomRefs(3000)...)
	configs := []struct {
		name string
		args []string
		cfg  rewrite.Config
	}{
		{"strip", nil, rewrite.Config{}},
		{"nest", []string{"--registry", "harbor.local:8443/mirror", "--path-style", "nest"}, rewrite.Config{Registry: "harbor.local:8443/mirror", PathStyle: rewrite.PathStyleNest}},
		{"prefix", []string{"--registry", "Sea.Hub:5000/apps/x"}, rewrite.Config{Registry: "Sea.Hub:5000/apps/x"}},
		{"exclusions", []string{"--registry", "10.0.0.5:5000", "--exclude", "quay.io", "--exclude", "docker.io/bitnami", "--exclude", "busybox", "--exclude", "ghcr.io/a/b", "--exclude", "localhost:5000", "--exclude", "index.docker.io/library/alpine"},
			rewrite.Config{Registry: "10.0.0.5:5000", Exclude: []string{"quay.io", "docker.io/bitnami", "busybox", "ghcr.io/a/b", "localhost:5000", "index.docker.io/library/alpine"}}},
	}
	dir := t.TempDir()
	pods := filepath.Join(dir, "pods.yaml")
	if err := os.WriteFile(pods, policyPods(images), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range configs {
		for _, format := range [][]string{{"--format", "kyverno"}, {"--api-version", "admissionregistration.k8s.io/v1alpha1", "--namespace-selector", ""}} {
			t.Run(c.name+"/"+format[1], func(t *testing.T) {
				m, err := rewrite.NewMapper(c.cfg)
				if err != nil {
					t.Fatal(err)
				}
				pol := filepath.Join(t.TempDir(), "policy.yaml")
				if err := os.WriteFile(pol, run(t, nil, rehostBin(), append(append([]string{"policy"}, format...), c.args...)...), 0o644); err != nil {
					t.Fatal(err)
				}
				out1, out2 := filepath.Join(t.TempDir(), "out1.yaml"), filepath.Join(t.TempDir(), "out2.yaml")
				run(t, nil, kyverno, "apply", pol, "--resource", pods, "-o", out1)
				run(t, nil, kyverno, "apply", pol, "--resource", out1, "-o", out2)
				first, err := os.ReadFile(out1)
				if err != nil {
					t.Fatal(err)
				}
				second, err := os.ReadFile(out2)
				if err != nil {
					t.Fatal(err)
				}
				got, again := podImages(t, first), podImages(t, second)
				changed := 0
				for i, img := range images {
					name := fmt.Sprintf("c%d", i)
					w := img
					if mp, err := m.Map(img); err == nil && mp.Action == rewrite.Rewritten {
						w = mp.Target.String()
					}
					g, ok := got[name]
					switch {
					case !ok:
						t.Errorf("%s (%q): not in kyverno's output", name, img)
					case g != w:
						t.Errorf("%q: kyverno gives %q, rehost rewrite %q", img, g, w)
					case again[name] != g:
						t.Errorf("%q: applied again, %q became %q", img, g, again[name])
					}
					if g != img {
						changed++
					}
				}
				t.Logf("%d images, %d changed", len(images), changed)
				if changed < len(images)/4 {
					t.Errorf("only %d of %d images changed: the policy did not apply", changed, len(images))
				}
			})
		}
	}
}

// TestPolicyKyvernoValidate: with --validate, the Kyverno CLI reports a
// Pod whose image the mutation could not cover (an invalid reference),
// after the mutation (a rewritten image passes), and passes a clean Pod.
func TestPolicyKyvernoValidate(t *testing.T) {
	kyverno := needTool(t, "kyverno")
	dir := t.TempDir()
	pol := filepath.Join(dir, "policy.yaml")
	if err := os.WriteFile(pol, run(t, nil, rehostBin(), "policy", "--format", "kyverno", "--validate", "--exclude", "quay.io"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		images []string
		fail   string // the failing rule, or ""
	}{
		{[]string{"nginx", "quay.io/team/app:1", "busybox:1.36", "sea.hub:5000/x:1"}, ""},
		{[]string{"nginx", "busybox:1.36", "UPPER/case"}, "rehost-check-ephemeral-containers validation failure"},
	} {
		pods := filepath.Join(dir, "pods.yaml")
		if err := os.WriteFile(pods, policyPods(tt.images), 0o644); err != nil {
			t.Fatal(err)
		}
		out, errOut, err := runErr(nil, kyverno, "apply", pol, "--resource", pods)
		if tt.fail == "" {
			if err != nil || !bytes.Contains(out, []byte("fail: 0,")) {
				t.Errorf("%v: %v\n%s%s", tt.images, err, out, errOut)
			}
			continue
		}
		if err == nil || !bytes.Contains(out, []byte(tt.fail)) || !bytes.Contains(out, []byte("fail: 1,")) {
			t.Errorf("%v: want one failure of %s, got %v\n%s%s", tt.images, tt.fail, err, out, errOut)
		}
	}
}

// TestPolicyKyvernoNoImage (issue 29, item 10): the Kyverno policy skips a
// container without an image, in every list, as the CEL form does,
// instead of failing the Pod with a JMESPath error; the other containers
// are rewritten, and the check (--validate --deny) passes the Pod.
func TestPolicyKyvernoNoImage(t *testing.T) {
	kyverno := needTool(t, "kyverno")
	dir := t.TempDir()
	pods := filepath.Join(dir, "pods.yaml")
	pod := "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: apps}\nspec:\n" +
		"  containers:\n  - name: a\n  - {name: b, image: nginx:1.25}\n" +
		"  initContainers:\n  - name: i\n  - {name: j, image: busybox}\n" +
		"  ephemeralContainers:\n  - name: e\n"
	if err := os.WriteFile(pods, []byte(pod), 0o644); err != nil {
		t.Fatal(err)
	}
	pol := filepath.Join(dir, "policy.yaml")
	if err := os.WriteFile(pol, run(t, nil, rehostBin(), "policy", "--format", "kyverno", "--validate", "--deny"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out.yaml")
	stdout, stderr, err := runErr(nil, kyverno, "apply", pol, "--resource", pods, "-o", out)
	if err != nil || !bytes.Contains(stdout, []byte("fail: 0, warn: 0, error: 0")) {
		t.Fatalf("kyverno apply: %v\n%s%s", err, stdout, stderr)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	got := podImages(t, b)
	want := map[string]string{"a": "", "b": "sea.hub:5000/library/nginx:1.25", "i": "", "j": "sea.hub:5000/library/busybox", "e": ""}
	for name, img := range want {
		if g, ok := got[name]; !ok || g != img {
			t.Errorf("container %s: image %q (present %v), want %q\n%s", name, g, ok, img, b)
		}
	}
}
