package manifest

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/rehost/rehost/pkg/rewrite"
	"go.yaml.in/yaml/v3"
)

// TestListOnly: a listing Rewriter lists both images of a collision, with
// a warning, where a rewriting one fails; it lists images already in the
// target registry; and it refuses to write.
func TestListOnly(t *testing.T) {
	const stream = `apiVersion: v1
kind: Pod
metadata: {name: a}
spec:
  containers:
  - {name: a, image: docker.io/team/app:1}
  - {name: b, image: quay.io/team/app:1}
  - {name: c, image: sea.hub:5000/library/nginx:1.25}
`
	for _, list := range []bool{false, true} {
		t.Run(map[bool]string{false: "rewrite", true: "list only"}[list], func(t *testing.T) {
			var warns []string
			opts := []Option{WithWarnings(func(err error) { warns = append(warns, err.Error()) })}
			if list {
				opts = append(opts, ListOnly())
			}
			rw, err := New(rewrite.Config{}, opts...)
			if err != nil {
				t.Fatal(err)
			}
			err = rw.Rewrite(nil, strings.NewReader(stream), "pod.yaml")
			// The image list reaches the same image set through Add.
			errList := rw.ReadImageList(strings.NewReader("ghcr.io/team/app:2\n"), "imageList")
			var ce *rewrite.CollisionError
			if !list {
				if !errors.As(err, &ce) || !strings.HasPrefix(err.Error(), "pod.yaml:7: Pod a: spec.containers[1].image: image collision") || !errors.As(errList, &ce) {
					t.Errorf("rewriting: err %v, %v: want collisions", err, errList)
				}
				return
			}
			if err != nil || errList != nil {
				t.Fatalf("listing: err %v, %v", err, errList)
			}
			want := []string{"docker.io/team/app:1", "ghcr.io/team/app:2", "quay.io/team/app:1", "sea.hub:5000/library/nginx:1.25"}
			if got := rw.Sources(); strings.Join(got, " ") != strings.Join(want, " ") {
				t.Errorf("listing: sources %q, want %q", got, want)
			}
			if len(warns) != 2 || !strings.HasPrefix(warns[0], "pod.yaml:7: Pod a: spec.containers[1].image: image collision") || !strings.HasPrefix(warns[1], "imageList:1: image collision") {
				t.Errorf("listing: warnings %q, want the two collisions", warns)
			}
			for _, img := range rw.Images() {
				if img.Source == "sea.hub:5000/library/nginx:1.25" && img.Action != rewrite.InTarget {
					t.Errorf("%s: action %s", img.Source, img.Action)
				}
			}

			var out bytes.Buffer
			if err := rw.Rewrite(&out, strings.NewReader(stream), "pod.yaml"); !errors.Is(err, ErrListOnly) || out.Len() != 0 {
				t.Errorf("Rewrite with a writer: err %v, %d bytes written", err, out.Len())
			}
			var doc yaml.Node
			if err := yaml.Unmarshal([]byte(stream), &doc); err != nil {
				t.Fatal(err)
			}
			if err := rw.RewriteNode(&doc, "pod.yaml", true); !errors.Is(err, ErrListOnly) {
				t.Errorf("RewriteNode: err %v", err)
			}
		})
	}
}
