package helm39

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/rehost/rehost/pkg/rendered"
	"helm.sh/helm/v3/pkg/releaseutil"
)

// orderFiles are templates with a document of every kind of Helm 3.9's
// and 3.22's install orders, unknown kinds and hooks, over several files.
func orderFiles() map[string]string {
	kinds := append([]string{"PriorityClass", "Widget", "MutatingWebhookConfiguration", "Deployment"}, rendered.InstallOrder()...)
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
	return files
}

// TestOrderMatchesHelm39: given Helm 3.9's own install order (which has
// no PriorityClass), rendered.FromTemplates orders documents and hooks as
// Helm 3.9's releaseutil.SortManifests does.
func TestOrderMatchesHelm39(t *testing.T) {
	requireHelm39(t)
	files := orderFiles()
	hooks, ms, err := releaseutil.SortManifests(files, nil, releaseutil.InstallOrder)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, m := range ms {
		want = append(want, m.Name+" "+m.Content)
	}
	for _, h := range hooks {
		want = append(want, h.Path+" "+h.Manifest+" hook")
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
		t.Errorf("order:\n%s\nHelm 3.9's:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if strings.Contains(got[0], "PriorityClass") {
		t.Error("Helm 3.9 has no PriorityClass in its install order: it sorts with the unknown kinds")
	}
}
