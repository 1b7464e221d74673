package helm

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/rehost/rehost/pkg/helm/internal/airgap"
	"github.com/rehost/rehost/pkg/rewrite"
	"go.yaml.in/yaml/v3"
)

// keyLines lists "path=value" for each key, and "  FROM -> TO" for each
// image it moves.
func keyLines(o *Overlay) []string {
	var out []string
	for _, k := range o.Keys {
		out = append(out, PathString(k.Path)+"="+k.Value)
		for _, m := range k.Images {
			out = append(out, "  "+m.String())
		}
	}
	return out
}

// TestAirgapValuesCalico: tigera-operator's Installation spec is the
// installation map written whole with toYaml; installation.registry is in
// no values file, yet it is the key that sets the operator's registry
// (rehost rewrite adds spec.registry): found as a key absent from the
// values that reaches the object through its parent map. The operator's
// image (in the pre-delete hook too) moves by its registry key.
func TestAirgapValuesCalico(t *testing.T) {
	chart := chartPath("airgap-calico")
	o, err := AirgapValues(chart, Options{}, defaultConfig)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"installation.registry=sea.hub:5000/",
		"  Installation default: spec.registry unset -> sea.hub:5000/",
		"tigeraOperator.registry=sea.hub:5000",
		"  quay.io/tigera/operator:v1.38.3 -> sea.hub:5000/tigera/operator:v1.38.3",
	}
	if got := keyLines(o); !reflect.DeepEqual(got, want) || !o.Complete() {
		t.Fatalf("keys:\n%s\nwant:\n%s\nunmoved %+v", strings.Join(got, "\n"), strings.Join(want, "\n"), o.Unmoved)
	}
	// base; the values together; installation.registry (the only
	// absent key) alone; the check.
	if o.Renders != 4 {
		t.Errorf("%d renders, want 4", o.Renders)
	}
	// toYaml sorts the keys, rehost rewrite adds registry first: the
	// documents are equal as YAML.
	sameYAMLDocs(t, renderedDocs(t, chart, withOverlay(t, Options{}, o)), rewrittenDocs(t, chart, Options{}, defaultConfig))

	// A user who set the registry already needs nothing for it.
	user := filepath.Join(t.TempDir(), "user.yaml")
	if err := os.WriteFile(user, []byte("installation:\n  registry: mirror.example.com/\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	opts := withValues(Options{}, user)
	o, err = AirgapValues(chart, opts, defaultConfig)
	if err != nil {
		t.Fatal(err)
	}
	if got := keyLines(o); len(got) == 0 || got[0] != "installation.registry=sea.hub:5000/" || !o.Complete() {
		t.Errorf("with installation.registry set: %q, unmoved %+v", got, o.Unmoved)
	}
	sameYAMLDocs(t, renderedDocs(t, chart, withOverlay(t, opts, o)), rewrittenDocs(t, chart, opts, defaultConfig))

	out := filepath.Join(t.TempDir(), "calico")
	if _, err := Relocate(chart, out, Options{}, defaultConfig); err != nil {
		t.Fatal(err)
	}
	if vals := string(chartFile(t, out, "values.yaml")); !strings.Contains(vals, "  nonPrivileged: \"Disabled\"\n  # rehost: Installation default: spec.registry unset -> sea.hub:5000/\n  registry: sea.hub:5000/\n") {
		t.Errorf("relocated values.yaml:\n%s", vals)
	}
	sameYAMLDocs(t, renderedDocs(t, out, Options{}), rewrittenDocs(t, chart, Options{}, defaultConfig))
}

// sameYAMLDocs compares documents ("NAME\nYAML") by name and as parsed
// YAML: key order and layout aside.
func sameYAMLDocs(t *testing.T, got, want []string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d documents, want %d", len(got), len(want))
	}
	parse := func(d string) (string, interface{}) {
		name, text, _ := strings.Cut(d, "\n")
		var v interface{}
		if err := yaml.Unmarshal([]byte(text), &v); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return name, v
	}
	for i := range got {
		gn, gv := parse(got[i])
		wn, wv := parse(want[i])
		if gn != wn || !reflect.DeepEqual(gv, wv) {
			t.Errorf("document %d with the overlay:\n%s\nwant (rehost rewrite):\n%s", i, got[i], want[i])
		}
	}
}

func withValues(opts Options, files ...string) Options {
	opts.Values.ValueFiles = append(append([]string(nil), opts.Values.ValueFiles...), files...)
	return opts
}

// TestAirgapValuesDockerHub: Docker Hub official images whose registry and
// repository are separate values: both are set, the registry to the target
// registry and the repository to library/NAME (what rehost rewrite and
// rehost mirror use), never the registry alone to sea.hub:5000/library. A
// global registry shared with a non-official image is set once, with the
// official image's repository; null keys the template defaults are set
// too, the registry told from the repository by the host when both could
// split the reference (docker.io/grafana/tempo), so that the shared probe
// suffices. Every image moves, the hook's included.
func TestAirgapValuesDockerHub(t *testing.T) {
	chart := chartPath("airgap-dockerhub")
	tests := []struct {
		name string
		cfg  rewrite.Config
		want []string
	}{
		{"strip", defaultConfig, []string{
			"configReloader.image.repository=library/busybox",
			"  docker.io/busybox:1.36 -> sea.hub:5000/library/busybox:1.36, with global.image.registry",
			"global.image.registry=sea.hub:5000",
			"  docker.io/busybox:1.36 -> sea.hub:5000/library/busybox:1.36, with configReloader.image.repository",
			"  docker.io/grafana/agent:v0.44.2 -> sea.hub:5000/grafana/agent:v0.44.2",
			"image.registry=sea.hub:5000",
			"  docker.io/traefik:v3.4.1 -> sea.hub:5000/library/traefik:v3.4.1, with image.repository",
			"image.repository=library/traefik",
			"  docker.io/traefik:v3.4.1 -> sea.hub:5000/library/traefik:v3.4.1, with image.registry",
			"proxy.image.registry=sea.hub:5000",
			"  docker.io/haproxy:3.0 -> sea.hub:5000/library/haproxy:3.0, with proxy.image.repository",
			"proxy.image.repository=library/haproxy",
			"  docker.io/haproxy:3.0 -> sea.hub:5000/library/haproxy:3.0, with proxy.image.registry",
			"tempo.image.registry=sea.hub:5000",
			"  docker.io/grafana/tempo:2.8.0 -> sea.hub:5000/grafana/tempo:2.8.0",
		}},
		// Nested under its source host, the registry key takes the host.
		{"nest", rewrite.Config{Registry: "harbor.local:8443/mirror", PathStyle: rewrite.PathStyleNest}, []string{
			"configReloader.image.repository=library/busybox",
			"  docker.io/busybox:1.36 -> harbor.local:8443/mirror/docker.io/library/busybox:1.36, with global.image.registry",
			"global.image.registry=harbor.local:8443/mirror/docker.io",
			"  docker.io/busybox:1.36 -> harbor.local:8443/mirror/docker.io/library/busybox:1.36, with configReloader.image.repository",
			"  docker.io/grafana/agent:v0.44.2 -> harbor.local:8443/mirror/docker.io/grafana/agent:v0.44.2",
			"image.registry=harbor.local:8443/mirror/docker.io",
			"  docker.io/traefik:v3.4.1 -> harbor.local:8443/mirror/docker.io/library/traefik:v3.4.1, with image.repository",
			"image.repository=library/traefik",
			"  docker.io/traefik:v3.4.1 -> harbor.local:8443/mirror/docker.io/library/traefik:v3.4.1, with image.registry",
			"proxy.image.registry=harbor.local:8443/mirror/docker.io",
			"  docker.io/haproxy:3.0 -> harbor.local:8443/mirror/docker.io/library/haproxy:3.0, with proxy.image.repository",
			"proxy.image.repository=library/haproxy",
			"  docker.io/haproxy:3.0 -> harbor.local:8443/mirror/docker.io/library/haproxy:3.0, with proxy.image.registry",
			"tempo.image.registry=harbor.local:8443/mirror/docker.io",
			"  docker.io/grafana/tempo:2.8.0 -> harbor.local:8443/mirror/docker.io/grafana/tempo:2.8.0",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, err := AirgapValues(chart, Options{}, tt.cfg)
			if err != nil {
				t.Fatal(err)
			}
			if got := keyLines(o); !reflect.DeepEqual(got, tt.want) || !o.Complete() {
				t.Fatalf("keys:\n%s\nwant:\n%s\nunmoved %+v", strings.Join(got, "\n"), strings.Join(tt.want, "\n"), o.Unmoved)
			}
			// base; the values together; the null keys together; the
			// check.
			if o.Renders != 4 || o.Alone != 0 {
				t.Errorf("%d renders, %d alone; want 4, 0", o.Renders, o.Alone)
			}
			diffDocs(t, renderedDocs(t, chart, withOverlay(t, Options{}, o)), rewrittenDocs(t, chart, Options{}, tt.cfg))
		})
	}
}

// TestAirgapValuesIstio: istiod's pilot image moves by global.hub (its
// defaults sit under _internal_defaults_do_not_set, so global.hub is in no
// values file), and global.hub is echoed into the istio-sidecar-injector
// and values ConfigMaps: those changes are expected (the injector reads
// the proxy's hub there), every other document renders as rehost rewrite
// renders it. istiod's own hub, which would move pilot alone, is not
// preferred. The gateway's "image: auto" is no image: nothing to set.
func TestAirgapValuesIstio(t *testing.T) {
	chart := chartPath("airgap-istiod")
	o, err := AirgapValues(chart, Options{}, defaultConfig)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"global.hub=sea.hub:5000/istio", "  docker.io/istio/pilot:1.27.0 -> sea.hub:5000/istio/pilot:1.27.0"}
	if got := keyLines(o); !reflect.DeepEqual(got, want) || !o.Complete() {
		t.Fatalf("keys %q, want %q; unmoved %+v", got, want, o.Unmoved)
	}
	got := renderedDocs(t, chart, withOverlay(t, Options{}, o))
	rewritten := rewrittenDocs(t, chart, Options{}, defaultConfig)
	if len(got) != len(rewritten) {
		t.Fatalf("%d documents, want %d", len(got), len(rewritten))
	}
	echoes := 0
	for i := range got {
		if got[i] == rewritten[i] {
			continue
		}
		name, _, _ := strings.Cut(got[i], "\n")
		if name != "airgap-istiod/templates/istiod-injector-configmap.yaml" && name != "airgap-istiod/templates/configmap-values.yaml" {
			t.Errorf("document %d with the overlay:\n%s\nwant (rehost rewrite):\n%s", i, got[i], rewritten[i])
			continue
		}
		echoes++
	}
	if echoes != 2 {
		t.Errorf("%d ConfigMaps echo the overlay, want 2", echoes)
	}
	// The injector's values now name the relocated hub: injected proxies
	// pull from the target registry.
	for _, d := range got {
		if strings.HasPrefix(d, "airgap-istiod/templates/istiod-injector-configmap.yaml\n") {
			var cm struct {
				Data map[string]string `yaml:"data"`
			}
			if err := yaml.Unmarshal([]byte(strings.SplitN(d, "\n", 2)[1]), &cm); err != nil {
				t.Fatal(err)
			}
			var vals struct {
				Global struct{ Hub string } `json:"global"`
			}
			if err := json.Unmarshal([]byte(cm.Data["values"]), &vals); err != nil || vals.Global.Hub != "sea.hub:5000/istio" {
				t.Errorf("injector values: hub %q, %v", vals.Global.Hub, err)
			}
		}
	}

	gw := chartPath("airgap-istio-gateway")
	o, err = AirgapValues(gw, Options{}, defaultConfig)
	if err != nil {
		t.Fatal(err)
	}
	if len(o.Keys) != 0 || !o.Complete() || o.Renders != 1 {
		t.Errorf("gateway: keys %+v, unmoved %+v, %d renders", o.Keys, o.Unmoved, o.Renders)
	}
	if g := renderedDocs(t, gw, Options{}); !reflect.DeepEqual(g, rewrittenDocs(t, gw, Options{}, defaultConfig)) || !strings.Contains(strings.Join(g, ""), "image: auto\n") {
		t.Errorf("gateway rewritten: %q", g)
	}
}

// writeChart writes a chart made of the files given into a temporary
// directory and returns its path.
func writeFamilyChart(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "gen")
	for name, text := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestAirgapValuesEchoRule: only echoes of the values set, in a ConfigMap
// entry that parses as YAML or JSON, at a path ending in the key's, are
// allowed; the same key written into free text, or echoed under another
// name, is rejected and its image reported.
func TestAirgapValuesEchoRule(t *testing.T) {
	deploy := `apiVersion: apps/v1
kind: Deployment
metadata: {name: app}
spec:
  selector: {matchLabels: {app: x}}
  template:
    metadata: {labels: {app: x}}
    spec:
      containers:
        - name: app
          image: "{{ .Values.global.hub }}/app:1"
`
	tests := []struct {
		name, configMap string
		moved           bool
	}{
		{"JSON echo", `values: |-
{{ pick .Values "global" | toPrettyJson | indent 4 }}`, true},
		{"YAML echo under a prefix", `values: |-
    settings:
{{ toYaml .Values | indent 6 }}`, true},
		{"free text", `config: "hub={{ .Values.global.hub }}"`, false},
		{"another name", `values: |-
    {"registry": {{ .Values.global.hub | quote }}}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			chart := writeFamilyChart(t, map[string]string{
				"Chart.yaml":            "apiVersion: v2\nname: gen\nversion: 1.0.0\n",
				"values.yaml":           "global:\n  hub: docker.io/acme\n",
				"templates/deploy.yaml": deploy,
				"templates/cm.yaml":     "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: echo}\ndata:\n  " + tt.configMap + "\n",
			})
			o, err := AirgapValues(chart, Options{}, defaultConfig)
			if err != nil {
				t.Fatal(err)
			}
			if o.Complete() != tt.moved {
				t.Fatalf("complete %t, want %t: keys %+v, unmoved %+v", o.Complete(), tt.moved, o.Keys, o.Unmoved)
			}
			if !tt.moved && !strings.Contains(o.Unmoved[0].Reason, "global.hub: it changes gen/templates/cm.yaml beyond image fields") {
				t.Errorf("reason %q", o.Unmoved[0].Reason)
			}
		})
	}
}

// registryChart writes a chart with n empty registry keys k0..k(n-1)
// (k{i}.imageRegistry), of which the first drive drive an image each; the
// keys listed in fail fail the render when set.
func registryChart(t *testing.T, n, drive int, fail ...int) string {
	t.Helper()
	var vals, tpl strings.Builder
	for i := 0; i < n; i++ {
		fmt.Fprintf(&vals, "k%d:\n  imageRegistry: \"\"\n", i)
	}
	tpl.WriteString("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: app}\nspec:\n  selector: {matchLabels: {app: x}}\n  template:\n    metadata: {labels: {app: x}}\n    spec:\n      containers:\n")
	for i := 0; i < drive; i++ {
		fmt.Fprintf(&tpl, "        - name: c%d\n          image: \"{{ .Values.k%d.imageRegistry | default \"docker.io\" }}/acme/c%d:1\"\n", i, i, i)
	}
	if drive == 0 {
		tpl.WriteString("        - name: c\n          image: docker.io/acme/c:1\n")
	}
	for _, i := range fail {
		fmt.Fprintf(&tpl, "{{- if .Values.k%d.imageRegistry }}{{ fail \"k%d is set\" }}{{ end }}\n", i, i)
	}
	return writeFamilyChart(t, map[string]string{
		"Chart.yaml":            "apiVersion: v2\nname: gen\nversion: 1.0.0\n",
		"values.yaml":           vals.String(),
		"templates/deploy.yaml": tpl.String(),
	})
}

// TestAirgapValuesRenderBound: renders grow with the candidates that
// behave differently, not with the candidates: 1,000 empty registry keys
// that drive nothing cost a render, and 1,000 that each drive an image
// too; one that fails the render among 1,000 costs about 2 log2 N renders;
// when every key fails, the renders stay within N + 12, and never above
// the ceiling.
func TestAirgapValuesRenderBound(t *testing.T) {
	tests := []struct {
		name          string
		n, drive      int
		fail          []int
		renders, keys int // renders: the exact count
	}{
		// base, all keys together, the check (the hard-coded image
		// is reported).
		{"1000 keys drive nothing", 1000, 0, nil, 2, 0},
		// base, all together (3 drive, 997 show nothing), those 997
		// again (nothing), the check.
		{"1000 keys, 3 drive", 1000, 3, nil, 4, 3},
		// base, all together (each drives its image), the check.
		{"1000 keys, each drives", 1000, 1000, nil, 3, 1000},
		// base, then halving towards the one that fails (which is
		// probed alone), the check.
		{"1000 keys, 1 fails", 1000, 3, []int{700}, 24, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, err := AirgapValues(registryChart(t, tt.n, tt.drive, tt.fail...), Options{}, defaultConfig)
			if err != nil {
				t.Fatal(err)
			}
			if o.Candidates != tt.n || o.Renders != tt.renders || len(o.Keys) != tt.keys {
				t.Errorf("%d candidates, %d renders, %d keys; want %d, %d, %d", o.Candidates, o.Renders, len(o.Keys), tt.n, tt.renders, tt.keys)
			}
			if tt.drive > 0 && !o.Complete() {
				t.Errorf("unmoved %+v", o.Unmoved[0])
			}
		})
	}

	// Every key fails the render: N + 12 at most.
	const n = 60
	var all []int
	for i := 0; i < n; i++ {
		all = append(all, i)
	}
	o, err := AirgapValues(registryChart(t, n, 3, all...), Options{}, defaultConfig)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d candidates that all fail the render: %d renders", n, o.Renders)
	// base, N + 4 probes (four group renders that teach nothing, then
	// each alone), no check: nothing to set.
	if o.Renders != 1+n+airgap.ProbeSlack || o.Renders > n+12 || o.Complete() {
		t.Errorf("%d renders for %d candidates that all fail (at most %d); complete %t", o.Renders, n, n+12, o.Complete())
	}
	if !strings.Contains(o.Unmoved[0].Reason, "empty or absent keys that could not be probed: k0.imageRegistry: rendering with it changed fails") {
		t.Errorf("reason %q", o.Unmoved[0].Reason)
	}

	// The ceiling: the candidates left unprobed are reported.
	s, err := searchFor(registryChart(t, n, 3, all...), Options{}, defaultConfig)
	if err != nil {
		t.Fatal(err)
	}
	s.MaxRenders = 30
	o, err = solve(s, defaultConfig)
	if err != nil {
		t.Fatal(err)
	}
	if o.Renders > 30 || o.Complete() || !strings.Contains(o.Unmoved[len(o.Unmoved)-1].Reason, "not probed: the search stops at 30 renders") {
		t.Errorf("%d renders (ceiling 30); unmoved %+v", o.Renders, o.Unmoved)
	}
}

// TestAirgapValuesFamilyStable: the overlays of the family charts are the
// same bytes at every run.
func TestAirgapValuesFamilyStable(t *testing.T) {
	for _, c := range []string{"airgap-bitnami", "airgap-calico", "airgap-dockerhub", "airgap-istiod"} {
		var first []byte
		for i := 0; i < 3; i++ {
			o, err := AirgapValues(chartPath(c), Options{}, defaultConfig)
			if err != nil {
				t.Fatal(err)
			}
			b, err := o.Bytes()
			if err != nil {
				t.Fatal(err)
			}
			if first == nil {
				first = b
			} else if string(b) != string(first) {
				t.Fatalf("%s run %d:\n%s\nfirst run:\n%s", c, i, b, first)
			}
		}
	}
}

// TestRelocateBitnamiSwitch: a relocated Bitnami-style chart whose check
// reads an annotation rehost does not rewrite (here "verified") still
// fails the check without the switch: the switch is merged into its
// values.yaml, with its comment.
func TestRelocateBitnamiSwitch(t *testing.T) {
	src := chartPath("airgap-bitnami")
	files := map[string]string{}
	if err := filepath.Walk(src, func(p string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(src, p)
		files[rel] = string(b)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	files["Chart.yaml"] = strings.Replace(files["Chart.yaml"], "annotations:\n", "annotations:\n  verified: docker.io/bitnami/nginx docker.io/bitnami/nginx-exporter docker.io/bitnami/os-shell\n", 1)
	tpl := "charts/common/templates/_errors.tpl"
	if !strings.Contains(files[tpl], ".context.Chart.Annotations.images") {
		t.Fatal("the check does not read the images annotation")
	}
	files[tpl] = strings.ReplaceAll(files[tpl], ".context.Chart.Annotations.images", ".context.Chart.Annotations.verified")
	chart := writeFamilyChart(t, files)
	out := filepath.Join(t.TempDir(), "bitnami")
	rel, err := Relocate(chart, out, Options{}, defaultConfig)
	if err != nil {
		t.Fatal(err)
	}
	if len(rel.Overlay.Keys) != 2 || PathString(rel.Overlay.Keys[1].Path) != "global.security.allowInsecureImages" {
		t.Errorf("relocated with %+v", rel.Overlay.Keys)
	}
	if vals := string(chartFile(t, out, "values.yaml")); !strings.Contains(vals, "    # rehost: Bitnami's image verification (common.errors.insecureImages, https://github.com/bitnami/charts/issues/30850) rejects any registry but the original: the relocated images are the same images, in sea.hub:5000\n    allowInsecureImages: true\n") {
		t.Errorf("values.yaml:\n%s", vals)
	}
	diffDocs(t, renderedDocs(t, out, Options{}), rewrittenDocs(t, chart, Options{}, defaultConfig))
}
