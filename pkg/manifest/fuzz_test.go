package manifest

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/rehost/rehost/pkg/rewrite"
	"go.yaml.in/yaml/v3"
)

// issue11Seed is an image field whose value is an alias of an anchor on a
// non-image node: rewriting the anchor would rename the Pod too (issue #11,
// fixed: the alias is written out with the new value).
var issue11Seed = []byte("apiVersion: v1\nkind: Pod\nmetadata: {name: &name nginx}\nspec:\n  containers:\n  - name: c\n    image: *name\n")

// FuzzRewrite asserts, for any input the rewriter accepts: no panic; the
// output parses whenever the input does; rewriting the output again is a
// no-op; no byte but the image values changed; and, parsing both with
// yaml.v3 and comparing every resolved scalar, every image value became
// its target by a reference model of the mapping (not the mapper under
// test) and no other value changed.
func FuzzRewrite(f *testing.F) {
	seeds, _ := filepath.Glob(filepath.Join(goldenDir, "*.yaml"))
	more, _ := filepath.Glob(filepath.Join(goldenDir, "*.json"))
	// Custom resources whose images are found by key name (guessed); the
	// other operator goldens hold registry settings, which the oracle
	// does not model.
	for _, name := range []string{"rook-ceph-cluster.yaml", "percona-xtradb-cluster.yaml", "tidb-cluster.yaml"} {
		more = append(more, filepath.Join(operatorsGoldenDir, name))
	}
	for _, p := range append(seeds, more...) {
		if data, err := os.ReadFile(p); err == nil {
			f.Add(data)
		}
	}
	f.Add([]byte(pod("nginx")))
	f.Add([]byte("kind: Pod\nspec: {containers: [{image: \"a/b:1\"}, {image: 'c@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef'}]}\n...\n"))
	f.Add([]byte("kind: Job\nspec:\n  template:\n    spec:\n      containers:\n      - image: |-\n          nginx\n"))
	f.Add(issue11Seed)
	// Guessed images: merged maps, a container's image without a tag,
	// split references (registry part, repository part, no tag), base
	// images with and without a version.
	f.Add([]byte("apiVersion: example.com/v1\nkind: W\nspec:\n  d: &d {image: quay.io/a/b:1}\n  p: {<<: *d, sidecarImage: busybox, command: [sh]}\n  s: {image: {registry: docker.io, repository: c/d, tag: '1'}}\n  r: {image: {repository: ghcr.io/e/f}}\n  b: {baseImage: g/h, version: v1}\n  n: {baseImage: i/j}\n"))
	// Anchors and merge keys that only image fields share.
	f.Add([]byte("kind: Deployment\nspec:\n  template:\n    spec:\n      containers:\n      - &c {name: a, image: &i nginx}\n      - {<<: *c, name: b}\n      initContainers: [{name: i, image: *i}]\n"))
	model, _ := newRefModel(rewrite.Config{})
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
		assertOnlyImagesChanged(t, model.target, in, out, rewrittenImages(rw), "in.yaml")
		assertValuesPreserved(t, model, in, out, rewrittenImages(rw), "in.yaml")
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
