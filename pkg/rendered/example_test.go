package rendered_test

import (
	"bytes"
	"fmt"
	"log"
	"os"

	"github.com/rehost/rehost/pkg/manifest"
	"github.com/rehost/rehost/pkg/rendered"
	"github.com/rehost/rehost/pkg/rewrite"
)

// What any Helm's template engine returns (Helm 3's engine.Render: template
// name -> rendered text), turned into the chart `helm template
// --include-crds` prints: NOTES.txt and partials dropped, documents sorted
// in Helm's install order, the hook marked and last, the CRD first. The
// caller adds the crds/ files (with Helm: chart.CRDObjects()).
func ExampleFromTemplates() {
	files := map[string]string{
		"web/templates/NOTES.txt":    "Visit http://web",
		"web/templates/_helpers.tpl": "",
		"web/templates/all.yaml": "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\n---\n" +
			"apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: web}\n",
		"web/templates/job.yaml": "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: migrate\n  annotations: {helm.sh/hook: pre-install}\n",
		"web/crds/widget.yaml":   "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\n",
	}
	meta := rendered.Metadata{
		Name:        "web",
		Version:     "1.0.0",
		Annotations: map[string]string{rendered.AnnotationKey: "- name: operand\n  image: quay.io/example/operand:2.1\n"},
	}
	c, err := rendered.FromTemplates(meta, files)
	if err != nil {
		log.Fatal(err)
	}
	for _, m := range c.Manifests {
		fmt.Println(m.Name, m.Line, m.Hook)
	}
	for _, a := range c.Images {
		fmt.Println("annotation:", a.Image)
	}
	// Output:
	// web/crds/widget.yaml 1 []
	// web/templates/all.yaml 5 []
	// web/templates/all.yaml 1 []
	// web/templates/job.yaml 1 [pre-install]
	// annotation: quay.io/example/operand:2.1
}

// The post-renderer of any Helm's install or upgrade action (set it as
// action.Install.PostRenderer): here called as Helm calls it, on the
// release manifest.
func ExamplePostRenderer() {
	rw, err := manifest.New(rewrite.Config{Registry: "sea.hub:5000"})
	if err != nil {
		log.Fatal(err)
	}
	pr := &rendered.PostRenderer{Rewriter: rw}
	out, err := pr.Run(bytes.NewBufferString("---\n# Source: web/templates/pod.yaml\napiVersion: v1\nkind: Pod\nmetadata: {name: web}\nspec:\n  containers:\n  - name: web\n    image: nginx:1.25\n"))
	if err != nil {
		log.Fatal(err)
	}
	os.Stdout.Write(out.Bytes())
	fmt.Println("to cache:", rw.ToCache())
	// Output:
	// ---
	// # Source: web/templates/pod.yaml
	// apiVersion: v1
	// kind: Pod
	// metadata: {name: web}
	// spec:
	//   containers:
	//   - name: web
	//     image: sea.hub:5000/library/nginx:1.25
	// to cache: [docker.io/library/nginx:1.25]
}
