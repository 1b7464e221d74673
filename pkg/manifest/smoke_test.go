package manifest

import (
	"testing"

	"github.com/rehost/rehost/pkg/rewrite"
)

func TestSmoke(t *testing.T) {
	in := `# leading comment
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: prod}
spec:
  template:
    spec:
      initContainers:
      - name: init
        image: "busybox:1.36"   # quoted
      containers:
      - name: app
        image: nginx:1.25
      - {name: side, image: 'ghcr.io/a/b:v1'}
      volumes:
      - name: v
        image: {reference: quay.io/x/y:1}
      - name: ceph
        rbd: {image: foo}
---
{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
	"spec": {"containers": [{"name": "c", "image": "registry.k8s.io/pause:3.9"}]}}
...
---
kind: Rollout
apiVersion: argoproj.io/v1alpha1
spec:
  template:
    spec:
      containers:
      - image: >-
          nginx
`
	rw, err := New(rewrite.Config{})
	if err != nil {
		t.Fatal(err)
	}
	out, err := rw.RewriteBytes([]byte(in), "x.yaml")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("\n%s", out)
	for _, img := range rw.Images() {
		t.Logf("%+v", img)
	}
}
