package helm

import (
	"fmt"
	"math/rand"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/rehost/rehost/pkg/rendered"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	"helm.sh/helm/v3/pkg/releaseutil"
)

// TestInstallOrderMatchesHelm checks rendered.FromTemplates's order
// against Helm's own releaseutil.SortManifests on InstallOrder: every kind
// of the table, unknown kinds, repeated kinds, documents without a kind,
// hooks (of unknown events too, which both leave out), shuffled over
// several files, many times.
func TestInstallOrderMatchesHelm(t *testing.T) {
	if got, want := rendered.InstallOrder(), []string(releaseutil.InstallOrder); !reflect.DeepEqual(got, want) {
		t.Fatalf("rendered.InstallOrder:\n%q\nHelm's:\n%q", got, want)
	}
	kinds := append([]string{"Widget", "Gadget", "", "Deployment", "Deployment", "ConfigMap", "zeta", "Aardvark"}, releaseutil.InstallOrder...)
	hooks := []string{"pre-install", "post-install,pre-upgrade", "test", "test-success", "pre-delete", " Post-Rollback ", "pre-instal", "", "pre-install,nope"}
	rng := rand.New(rand.NewSource(1))
	for round := 0; round < 200; round++ {
		files := map[string]string{}
		for i, k := range kinds {
			doc := fmt.Sprintf("apiVersion: v1\nkind: %s\nmetadata:\n  name: r%d-%d\n", k, round, i)
			switch {
			case k == "":
				doc = fmt.Sprintf("# nothing %d\n", i)
			case rng.Intn(4) == 0:
				doc += fmt.Sprintf("  annotations:\n    helm.sh/hook: %q\n", hooks[rng.Intn(len(hooks))])
			case rng.Intn(6) == 0:
				doc += "  annotations: {other: x}\n"
			case rng.Intn(8) == 0:
				doc = "kind: Namespace\n" + doc // a repeated key: the last one counts
			}
			name := fmt.Sprintf("web/templates/t%d.yaml", rng.Intn(5))
			if rng.Intn(6) == 0 {
				name = "web/charts/db/templates/s.yaml"
			}
			if files[name] != "" {
				files[name] += "\n---\n"
			}
			files[name] += doc
		}
		for name := range files {
			if rng.Intn(3) == 0 {
				files[name] = "\n# leading comment line\n---\n" + files[name] + "\n---\n"
			}
		}

		var helmHooks, helmGeneric []string
		_, err := captureLog(func() error {
			h, ms, err := releaseutil.SortManifests(files, nil, releaseutil.InstallOrder)
			for _, x := range h {
				var ev []string
				for _, e := range x.Events {
					ev = append(ev, string(e))
				}
				helmHooks = append(helmHooks, x.Path+"\n"+x.Manifest+"\n"+strings.Join(ev, ","))
			}
			for _, m := range ms {
				helmGeneric = append(helmGeneric, m.Name+"\n"+m.Content+"\n")
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		c, err := rendered.FromTemplates(rendered.Metadata{Name: "web"}, files)
		if err != nil {
			t.Fatal(err)
		}
		var gotHooks, gotGeneric []string
		for _, m := range c.Manifests {
			if m.IsHook() {
				gotHooks = append(gotHooks, m.Name+"\n"+m.Content+"\n"+strings.Join(m.Hook, ","))
			} else {
				gotGeneric = append(gotGeneric, m.Name+"\n"+m.Content+"\n")
			}
			// The line is where the content stands in its template's output.
			if text := files[m.Name]; !strings.HasPrefix(afterLine(text, m.Line), m.Content) {
				t.Fatalf("round %d: %s line %d does not start %q", round, m.Name, m.Line, m.Content)
			}
		}
		if !reflect.DeepEqual(gotGeneric, helmGeneric) {
			t.Fatalf("round %d: manifests:\n%s\nHelm's:\n%s", round, strings.Join(gotGeneric, "--\n"), strings.Join(helmGeneric, "--\n"))
		}
		if !reflect.DeepEqual(gotHooks, helmHooks) {
			t.Fatalf("round %d: hooks:\n%s\nHelm's:\n%s", round, strings.Join(gotHooks, "\n--\n"), strings.Join(helmHooks, "\n--\n"))
		}
	}
}

// afterLine returns text from the first non-blank character of line n
// (1-based) on.
func afterLine(text string, n int) string {
	for ; n > 1; n-- {
		_, text, _ = strings.Cut(text, "\n")
	}
	return strings.TrimLeft(text, " \t")
}

// TestFromTemplatesMatchesRender: for each test chart, the engine's
// output given to rendered.FromTemplates, with the chart's metadata and
// its CRDs, is the chart Render gives (the client-only install `helm
// template` runs): same documents, order, hooks, lines and annotation
// images. This is what a program on another Helm version does with its
// own engine.
func TestFromTemplatesMatchesRender(t *testing.T) {
	entries, err := os.ReadDir(chartsDir)
	if err != nil {
		t.Fatal(err)
	}
	compared := 0
	for _, e := range entries {
		name := e.Name()
		t.Run(name, func(t *testing.T) {
			want, err := Render(chartPath(name), Options{})
			if err != nil {
				t.Skipf("Render fails: %v", err) // error cases have tests of their own
			}
			ch, err := Load(chartPath(name))
			if err != nil {
				t.Fatal(err)
			}
			vals := map[string]interface{}{}
			if err := chartutil.ProcessDependenciesWithMerge(ch, vals); err != nil {
				t.Fatal(err)
			}
			kv, err := chartutil.ParseKubeVersion(DefaultKubeVersion)
			if err != nil {
				t.Fatal(err)
			}
			caps := chartutil.DefaultCapabilities.Copy()
			caps.KubeVersion = *kv
			top, err := chartutil.ToRenderValues(ch, vals, chartutil.ReleaseOptions{Name: DefaultReleaseName, Namespace: DefaultNamespace, Revision: 1, IsInstall: true}, caps)
			if err != nil {
				t.Fatal(err)
			}
			var files map[string]string
			if _, err := captureLog(func() (err error) { files, err = engine.Render(ch, top); return err }); err != nil {
				t.Fatal(err)
			}
			for _, crd := range ch.CRDObjects() {
				files[crd.Filename] = string(crd.File.Data)
			}
			meta := Metadata(ch)
			meta.Values = top["Values"].(chartutil.Values)
			got, err := rendered.FromTemplates(meta, files)
			if err != nil {
				t.Fatal(err)
			}
			random := name == "airgap-random" // genCA and randAlphaNum: the two renders differ
			for i := range want.Manifests {
				if i >= len(got.Manifests) {
					break
				}
				w, g := want.Manifests[i], got.Manifests[i]
				if random {
					w.Content, g.Content, w.Line, g.Line = "", "", 0, 0
				}
				if !reflect.DeepEqual(g, w) {
					t.Errorf("manifest %d:\n%+v\nRender's:\n%+v", i, g, w)
				}
			}
			if len(got.Manifests) != len(want.Manifests) {
				t.Errorf("%d manifests, Render gives %d", len(got.Manifests), len(want.Manifests))
			}
			if !reflect.DeepEqual(got.Images, want.Images) {
				t.Errorf("images %+v\nRender's %+v", got.Images, want.Images)
			}
			if got.Name != want.Name {
				t.Errorf("name %q, Render's %q", got.Name, want.Name)
			}
			compared++
		})
	}
	if compared < 8 {
		t.Errorf("only %d charts compared", compared)
	}
}
