package helm39

import (
	"bytes"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/rehost/rehost/pkg/app"
	"github.com/rehost/rehost/pkg/manifest"
	"github.com/rehost/rehost/pkg/rendered"
	"github.com/rehost/rehost/pkg/rewrite"
	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	"helm.sh/helm/v3/pkg/postrender"
	"helm.sh/helm/v3/pkg/releaseutil"
)

// The core's post-renderer is a Helm 3.9 post-renderer.
var _ postrender.PostRenderer = (*rendered.PostRenderer)(nil)

var (
	sealerApp = filepath.Join("..", "..", "testdata", "sealer-app")
	webChart  = filepath.Join(sealerApp, "charts", "web")
)

// TestInstallPostRenderer runs Helm 3.9's install action client-only, as
// `helm install --dry-run` does, with the core's post-renderer: the
// release manifest comes back with its image rewritten; Helm 3 keeps the
// hook away from the post-renderer.
func TestInstallPostRenderer(t *testing.T) {
	requireHelm39(t)
	ch, err := loader.Load(webChart)
	if err != nil {
		t.Fatal(err)
	}
	rw, err := manifest.New(rewrite.Config{Registry: "sea.hub:5000"})
	if err != nil {
		t.Fatal(err)
	}
	install := action.NewInstall(&action.Configuration{Log: func(string, ...interface{}) {}})
	install.DryRun, install.ClientOnly, install.Replace, install.IncludeCRDs = true, true, true, true
	install.ReleaseName, install.Namespace = "web", "default"
	install.PostRenderer = &rendered.PostRenderer{Rewriter: rw}
	rel, err := install.Run(ch, map[string]interface{}{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(rel.Manifest, "image: sea.hub:5000/library/nginx:1.25\n") || strings.Contains(rel.Manifest, "image: nginx:1.25") {
		t.Errorf("post-rendered manifest:\n%s", rel.Manifest)
	}
	if got := rw.ToCache(); !reflect.DeepEqual(got, []string{"docker.io/library/nginx:1.25"}) {
		t.Errorf("to cache %q", got)
	}
	if len(rel.Hooks) != 1 || !strings.Contains(rel.Hooks[0].Manifest, "image: busybox:1.36") {
		t.Errorf("hooks: %+v", rel.Hooks)
	}

	// A Rewriter error is Helm's error.
	rw, _ = manifest.New(rewrite.Config{})
	install.PostRenderer = &rendered.PostRenderer{Rewriter: rw}
	out, err := install.PostRenderer.Run(bytes.NewBufferString("kind: Pod\nspec:\n  containers:\n  - image: [x]\n"))
	if err == nil || out != nil || !strings.Contains(err.Error(), rendered.PostRendererName+":4") {
		t.Errorf("Run: %v, %v", out, err)
	}
}

// render39 is what a sealer adapter writes: sealer's own rendering (Helm
// 3.9's engine on the chart's values, as sealer's charts.RenderHelmChart,
// after Helm's dependency processing, which drops the subcharts the values
// disable) handed to rendered.FromTemplates with the chart's CRDs and
// metadata.
func render39(path string) (*rendered.Chart, error) {
	ch, err := loader.Load(path)
	if err != nil {
		return nil, err
	}
	user := chartutil.Values{}
	if err := chartutil.ProcessDependencies(ch, user); err != nil {
		return nil, err
	}
	vals, err := chartutil.ToRenderValues(ch, user, chartutil.ReleaseOptions{Name: "dryrun", Namespace: "default", IsInstall: true}, chartutil.DefaultCapabilities)
	if err != nil {
		return nil, err
	}
	files, err := engine.Render(ch, vals)
	if err != nil {
		return nil, err
	}
	for _, crd := range ch.CRDObjects() {
		files[crd.Filename] = string(crd.File.Data)
	}
	meta := metadata(ch)
	meta.Values = vals["Values"].(chartutil.Values)
	return rendered.FromTemplates(meta, files, releaseutil.InstallOrder...)
}

func metadata(ch *chart.Chart) rendered.Metadata {
	m := rendered.Metadata{Name: ch.Name(), Version: ch.Metadata.Version, Annotations: ch.Metadata.Annotations}
	for _, d := range ch.Dependencies() {
		m.Subcharts = append(m.Subcharts, metadata(d))
	}
	return m
}

// TestSealerAdapter lists sealer's example application with Helm 3.9
// rendering its chart: the images of the chart's templates and hook join
// those of the manifests and the imageList.
func TestSealerAdapter(t *testing.T) {
	requireHelm39(t)
	var warns []error
	l, err := app.List([]string{sealerApp}, app.Options{Renderer: app.RenderFunc(render39), Warn: func(err error) { warns = append(warns, err) }})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"docker.io/library/busybox:1.36", "docker.io/library/nginx:1.25", "quay.io/example/operand:2.1", "quay.io/example/operator:2.1"}
	if got := l.ToCache(); !reflect.DeepEqual(got, want) {
		t.Errorf("to cache %q, want %q", got, want)
	}
	var fromTemplates []string
	for _, img := range l.Images {
		for _, o := range img.Occurrences {
			if strings.Contains(filepath.ToSlash(o.File), "/templates/") {
				fromTemplates = append(fromTemplates, img.Image+" "+filepath.Base(o.File))
			}
		}
	}
	if want := []string{"docker.io/library/busybox:1.36 migrate-job.yaml", "docker.io/library/nginx:1.25 deployment.yaml"}; !reflect.DeepEqual(fromTemplates, want) {
		t.Errorf("from the templates: %q, want %q", fromTemplates, want)
	}
	if len(warns) != 0 {
		t.Errorf("warnings %v", warns)
	}
}
