package helm4compat

import (
	"bytes"
	"strings"
	"testing"

	"github.com/rehost/rehost/pkg/helm"
	"github.com/rehost/rehost/pkg/manifest"
	"github.com/rehost/rehost/pkg/rewrite"
	postrenderv3 "helm.sh/helm/v3/pkg/postrender"
	postrenderv4 "helm.sh/helm/v4/pkg/postrenderer"
)

// The same method set satisfies both majors' interfaces.
var (
	_ postrenderv3.PostRenderer = (*helm.PostRenderer)(nil)
	_ postrenderv4.PostRenderer = (*helm.PostRenderer)(nil)
)

// TestHelm4PostRenderer runs the post-renderer as Helm 4 calls it, on
// manifests as Helm 4 passes them: hooks included, each document carrying
// the postrenderer.helm.sh/postrender-filename annotation, which must come
// back byte for byte, documents in the same order and number.
func TestHelm4PostRenderer(t *testing.T) {
	rw, err := manifest.New(rewrite.Config{Registry: "sea.hub:5000"})
	if err != nil {
		t.Fatal(err)
	}
	var pr postrenderv4.PostRenderer = &helm.PostRenderer{Rewriter: rw}
	in := `---
apiVersion: v1
kind: Pod
metadata:
  name: web
  annotations:
    postrenderer.helm.sh/postrender-filename: 'app/templates/pod.yaml'
spec:
  containers:
  - name: web
    image: nginx:1.25
---
apiVersion: batch/v1
kind: Job
metadata:
  name: migrate
  annotations:
    "helm.sh/hook": pre-install
    "postrenderer.helm.sh/postrender-filename": "app/templates/job.yaml"
spec:
  template:
    spec:
      containers:
      - name: migrate
        image: ghcr.io/app/migrate:1.0
`
	out, err := pr.Run(bytes.NewBufferString(in))
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Replace(in, "image: nginx:1.25", "image: sea.hub:5000/library/nginx:1.25", 1)
	want = strings.Replace(want, "image: ghcr.io/app/migrate:1.0", "image: sea.hub:5000/app/migrate:1.0", 1)
	if out.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", out, want)
	}
}
