package krmfn_test

import (
	"os"
	"strings"

	"github.com/rehost/rehost/pkg/krmfn"
	"github.com/rehost/rehost/pkg/manifest"
	"github.com/rehost/rehost/pkg/rewrite"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/kio"
)

// The function reads a ResourceList and writes it back with the images
// rewritten and one info result per rewritten image field.
func ExampleProcessor() {
	in := `apiVersion: config.kubernetes.io/v1
kind: ResourceList
items:
- apiVersion: v1
  kind: Pod
  metadata:
    name: web
  spec:
    containers:
    - name: web
      image: nginx:1.25 # pinned
functionConfig:
  apiVersion: rehost.dev/v1alpha1
  kind: RewriteConfig
  metadata:
    name: rehost
  registry: sea.hub:5000
`
	rw := &kio.ByteReadWriter{Reader: strings.NewReader(in), Writer: os.Stdout, KeepReaderAnnotations: true}
	if err := framework.Execute(krmfn.Processor{}, rw); err != nil {
		panic(err)
	}
	// Output:
	// apiVersion: config.kubernetes.io/v1
	// kind: ResourceList
	// items:
	// - apiVersion: v1
	//   kind: Pod
	//   metadata:
	//     name: web
	//   spec:
	//     containers:
	//     - name: web
	//       image: sea.hub:5000/library/nginx:1.25 # pinned
	// functionConfig:
	//   apiVersion: rehost.dev/v1alpha1
	//   kind: RewriteConfig
	//   metadata:
	//     name: rehost
	//   registry: sea.hub:5000
	// results:
	// - message: image docker.io/library/nginx:1.25 rewritten to sea.hub:5000/library/nginx:1.25
	//   severity: info
	//   resourceRef:
	//     apiVersion: v1
	//     kind: Pod
	//     name: web
	//   field:
	//     path: spec.containers[0].image
	//   tags:
	//     source: docker.io/library/nginx:1.25
	//     target: sea.hub:5000/library/nginx:1.25
}

// A collision fails the function: Process returns the error results, and
// "rehost fn" prints them and exits non-zero.
func ExampleProcessor_collision() {
	in := `apiVersion: config.kubernetes.io/v1
kind: ResourceList
items:
- {apiVersion: v1, kind: Pod, metadata: {name: a}, spec: {containers: [{name: a, image: team/app:1}]}}
- {apiVersion: v1, kind: Pod, metadata: {name: b}, spec: {containers: [{name: b, image: quay.io/team/app:1}]}}
`
	rw := &kio.ByteReadWriter{Reader: strings.NewReader(in), Writer: new(strings.Builder), KeepReaderAnnotations: true}
	err := framework.Execute(krmfn.Processor{}, rw)
	os.Stdout.WriteString(err.Error() + "\n")
	// Output:
	// [error] v1/Pod/b spec.containers[0].image: image collision: docker.io/team/app (<input>:4: Pod a: spec.containers[0].image) and quay.io/team/app (<input>:5: Pod b: spec.containers[0].image) both map to sea.hub:5000/team/app; use path style nest or exclude one of them (pathStyle: nest in the function config)
}

// In a kyaml pipeline of your own, Filter is the rehost step: the same
// finder and mapping as manifest.Rewriter.Rewrite, on RNodes.
func ExampleFilter() {
	rw, err := manifest.New(rewrite.Config{Registry: "harbor.local/mirror"})
	if err != nil {
		panic(err)
	}
	err = kio.Pipeline{
		Inputs:  []kio.Reader{&kio.ByteReader{Reader: strings.NewReader("kind: Deployment\nspec:\n  template:\n    spec:\n      containers:\n      - image: ghcr.io/org/app:v2\n")}},
		Filters: []kio.Filter{krmfn.Filter(rw)},
		Outputs: []kio.Writer{kio.ByteWriter{Writer: os.Stdout}},
	}.Execute()
	if err != nil {
		panic(err)
	}
	// Output:
	// kind: Deployment
	// spec:
	//   template:
	//     spec:
	//       containers:
	//       - image: harbor.local/mirror/org/app:v2
}
