package helm_test

import (
	"path/filepath"
	"reflect"
	"testing"

	"github.com/rehost/rehost/pkg/app"
	"github.com/rehost/rehost/pkg/helm"
)

// TestRenderer: app.List with Helm's renderer finds the images of the
// chart's templates and hooks, located in the chart on disk, besides those
// its annotation declares, and warns of nothing.
func TestRenderer(t *testing.T) {
	dir := filepath.Join("..", "..", "testdata", "sealer-app")
	var warns []error
	l, err := app.List([]string{dir}, app.Options{Renderer: helm.Renderer(helm.Options{ReleaseName: "web"}), Warn: func(err error) { warns = append(warns, err) }})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]string{}
	for _, img := range l.Images {
		for _, o := range img.Occurrences {
			rel, _ := filepath.Rel(dir, o.File)
			got[img.Image] = append(got[img.Image], filepath.ToSlash(rel)+" "+o.Field)
		}
	}
	want := map[string][]string{
		"docker.io/library/nginx:1.25": {
			"charts/web/Chart.yaml annotations[helm.sh/images][0].image",
			"charts/web/templates/deployment.yaml spec.template.spec.containers[0].image",
		},
		"docker.io/library/busybox:1.36": {
			"charts/web/Chart.yaml annotations[helm.sh/images][1].image",
			"charts/web/templates/migrate-job.yaml spec.template.spec.containers[0].image",
		},
		"quay.io/example/operand:2.1":  {"imageList "},
		"quay.io/example/operator:2.1": {"manifests/operator.yaml spec.template.spec.containers[0].image"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("images:\n%q\nwant:\n%q", got, want)
	}
	if len(warns) != 0 {
		t.Errorf("warnings %v", warns)
	}
}
