package helm

import (
	"github.com/rehost/rehost/pkg/app"
	"github.com/rehost/rehost/pkg/rendered"
)

// Renderer returns the renderer of [app.List] that renders each chart with
// [Render] and opts: Helm 3.22, offline, as `helm template` does.
func Renderer(opts Options) app.Renderer {
	return app.RenderFunc(func(path string) (*rendered.Chart, error) { return Render(path, opts) })
}
