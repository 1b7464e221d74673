package e2e

import (
	"bytes"
	"testing"
)

// TestRewriteStdin runs the built binary as a pipe filter.
func TestRewriteStdin(t *testing.T) {
	in := []byte("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - {name: c, image: nginx:1.25}  # keep me\n")
	want := bytes.Replace(in, []byte("nginx:1.25"), []byte("sea.hub:5000/library/nginx:1.25"), 1)
	if got := run(t, in, rehostBin(), "rewrite"); !bytes.Equal(got, want) {
		t.Errorf("rehost rewrite:\n%s\nwant:\n%s", got, want)
	}
}
