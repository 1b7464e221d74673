package helm4compat

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/rehost/rehost/pkg/rendered"
	releaseutil "helm.sh/helm/v4/pkg/release/v1/util"
)

// TestOrderMatchesHelm4: given Helm 4's install order (which adds the
// webhook configurations last), rendered.FromTemplates orders the
// documents and hooks of a template engine's output as Helm 4's
// SortManifests does. Helm 4 keeps a document's trailing white space,
// Helm 3 does not: contents compare trimmed.
func TestOrderMatchesHelm4(t *testing.T) {
	kinds := append([]string{"Widget", "ValidatingWebhookConfiguration", "MutatingWebhookConfiguration", "Deployment"}, releaseutil.InstallOrder...)
	files := map[string]string{}
	for i, k := range kinds {
		name := fmt.Sprintf("web/templates/t%d.yaml", i%3)
		doc := fmt.Sprintf("apiVersion: v1\nkind: %s\nmetadata:\n  name: r%d\n", k, i)
		if i%5 == 0 {
			doc += "  annotations:\n    helm.sh/hook: pre-install\n"
		}
		if files[name] != "" {
			files[name] += "---\n"
		}
		files[name] += doc
	}
	hooks, ms, err := releaseutil.SortManifests(files, nil, releaseutil.InstallOrder)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, m := range ms {
		want = append(want, m.Name+" "+strings.TrimSpace(m.Content))
	}
	for _, h := range hooks {
		want = append(want, h.Path+" "+strings.TrimSpace(h.Manifest)+" hook")
	}
	c, err := rendered.FromTemplates(rendered.Metadata{Name: "web"}, files, releaseutil.InstallOrder...)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range c.Manifests {
		s := m.Name + " " + m.Content
		if m.IsHook() {
			s += " hook"
		}
		got = append(got, s)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("order:\n%s\nHelm 4's:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
