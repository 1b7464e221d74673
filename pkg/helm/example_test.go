package helm_test

import (
	"fmt"
	"log"
	"os"

	"github.com/rehost/rehost/pkg/helm"
	"github.com/rehost/rehost/pkg/manifest"
	"github.com/rehost/rehost/pkg/rewrite"
	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/cli/values"
)

// List the images a chart installs with the given values: its manifests,
// hooks and helm.sh/images annotations, of the enabled subcharts only. The
// Rewriter can collect the images of other charts and manifests too.
func ExampleImages() {
	rw, err := manifest.New(rewrite.Config{Registry: "sea.hub:5000"})
	if err != nil {
		log.Fatal(err)
	}
	opts := helm.Options{
		Values: values.Options{Values: []string{"sub-c.enabled=true", "tags.backend=false"}},
	}
	if err := helm.Images(rw, "../../testdata/charts/parent", opts); err != nil {
		log.Fatal(err)
	}
	for _, img := range rw.Images() {
		fmt.Println(img.Source, "->", img.Target)
	}
	// Output:
	// docker.io/library/nginx:1.25 -> sea.hub:5000/library/nginx:1.25
	// docker.io/team/sub-a-migrate:1.0 -> sea.hub:5000/team/sub-a-migrate:1.0
	// docker.io/team/sub-a:2.0-parent -> sea.hub:5000/team/sub-a:2.0-parent
	// docker.io/team/sub-c:9.9 -> sea.hub:5000/team/sub-c:9.9
	// ghcr.io/parent/agent:v0.4.2 -> sea.hub:5000/parent/agent:v0.4.2
	// quay.io/parent/operand:3.1 -> sea.hub:5000/parent/operand:3.1
	// quay.io/sub-c/operand:9.9 -> sea.hub:5000/sub-c/operand:9.9
	// registry.k8s.io/pause:3.9 -> sea.hub:5000/pause:3.9
}

// Render a chart offline, hooks included, and write it rewritten, as
// `rehost rewrite CHART` does.
func ExampleRender() {
	c, err := helm.Render("../../testdata/charts/hooks", helm.Options{ReleaseName: "shop", SkipTests: true})
	if err != nil {
		log.Fatal(err)
	}
	for _, m := range c.Manifests {
		fmt.Println(m.Name, m.Hook)
	}
	rw, err := manifest.New(rewrite.Config{Registry: "sea.hub:5000"})
	if err != nil {
		log.Fatal(err)
	}
	if err := c.Rewrite(os.Stdout, rw); err != nil {
		log.Fatal(err)
	}
	// Output:
	// hooks/templates/deployment.yaml []
	// hooks/templates/deployment.yaml []
	// hooks/templates/migrate-job.yaml [pre-install pre-upgrade]
	// ---
	// # Source: hooks/templates/deployment.yaml
	// apiVersion: v1
	// kind: Service
	// metadata:
	//   name: shop-app
	// spec:
	//   selector: {app: hooks}
	//   ports:
	//   - port: 80
	// ---
	// # Source: hooks/templates/deployment.yaml
	// apiVersion: apps/v1
	// kind: Deployment
	// metadata:
	//   name: shop-app
	// spec:
	//   selector:
	//     matchLabels: {app: hooks}
	//   template:
	//     metadata:
	//       labels: {app: hooks}
	//     spec:
	//       containers:
	//       - name: app
	//         image: sea.hub:5000/hooks/app:1.0
	// ---
	// # Source: hooks/templates/migrate-job.yaml
	// apiVersion: batch/v1
	// kind: Job
	// metadata:
	//   name: shop-migrate
	//   annotations:
	//     "helm.sh/hook": pre-install,pre-upgrade
	//     "helm.sh/hook-weight": "-5"
	// spec:
	//   template:
	//     spec:
	//       restartPolicy: Never
	//       containers:
	//       - name: migrate
	//         image: sea.hub:5000/hooks/migrate:1.0
}

// Rewrite a release's images in process, with Helm's own install action.
// Helm does not pass hooks to post-renderers: their images stay as written.
func ExamplePostRenderer() {
	rw, err := manifest.New(rewrite.Config{Registry: "sea.hub:5000"})
	if err != nil {
		log.Fatal(err)
	}
	ch, err := helm.Load("../../testdata/charts/hooks")
	if err != nil {
		log.Fatal(err)
	}
	install := action.NewInstall(&action.Configuration{})
	install.DryRun, install.ClientOnly = true, true // as helm template; a real install needs a cluster configuration
	install.ReleaseName = "shop"
	install.PostRenderer = &helm.PostRenderer{Rewriter: rw}
	if _, err := install.Run(ch, nil); err != nil {
		log.Fatal(err)
	}
	fmt.Println(rw.Sources())
	// Output:
	// [ghcr.io/hooks/app:1.0]
}
