package policy

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rehost/rehost/pkg/policy"
	"github.com/rehost/rehost/pkg/rewrite"
	"go.yaml.in/yaml/v3"
	"k8s.io/apiserver/pkg/admission"
)

const dig = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

// configs are the mappings every test runs: both path styles, registry
// prefixes, exclusions by host and by repository prefix, a target spelled
// in upper case.
var configs = []struct {
	name string
	cfg  rewrite.Config
}{
	{"strip", rewrite.Config{}},
	{"nest", rewrite.Config{Registry: "harbor.local:8443/mirror", PathStyle: rewrite.PathStyleNest}},
	{"prefix", rewrite.Config{Registry: "Sea.Hub:5000/apps/x"}},
	{"exclusions", rewrite.Config{Registry: "10.0.0.5:5000", Exclude: []string{"quay.io", "docker.io/bitnami", "busybox", "ghcr.io/a/b", "localhost:5000", "index.docker.io/library/alpine"}}},
}

// hardCases are references at the edges of the grammar and the mapping.
var hardCases = []string{
	"nginx", "nginx:1.25", "library/nginx", "docker.io/nginx", "index.docker.io/nginx", "docker.io/library/nginx:1",
	"Docker.IO/nginx", "INDEX.docker.io/nginx:1", "registry-1.docker.io/nginx", "localhost/a", "localhost:5000/a:1", "localhost", "localhost:5000",
	"LOCALHOST/a", "[::1]:5000/a", "[::1]/a", "[fe80::1%25en0]:5000/a", "127.0.0.1:5000/a/b:c", "a.b:0/c", "sea.hub:5000/x@" + dig,
	"x:1@" + dig, "x@sha256:" + strings.Repeat("A", 64), "x@sha384:" + strings.Repeat("0", 96),
	"x@sha512:" + strings.Repeat("0", 128), "x@md5:" + strings.Repeat("0", 32), "x@sha256:abc", "x@", "x@@" + dig,
	"a@b@c", ":1", "x:", "/x", "x/", "x//y", "a/b/c/d/e:f", "A/b", "UPPER/case:1", "host.io/Upper", "bad_host.io/x:1", "-a.io/x", "a-.io/x",
	"a.io:port/x", "a.io:5000:1/x", "x:" + strings.Repeat("t", 128), "x:" + strings.Repeat("t", 129), "x:.t", "x:-t", "x:_t",
	"quay.io/" + strings.Repeat("a", 255), "quay.io/" + strings.Repeat("a", 256), strings.Repeat("a", 255), strings.Repeat("a", 256),
	"quay.io/" + strings.Repeat("a", 240), "ghcr.io/" + strings.Repeat("b/", 100) + "c",
	"a__b", "a___b", "a--b", "a..b", "a._b", "a.-b", "é", "quay.io/é", "quay.io/a:é", " nginx", "nginx ", "{{ .Values.image }}",
	"[.]/0", "[1.2.3.4]/x", "[::ffff:1.2.3.4]:5/x", "[1::2::3]/x", "[::1]:/x", "[1:2:3:4:5:6:7:8]/x", "[1:2:3:4:5:6:7::]/x", "[::1.2.3.04]/x",
	"[1:2:3:4:5:6:1.2.3.4]/x", "[12345::1]/x", "[::]/x:1",
	"auto", "<YOUR-CONTAINER>", "ghcr.io/org/app:v2", "gcr.io/distroless/static:nonroot", "registry.k8s.io/pause:3.9",
	"quay.io/team/app:1", "Quay.IO/team/app:1", "docker.io/bitnami/redis:7", "bitnami/redis", "bitnami", "docker.io/bitnami",
	"busybox", "busybox:1.36", "busybox/tool:1", "docker.io/library/busybox@" + dig, "ghcr.io/a/b", "ghcr.io/a/b/c:1", "ghcr.io/a/bc",
	"localhost:5000/x", "localhost:5001/x", "alpine:3", "index.docker.io/library/alpine", "docker.io/alpine/git",
	"sea.hub:5000/library/nginx:1.25", "SEA.HUB:5000/x", "sea.hub:5000/apps/x/library/nginx", "sea.hub:5000/other/y",
	"harbor.local:8443/mirror/quay.io/a/b", "harbor.local:8443/x", "10.0.0.5:5000/library/nginx", "10.0.0.5:5000/y:1",
	"registry.example.com:8443/x/y/z:2.0@" + dig, "quay.io/a/b@" + dig,
}

// want is the image rehost rewrite gives img: the target when the mapper
// rewrites it, img as written otherwise (excluded, in the target, or
// invalid — which rewrite reports and, with skipInvalid, leaves).
func want(m *rewrite.Mapper, img string) string {
	mp, err := m.Map(img)
	if err != nil || mp.Action != rewrite.Rewritten {
		return img
	}
	return mp.Target.String()
}

// generate writes the policy for c.
func generate(t testing.TB, c rewrite.Config, o policy.Options) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := policy.Write(&b, c, o); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// checkImages admits Pods of the images, batch by batch, and compares
// every container's image with the mapper's; each result is admitted
// again (created anew) and must not change.
func checkImages(t *testing.T, s *apiServer, m *rewrite.Mapper, images []string, batch int) (changed int) {
	t.Helper()
	for len(images) > 0 {
		n := min(batch, len(images))
		chunk := images[:n]
		images = images[n:]
		got, _, err := s.admit(podOf("apps", chunk), admission.Create, nil)
		if err != nil {
			t.Errorf("admitting %d images (first %q): %v", len(chunk), chunk[0], err)
			continue
		}
		out := imagesOf(got)
		for i, img := range chunk {
			if w := want(m, img); out[i] != w {
				t.Errorf("%q: policy gives %q, rehost rewrite %q", shorten(img), shorten(out[i]), shorten(w))
			}
			if out[i] != img {
				changed++
			}
		}
		again, _, err := s.admit(got, admission.Create, nil)
		if err != nil {
			t.Errorf("admitting the result again: %v", err)
			continue
		}
		for i, img := range imagesOf(again) {
			if img != out[i] {
				t.Errorf("%q: second pass changed %q to %q", shorten(chunk[i]), shorten(out[i]), shorten(img))
			}
		}
	}
	return changed
}

func TestHardCases(t *testing.T) {
	for _, c := range configs {
		for _, v := range []string{policy.V1, policy.V1beta1, policy.V1alpha1} {
			t.Run(c.name+"/"+v[strings.LastIndex(v, "/")+1:], func(t *testing.T) {
				m, err := rewrite.NewMapper(c.cfg)
				if err != nil {
					t.Fatal(err)
				}
				s := newAPIServer(t, generate(t, c.cfg, policy.Options{APIVersion: v, NamespaceSelector: policy.DefaultNamespaceSelector}))
				changed := checkImages(t, s, m, hardCases, 30)
				if changed < 20 {
					t.Errorf("only %d images changed: the policy did not run", changed)
				}
			})
		}
	}
}

// corpus returns every distinct image value (the value of a key named
// image) and every word of every scalar of the YAML files under testdata,
// as test/parity reads them.
func corpus(t testing.TB) []string {
	seen := map[string]bool{}
	var out []string
	add := func(s string) {
		if !seen[s] && len(s) <= 300 && s != "" {
			seen[s] = true
			out = append(out, s)
		}
	}
	files := 0
	err := filepath.WalkDir("../../testdata", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !(strings.HasSuffix(p, ".yaml") || strings.HasSuffix(p, ".yml") || strings.HasSuffix(p, ".json") || filepath.Base(p) == "imageList") {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		files++
		for _, line := range strings.Split(string(data), "\n") {
			for _, w := range strings.FieldsFunc(line, func(r rune) bool { return strings.ContainsRune(" \t\"'=,[]{}", r) }) {
				add(strings.TrimSuffix(w, ":"))
			}
		}
		dec := yaml.NewDecoder(bytes.NewReader(data))
		for {
			var doc yaml.Node
			if err := dec.Decode(&doc); err != nil {
				if !errors.Is(err, io.EOF) {
					break
				}
				break
			}
			walk(&doc, add)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 50 || len(out) < 1000 {
		t.Fatalf("only %d files and %d strings: the corpora were not found", files, len(out))
	}
	return out
}

func walk(n *yaml.Node, f func(string)) {
	if n.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == "image" && n.Content[i+1].Kind == yaml.ScalarNode {
				f(n.Content[i+1].Value)
			}
		}
	}
	if n.Kind == yaml.ScalarNode {
		f(n.Value)
	}
	for _, c := range n.Content {
		walk(c, f)
	}
}

// TestCorpora: every image value and every word of the test corpora, in
// Pods of 60 containers, for each mapping.
func TestCorpora(t *testing.T) {
	images := corpus(t)
	valid := 0
	for _, s := range images {
		if _, err := rewrite.ParseRef(s); err == nil {
			valid++
		}
	}
	t.Logf("%d strings, %d valid references", len(images), valid)
	for _, c := range configs {
		t.Run(c.name, func(t *testing.T) {
			m, err := rewrite.NewMapper(c.cfg)
			if err != nil {
				t.Fatal(err)
			}
			s := newAPIServer(t, generate(t, c.cfg, policy.Options{}))
			changed := checkImages(t, s, m, images, 60)
			t.Logf("%d images changed", changed)
		})
	}
}
