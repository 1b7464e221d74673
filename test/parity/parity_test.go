package parity

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rehost/rehost/pkg/rewrite"
	"go.yaml.in/yaml/v3"
)

// same reports how the two parsers disagree on s, or "" when they agree:
// both refuse it, or both accept it with the same registry, repository,
// tag and digest.
func same(s string) string {
	got, gerr := rewrite.ParseRef(s)
	want, werr := ggcrParseRef(s)
	switch {
	case (gerr == nil) != (werr == nil):
		return "ParseRef error " + errString(gerr) + ", go-containerregistry error " + errString(werr)
	case gerr == nil && got != want:
		return "ParseRef " + got.String() + ", go-containerregistry " + want.String()
	case gerr != nil:
		var ie *rewrite.InvalidReferenceError
		if !errors.As(gerr, &ie) {
			return "ParseRef error is not an *InvalidReferenceError: " + gerr.Error()
		}
	}
	return ""
}

func errString(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}

// hardCases are references at the edges of the grammar.
var hardCases = []string{
	"nginx", "nginx:1.25", "library/nginx", "docker.io/nginx", "index.docker.io/nginx", "docker.io/library/nginx:1",
	"Docker.IO/nginx", "registry-1.docker.io/nginx", "localhost/a", "localhost:5000/a:1", "localhost", "localhost:5000",
	"[::1]:5000/a", "[::1]/a", "[fe80::1%25en0]:5000/a", "127.0.0.1:5000/a/b:c", "a.b:0/c", "sea.hub:5000/x@sha256:" + strings.Repeat("a", 64),
	"x:1@sha256:" + strings.Repeat("0", 64), "x@sha256:" + strings.Repeat("A", 64), "x@sha384:" + strings.Repeat("0", 96),
	"x@sha512:" + strings.Repeat("0", 128), "x@md5:" + strings.Repeat("0", 32), "x@sha256:abc", "x@", "x@@sha256:" + strings.Repeat("0", 64),
	"a@b@c", ":1", "x:", "/x", "x/", "x//y", "a/b/c/d/e:f", "A/b", "UPPER/case:1", "host.io/Upper", "bad_host.io/x:1", "-a.io/x", "a-.io/x",
	"a.io:port/x", "a.io:5000:1/x", "x:" + strings.Repeat("t", 128), "x:" + strings.Repeat("t", 129), "x:.t", "x:-t", "x:_t",
	"quay.io/" + strings.Repeat("a", 255), "quay.io/" + strings.Repeat("a", 256), strings.Repeat("a", 255), strings.Repeat("a", 256),
	"a__b", "a___b", "a--b", "a..b", "a._b", "a.-b", "é", "quay.io/é", "quay.io/a:é", " nginx", "nginx ", "{{ .Values.image }}",
	"[.]/0", "[1.2.3.4]/x", "[::ffff:1.2.3.4]:5/x", "[1::2::3]/x", "[::1]:/x",
	"auto", "<YOUR-CONTAINER>", "ghcr.io/org/app:v2", "gcr.io/distroless/static:nonroot", "registry.k8s.io/pause:3.9",
}

func TestParityHardCases(t *testing.T) {
	for _, s := range hardCases {
		if d := same(s); d != "" {
			t.Errorf("%q: %s", s, d)
		}
	}
}

// TestParityCorpora: every scalar of every YAML file under testdata (the
// fixtures, golden files, example apps and, when generated, the 15 MB
// benchmark corpus), and every word of those scalars, parses the same.
func TestParityCorpora(t *testing.T) {
	seen := map[string]bool{}
	accepted := 0
	check := func(s string) {
		if seen[s] || len(s) > 1024 {
			return
		}
		seen[s] = true
		if d := same(s); d != "" {
			t.Errorf("%q: %s", s, d)
		}
		if _, err := rewrite.ParseRef(s); err == nil {
			accepted++
		}
	}
	files := 0
	err := filepath.WalkDir("../../testdata", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !(strings.HasSuffix(p, ".yaml") || strings.HasSuffix(p, ".yml") || strings.HasSuffix(p, ".json") || strings.HasSuffix(p, ".txt") || filepath.Base(p) == "imageList") {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		files++
		for _, line := range strings.Split(string(data), "\n") {
			for _, w := range strings.FieldsFunc(line, func(r rune) bool { return strings.ContainsRune(" \t\"'=,[]{}", r) }) {
				check(strings.TrimSuffix(w, ":"))
			}
		}
		dec := yaml.NewDecoder(strings.NewReader(string(data)))
		for {
			var doc yaml.Node
			if err := dec.Decode(&doc); err != nil {
				if !errors.Is(err, io.EOF) {
					break // not YAML, or not all of it: the words were checked
				}
				break
			}
			walk(&doc, check)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d files, %d distinct strings, %d accepted as references by both parsers", files, len(seen), accepted)
	if files < 50 || accepted < 500 {
		t.Fatalf("only %d files and %d accepted references: the corpora were not found", files, accepted)
	}
}

func walk(n *yaml.Node, f func(string)) {
	if n.Kind == yaml.ScalarNode {
		f(n.Value)
	}
	for _, c := range n.Content {
		walk(c, f)
	}
}

// FuzzParseRef: for any string, rehost's parser and go-containerregistry's
// (with the checks rehost made) agree.
func FuzzParseRef(f *testing.F) {
	for _, s := range hardCases {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if d := same(s); d != "" {
			t.Errorf("%q: %s", s, d)
		}
	})
}

// BenchmarkParseRef compares the two parsers on the references of the
// hard cases (ParseRef is on the hot path of every image field).
func BenchmarkParseRef(b *testing.B) {
	for _, p := range []struct {
		name  string
		parse func(string) (rewrite.Ref, error)
	}{{"rehost", rewrite.ParseRef}, {"ggcr", ggcrParseRef}} {
		b.Run(p.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				for _, s := range hardCases {
					_, _ = p.parse(s)
				}
			}
		})
	}
}
