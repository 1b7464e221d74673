package helm

import (
	"bytes"
	"strings"
	"testing"

	"github.com/rehost/rehost/pkg/manifest"
	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/release"
)

// installClientOnly runs Helm's install action as `helm template` does, with
// the post-renderer pr.
func installClientOnly(t testing.TB, chart string, pr *PostRenderer) *release.Release {
	t.Helper()
	ch, err := Load(chartPath(chart))
	if err != nil {
		t.Fatal(err)
	}
	install := action.NewInstall(&action.Configuration{})
	install.DryRun, install.ClientOnly, install.Replace, install.IncludeCRDs = true, true, true, true
	install.ReleaseName, install.Namespace = DefaultReleaseName, DefaultNamespace
	if pr != nil {
		install.PostRenderer = pr
	}
	rel, err := install.Run(ch, map[string]interface{}{})
	if err != nil {
		t.Fatal(err)
	}
	return rel
}

// TestPostRenderer sets a PostRenderer on Helm's install action, as sealer
// would in process: the release manifest comes out as Render and Rewrite
// give it, while Helm keeps the hooks away from the post-renderer.
func TestPostRenderer(t *testing.T) {
	rw, err := manifest.New(defaultConfig)
	if err != nil {
		t.Fatal(err)
	}
	rel := installClientOnly(t, "hooks", &PostRenderer{Rewriter: rw})

	c := mustRender(t, "hooks", Options{})
	want, err := manifest.New(defaultConfig)
	if err != nil {
		t.Fatal(err)
	}
	var ordinary strings.Builder
	for _, m := range c.Manifests {
		if !m.IsHook() {
			out, err := want.RewriteBytes([]byte(m.Text()), m.Name)
			if err != nil {
				t.Fatal(err)
			}
			ordinary.Write(out)
		}
	}
	if rel.Manifest != ordinary.String() {
		t.Errorf("post-rendered manifest:\n%s\nwant:\n%s", rel.Manifest, ordinary.String())
	}
	if !strings.Contains(rel.Manifest, "image: sea.hub:5000/hooks/app:1.0") {
		t.Errorf("post-rendered manifest lacks the rewritten image:\n%s", rel.Manifest)
	}
	if got := rw.Sources(); len(got) != 1 || got[0] != "ghcr.io/hooks/app:1.0" {
		t.Errorf("post-renderer images %q, want the Deployment's only", got)
	}
	// Helm 3 never passes hooks through a post-renderer.
	for _, h := range rel.Hooks {
		if strings.Contains(h.Manifest, "sea.hub:5000") {
			t.Errorf("hook %s was post-rendered; Helm's behaviour changed, update the documentation:\n%s", h.Path, h.Manifest)
		}
	}
	if len(rel.Hooks) != 2 {
		t.Errorf("%d hooks, want 2", len(rel.Hooks))
	}
}

func TestPostRendererError(t *testing.T) {
	rw, err := manifest.New(defaultConfig)
	if err != nil {
		t.Fatal(err)
	}
	pr := &PostRenderer{Rewriter: rw}
	_, err = pr.Run(bytes.NewBufferString("---\n# Source: x/templates/p.yaml\nkind: Pod\nspec:\n  containers: [{name: c, image: \"{{ .Values.image }}\"}]\n"))
	if err == nil || !strings.Contains(err.Error(), PostRendererName+":5") {
		t.Errorf("error %v, want it located at %s:5", err, PostRendererName)
	}
}
