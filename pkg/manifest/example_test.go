package manifest_test

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/rehost/rehost/pkg/manifest"
	"github.com/rehost/rehost/pkg/rewrite"
	"go.yaml.in/yaml/v3"
)

func ExampleRewriter_Rewrite() {
	in := `apiVersion: v1
kind: Pod
metadata:
  name: web # comments, quoting and order are kept
spec:
  containers:
  - name: app
    image: "nginx:1.25"
`
	rw, err := manifest.New(rewrite.Config{Registry: "sea.hub:5000"})
	if err != nil {
		panic(err)
	}
	if err := rw.Rewrite(os.Stdout, strings.NewReader(in), "pod.yaml"); err != nil {
		panic(err)
	}
	fmt.Println(rw.Sources())
	// Output:
	// apiVersion: v1
	// kind: Pod
	// metadata:
	//   name: web # comments, quoting and order are kept
	// spec:
	//   containers:
	//   - name: app
	//     image: "sea.hub:5000/library/nginx:1.25"
	// [docker.io/library/nginx:1.25]
}

// A pipeline that parses for itself (kyaml's, sealer's) hands each object
// to RewriteNode; package krmfn's kio filter does exactly this.
func ExampleRewriter_RewriteNode() {
	rw, err := manifest.New(rewrite.Config{Registry: "harbor.local/mirror"})
	if err != nil {
		panic(err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte("kind: Deployment\nspec:\n  template:\n    spec:\n      containers:\n      - image: ghcr.io/org/app:v2\n"), &doc); err != nil {
		panic(err)
	}
	if err := rw.RewriteNode(&doc, "deploy.yaml", true); err != nil {
		panic(err)
	}
	enc := yaml.NewEncoder(os.Stdout)
	enc.SetIndent(2)
	enc.CompactSeqIndent()
	if err := enc.Encode(&doc); err != nil {
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

// Errors are *manifest.Error values with the place in the input; they wrap
// the cause: a *rewrite.InvalidReferenceError, a *rewrite.CollisionError,
// ErrNotString. A run reports up to 20 of them, joined.
func ExampleError() {
	in := `kind: Pod
metadata: {name: web}
spec:
  containers:
  - {name: a, image: "Nginx:1.25"}
  - {name: b, image: 42}
`
	rw, err := manifest.New(rewrite.Config{})
	if err != nil {
		panic(err)
	}
	_, err = rw.RewriteBytes([]byte(in), "pod.yaml")
	for _, err := range err.(interface{ Unwrap() []error }).Unwrap() {
		var e *manifest.Error
		var invalid *rewrite.InvalidReferenceError
		switch {
		case errors.As(err, &invalid) && errors.As(err, &e):
			fmt.Printf("%s:%d: %s: invalid %q\n", e.Location.File, e.Location.Line, e.Location.Field, invalid.Value)
		case errors.Is(err, manifest.ErrNotString) && errors.As(err, &e):
			fmt.Printf("%s:%d: %s: not a string\n", e.Location.File, e.Location.Line, e.Location.Field)
		}
	}
	// Output:
	// pod.yaml:5: spec.containers[0].image: invalid "Nginx:1.25"
	// pod.yaml:6: spec.containers[1].image: not a string
}
