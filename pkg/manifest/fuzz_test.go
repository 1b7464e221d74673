package manifest

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/rehost/rehost/pkg/rewrite"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// FuzzRewrite asserts, for any input the rewriter accepts: no panic; the
// output parses whenever the input does; rewriting the output again is a
// no-op; and no byte but the image values changed.
func FuzzRewrite(f *testing.F) {
	seeds, _ := filepath.Glob(filepath.Join(goldenDir, "*.yaml"))
	more, _ := filepath.Glob(filepath.Join(goldenDir, "*.json"))
	for _, p := range append(seeds, more...) {
		if data, err := os.ReadFile(p); err == nil {
			f.Add(data)
		}
	}
	f.Add([]byte(pod("nginx")))
	f.Add([]byte("kind: Pod\nspec: {containers: [{image: \"a/b:1\"}, {image: 'c@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef'}]}\n...\n"))
	f.Add([]byte("kind: Job\nspec:\n  template:\n    spec:\n      containers:\n      - image: |-\n          nginx\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		rw, err := New(rewrite.Config{}, WithWorkers(2))
		if err != nil {
			t.Fatal(err)
		}
		out, err := rw.RewriteBytes(in, "in.yaml")
		if err != nil {
			return
		}
		if n, ok := countDocs(in); ok {
			m, ok := countDocs(out)
			if !ok || m != n {
				t.Fatalf("input parses into %d documents, output into %d (ok=%v):\n%q\n%q", n, m, ok, in, out)
			}
		}
		again, _ := New(rewrite.Config{})
		out2, err := again.RewriteBytes(out, "in.yaml")
		if err != nil {
			t.Fatalf("rewriting the output again: %v\nin:  %q\nout: %q", err, in, out)
		}
		if !bytes.Equal(out, out2) {
			t.Fatalf("not idempotent:\nin:   %q\nout:  %q\nout2: %q", in, out, out2)
		}
		assertOnlyImagesChanged(t, rw.Mapper(), in, out, rewrittenImages(rw), "in.yaml")
	})
}

// countDocs parses a stream and counts its documents.
func countDocs(data []byte) (int, bool) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	n := 0
	for {
		var node yaml.Node
		err := dec.Decode(&node)
		if errors.Is(err, io.EOF) {
			return n, true
		}
		if err != nil {
			return n, false
		}
		n++
	}
}
