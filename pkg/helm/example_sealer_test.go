package helm_test

import (
	"bytes"
	"fmt"
	"log"
	"os"
	"path/filepath"

	rehostapp "github.com/rehost/rehost/pkg/app"
	"github.com/rehost/rehost/pkg/helm"
	"github.com/rehost/rehost/pkg/manifest"
	"github.com/rehost/rehost/pkg/rewrite"
)

// The sealer shape, from the library alone: an application directory with
// manifests/, charts/ and a hand-kept imageList. At build time, the images
// to cache in the private registry, in one call with the chart rendered by
// Helm (helm.Renderer plugs Render into app.List); at apply time, the
// directory rendered and rewritten into an output folder.
func Example_sealerApp() {
	const app = "../../testdata/sealer-app"
	cfg := rewrite.Config{Registry: "sea.hub:5000"}
	warn := manifest.WithWarnings(func(err error) { log.Print(err) })

	// Build time: one call lists the manifests, the rendered chart (its
	// templates, its hooks and its Chart.yaml annotations) and the
	// imageList together.
	listing, err := rehostapp.List([]string{app}, rehostapp.Options{
		Config:   cfg,
		Renderer: helm.Renderer(helm.Options{}),
		Warn:     func(err error) { log.Print(err) },
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("to cache:")
	for _, img := range listing.ToCache() {
		fmt.Println(" ", img)
	}

	// Apply time: each manifest file and each chart template, rewritten,
	// at the same relative path under the output folder.
	out, err := os.MkdirTemp("", "sealer-app-*")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(out)
	rw, err := manifest.New(cfg, warn)
	if err != nil {
		log.Fatal(err)
	}
	inputs, err := manifest.ExpandPaths([]string{app})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("written:")
	for _, in := range inputs {
		if in.ImageList {
			continue // nothing to apply
		}
		if !in.Chart {
			data, err := os.ReadFile(in.Path)
			if err != nil {
				log.Fatal(err)
			}
			if data, err = rw.RewriteBytes(data, in.Path); err != nil {
				log.Fatal(err)
			}
			write(out, in.Rel, data)
			continue
		}
		c, err := helm.Render(in.Path, helm.Options{ReleaseName: "web"})
		if err != nil {
			log.Fatal(err)
		}
		if err := c.AddTo(rw); err != nil {
			log.Fatal(err)
		}
		for _, t := range c.Templates() {
			var buf bytes.Buffer
			if err := c.RewriteDocuments(&buf, rw, t.Name); err != nil {
				log.Fatal(err)
			}
			write(out, filepath.Join(filepath.Dir(in.Rel), t.Name), buf.Bytes())
		}
	}
	// Output:
	// to cache:
	//   docker.io/library/busybox:1.36
	//   docker.io/library/nginx:1.25
	//   quay.io/example/operand:2.1
	//   quay.io/example/operator:2.1
	// written:
	//   charts/web/templates/deployment.yaml
	//   charts/web/templates/migrate-job.yaml
	//   manifests/operator.yaml
}

func write(dir, rel string, data []byte) {
	p := filepath.Join(dir, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		log.Fatal(err)
	}
	fmt.Println(" ", rel)
}
