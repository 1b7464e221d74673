package app_test

import (
	"fmt"
	"log"
	"strings"

	"github.com/rehost/rehost/pkg/app"
	"github.com/rehost/rehost/pkg/rendered"
	"github.com/rehost/rehost/pkg/rewrite"
)

// The sealer shape, without Helm: an application directory with
// manifests/, charts/ and a hand-kept imageList, listed in one call. The
// chart is not rendered (no Renderer), so its images are those its
// Chart.yaml declares in the helm.sh/images annotation, and a warning says
// so. Each image comes fully qualified, to pull and cache, and as written.
func Example_sealerApp() {
	listing, err := app.List([]string{"../../testdata/sealer-app"}, app.Options{
		Config: rewrite.Config{Registry: "sea.hub:5000"},
		Warn:   func(err error) { fmt.Println("warning:", err) },
	})
	if err != nil {
		log.Fatal(err)
	}
	for _, img := range listing.Images {
		fmt.Printf("%s (written %s)\n", img.Image, strings.Join(img.Written, ", "))
	}
	// Output:
	// warning: ../../testdata/sealer-app/charts/web: chart not rendered (no renderer): 2 image(s) listed from the image annotations of its Chart.yaml files (conditions not evaluated, every subchart read), none from its templates
	// docker.io/library/busybox:1.36 (written busybox:1.36)
	// docker.io/library/nginx:1.25 (written nginx:1.25)
	// quay.io/example/operand:2.1 (written quay.io/example/operand:2.1)
	// quay.io/example/operator:2.1 (written quay.io/example/operator:2.1)
}

// A Renderer is any function that turns a chart's path into a
// rendered.Chart. sealer renders with its own Helm (3.9: engine.Render)
// and hands the templates to rendered.FromTemplates; here the rendered
// templates are given as they are.
func ExampleRenderFunc() {
	render := app.RenderFunc(func(path string) (*rendered.Chart, error) {
		// With Helm: ch, _ := loader.Load(path); files, _ := engine.Render(ch, values)
		files := map[string]string{
			"web/templates/NOTES.txt":       "Visit http://web",
			"web/templates/_helpers.tpl":    "",
			"web/templates/deployment.yaml": "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  template:\n    spec:\n      containers:\n      - name: web\n        image: nginx:1.25\n",
			"web/templates/migrate-job.yaml": "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: migrate\n  annotations:\n    helm.sh/hook: pre-install\n" +
				"spec:\n  template:\n    spec:\n      containers:\n      - name: migrate\n        image: busybox:1.36\n",
		}
		return rendered.FromTemplates(rendered.Metadata{Name: "web", Version: "1.0.0"}, files)
	})
	listing, err := app.List([]string{"../../testdata/sealer-app/charts/web"}, app.Options{Renderer: render})
	if err != nil {
		log.Fatal(err)
	}
	for _, img := range listing.Images {
		o := img.Occurrences[0]
		fmt.Printf("%s at %s:%d\n", img.Image, o.File, o.Line)
	}
	// Output:
	// docker.io/library/busybox:1.36 at ../../testdata/sealer-app/charts/web/templates/migrate-job.yaml:12
	// docker.io/library/nginx:1.25 at ../../testdata/sealer-app/charts/web/templates/deployment.yaml:10
}
