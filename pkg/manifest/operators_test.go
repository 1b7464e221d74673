package manifest

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/rehost/rehost/pkg/rewrite"
)

// settingLines lists "field source -> target [added] (action)" for settings.
func settingLines(ss []Setting) []string {
	var out []string
	for _, s := range ss {
		l := fmt.Sprintf("%s %q -> %q", s.Location.Field, s.Source, s.Target)
		if s.Added {
			l += " added"
		}
		out = append(out, l+" "+string(s.Action))
	}
	return out
}

// TestOperatorEntries: each entry of the operator tables (registry
// settings, split references), present, absent and added, in strip and
// nest style, and already in the target registry; the output is the input
// with exactly the expected changes, and rewriting it again changes
// nothing.
func TestOperatorEntries(t *testing.T) {
	const installation = `apiVersion: operator.tigera.io/v1
kind: Installation
metadata:
  name: default
spec:
  # Configures Calico networking.
  calicoNetwork:
    ipPools:
    - cidr: 192.168.0.0/16
`
	tests := []struct {
		name     string
		cfg      rewrite.Config
		in       string
		repl     []string // old, new pairs: the expected output
		images   []string // field=source
		settings []string
		warns    []string // substrings, one warning each
	}{
		{
			name:     "tigera Installation: absent registry added (strip), below the spec line, above the comment",
			in:       installation,
			repl:     []string{"spec:\n", "spec:\n  registry: sea.hub:5000/\n"},
			settings: []string{`spec.registry "" -> "sea.hub:5000/" added rewritten`},
		},
		{
			name:     "tigera Installation: added with a registry prefix",
			cfg:      rewrite.Config{Registry: "harbor.local:8443/calico-mirror"},
			in:       installation,
			repl:     []string{"spec:\n", "spec:\n  registry: harbor.local:8443/calico-mirror/\n"},
			settings: []string{`spec.registry "" -> "harbor.local:8443/calico-mirror/" added rewritten`},
		},
		{
			name:     "tigera Installation: absent, nest: reported, not guessed",
			cfg:      rewrite.Config{PathStyle: rewrite.PathStyleNest},
			in:       installation,
			warns:    []string{"spec.registry: registry setting absent, not set: with path style nest"},
			settings: []string{`spec.registry "" -> "" `},
		},
		{
			name:     "tigera Installation: absent, noAddRegistry: reported, not added",
			cfg:      rewrite.Config{NoAddRegistry: true},
			in:       installation,
			warns:    []string{"registry setting absent, not set (noAddRegistry)"},
			settings: []string{`spec.registry "" -> "" `},
		},
		{
			name:     "tigera Installation: present, strip; imagePath and imagePrefix kept",
			in:       "apiVersion: operator.tigera.io/v1\nkind: Installation\nmetadata: {name: default}\nspec:\n  registry: quay.io/ # the operator's\n  imagePath: calico\n  imagePrefix: ''\n",
			repl:     []string{"registry: quay.io/ #", "registry: sea.hub:5000/ #"},
			settings: []string{`spec.registry "quay.io/" -> "sea.hub:5000/" rewritten`},
		},
		{
			name:     "tigera Installation: present, nest",
			cfg:      rewrite.Config{PathStyle: rewrite.PathStyleNest},
			in:       "apiVersion: operator.tigera.io/v1\nkind: Installation\nmetadata: {name: default}\nspec:\n  registry: \"quay.io/\"\n",
			repl:     []string{`"quay.io/"`, `"sea.hub:5000/quay.io/"`},
			settings: []string{`spec.registry "quay.io/" -> "sea.hub:5000/quay.io/" rewritten`},
		},
		{
			name:  "tigera Installation: a null spec or registry is reported, not guessed at",
			in:    "apiVersion: operator.tigera.io/v1\nkind: Installation\nmetadata: {name: a}\nspec:\n---\napiVersion: operator.tigera.io/v1\nkind: Installation\nmetadata: {name: b}\nspec:\n  registry: null\n",
			warns: []string{"in.yaml:4: Installation a: spec: registry setting not set: got null", "in.yaml:10: Installation b: spec.registry: registry setting not set: got null"},
		},
		{
			name:     "tigera Installation: UseDefault and the empty string are the default: set",
			in:       "apiVersion: operator.tigera.io/v1\nkind: Installation\nmetadata: {name: default}\nspec:\n  registry: UseDefault\n---\napiVersion: operator.tigera.io/v1\nkind: Installation\nmetadata: {name: b}\nspec:\n  registry: ''\n",
			repl:     []string{"registry: UseDefault", "registry: sea.hub:5000/", "registry: ''", "registry: 'sea.hub:5000/'"},
			settings: []string{`spec.registry "" -> "sea.hub:5000/" added rewritten`, `spec.registry "UseDefault" -> "sea.hub:5000/" added rewritten`},
		},
		{
			name:     "tigera Installation: already the target registry",
			in:       "apiVersion: operator.tigera.io/v1\nkind: Installation\nmetadata: {name: default}\nspec:\n  registry: sea.hub:5000/\n",
			settings: []string{`spec.registry "sea.hub:5000/" -> "sea.hub:5000/" in-target`},
		},
		{
			name: "tigera Installation: JSON without a spec, a List, CRLF",
			in:   "{\"apiVersion\": \"operator.tigera.io/v1\", \"kind\": \"Installation\", \"metadata\": {\"name\": \"c\"} }\n---\napiVersion: v1\nkind: List\nitems:\n- apiVersion: operator.tigera.io/v1\n  kind: Installation\n  metadata: {name: a}\n  spec:\n    variant: Calico\n- {apiVersion: operator.tigera.io/v1, kind: Installation, metadata: {name: b, annotations: {x: \"}#{\"}}}\n...\n---\r\napiVersion: operator.tigera.io/v1\r\nkind: Installation\r\nmetadata:\r\n  name: d\r\nspec:\r\n  variant: Calico\r\n",
			repl: []string{`{"name": "c"} }`, `{"name": "c"}, "spec": {"registry": "sea.hub:5000/"} }`, "  spec:\n    variant", "  spec:\n    registry: sea.hub:5000/\n    variant",
				`"}#{"}}}`, `"}#{"}}, spec: {registry: sea.hub:5000/}}`, "spec:\r\n", "spec:\r\n  registry: sea.hub:5000/\r\n"},
			settings: []string{`items[0].spec.registry "" -> "sea.hub:5000/" added rewritten`, `items[1].spec.registry "" -> "sea.hub:5000/" added rewritten`, `spec.registry "" -> "sea.hub:5000/" added rewritten`, `spec.registry "" -> "sea.hub:5000/" added rewritten`},
		},
		{
			name:     "tigera Installation: no spec, flow spec, JSON",
			in:       "apiVersion: operator.tigera.io/v1\nkind: Installation\nmetadata:\n  name: a\n---\napiVersion: operator.tigera.io/v1\nkind: Installation\nmetadata: {name: b}\nspec: {variant: Calico}\n---\n{\"apiVersion\": \"operator.tigera.io/v1\", \"kind\": \"Installation\", \"metadata\": {\"name\": \"c\"}, \"spec\": {}}\n",
			repl:     []string{"  name: a\n", "  name: a\nspec:\n  registry: sea.hub:5000/\n", "spec: {variant: Calico}", "spec: {variant: Calico, registry: sea.hub:5000/}", `"spec": {}`, `"spec": {"registry": "sea.hub:5000/"}`},
			settings: []string{`spec.registry "" -> "sea.hub:5000/" added rewritten`, `spec.registry "" -> "sea.hub:5000/" added rewritten`, `spec.registry "" -> "sea.hub:5000/" added rewritten`},
		},
		{
			name: "IstioOperator: hub, values.global.hub and a gateway's hub; tag kept",
			in: `apiVersion: install.istio.io/v1alpha1
kind: IstioOperator
metadata: {name: istio, namespace: istio-system}
spec:
  profile: default
  hub: docker.io/istio
  tag: 1.22.3
  components:
    ingressGateways:
    - name: istio-ingressgateway
      enabled: true
      hub: gcr.io/istio-release
  values:
    global:
      hub: "docker.io/istio"
`,
			repl: []string{"hub: docker.io/istio", "hub: sea.hub:5000/istio", "hub: gcr.io/istio-release", "hub: sea.hub:5000/istio-release", `hub: "docker.io/istio"`, `hub: "sea.hub:5000/istio"`},
			settings: []string{
				`spec.hub "docker.io/istio" -> "sea.hub:5000/istio" rewritten`,
				`spec.values.global.hub "docker.io/istio" -> "sea.hub:5000/istio" rewritten`,
				`spec.components.ingressGateways[0].hub "gcr.io/istio-release" -> "sea.hub:5000/istio-release" rewritten`,
			},
		},
		{
			name:     "IstioOperator: nest",
			cfg:      rewrite.Config{PathStyle: rewrite.PathStyleNest},
			in:       "apiVersion: install.istio.io/v1alpha1\nkind: IstioOperator\nmetadata: {name: istio}\nspec:\n  hub: docker.io/istio\n",
			repl:     []string{"hub: docker.io/istio", "hub: sea.hub:5000/docker.io/istio"},
			settings: []string{`spec.hub "docker.io/istio" -> "sea.hub:5000/docker.io/istio" rewritten`},
		},
		{
			name: "IstioOperator without a hub: nothing added (the profile's hub depends on the version)",
			in:   "apiVersion: install.istio.io/v1alpha1\nkind: IstioOperator\nmetadata: {name: istio}\nspec:\n  profile: minimal\n",
		},
		{
			name:     "Sail Istio and IstioCNI: values.global.hub, values.cni.hub",
			in:       "apiVersion: sailoperator.io/v1\nkind: Istio\nmetadata: {name: default}\nspec:\n  version: v1.24.3\n  values:\n    global:\n      hub: gcr.io/istio-release\n---\napiVersion: sailoperator.io/v1\nkind: IstioCNI\nmetadata: {name: default}\nspec:\n  values:\n    cni:\n      hub: quay.io/sail-dev\n",
			repl:     []string{"hub: gcr.io/istio-release", "hub: sea.hub:5000/istio-release", "hub: quay.io/sail-dev", "hub: sea.hub:5000/sail-dev"},
			settings: []string{`spec.values.cni.hub "quay.io/sail-dev" -> "sea.hub:5000/sail-dev" rewritten`, `spec.values.global.hub "gcr.io/istio-release" -> "sea.hub:5000/istio-release" rewritten`},
		},
		{
			name:     "an exclusion narrower than a hub is reported",
			cfg:      rewrite.Config{Exclude: []string{"docker.io/istio/pilot"}},
			in:       "apiVersion: install.istio.io/v1alpha1\nkind: IstioOperator\nmetadata: {name: istio}\nspec:\n  hub: docker.io/istio\n",
			repl:     []string{"hub: docker.io/istio", "hub: sea.hub:5000/istio"},
			settings: []string{`spec.hub "docker.io/istio" -> "sea.hub:5000/istio" rewritten`},
			warns:    []string{"exclusion docker.io/istio/pilot is narrower than the registry setting docker.io/istio"},
		},
		{
			name:     "Kiali image_name + image_version: listed composed, repository rewritten",
			in:       "apiVersion: kiali.io/v1alpha1\nkind: Kiali\nmetadata: {name: kiali, namespace: istio-system}\nspec:\n  deployment:\n    image_name: quay.io/kiali/kiali\n    image_version: v2.1.0\n",
			repl:     []string{"image_name: quay.io/kiali/kiali", "image_name: sea.hub:5000/kiali/kiali"},
			images:   []string{"spec.deployment.image_name=quay.io/kiali/kiali:v2.1.0"},
			settings: nil,
		},
		{
			name:   "Kiali with image_digest: the version is the digest's hex",
			in:     "apiVersion: kiali.io/v1alpha1\nkind: Kiali\nmetadata: {name: kiali}\nspec:\n  deployment:\n    image_name: \"quay.io/kiali/kiali\"\n    image_digest: sha256\n    image_version: 0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\n",
			repl:   []string{`"quay.io/kiali/kiali"`, `"sea.hub:5000/kiali/kiali"`},
			images: []string{"spec.deployment.image_name=quay.io/kiali/kiali@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"},
		},
		{
			name:  "Kiali image_version operator_version: repository rewritten, reported, not listed",
			in:    "apiVersion: kiali.io/v1alpha1\nkind: Kiali\nmetadata: {name: kiali}\nspec:\n  deployment:\n    image_name: quay.io/kiali/kiali\n    image_version: operator_version\n",
			repl:  []string{"image_name: quay.io/kiali/kiali", "image_name: sea.hub:5000/kiali/kiali"},
			warns: []string{`image quay.io/kiali/kiali not listed: image_version is "operator_version": the operator picks the tag`},
		},
		{
			name:   "VictoriaMetrics VMCluster: repository + tag; a missing tag is the operator's",
			in:     "apiVersion: operator.victoriametrics.com/v1beta1\nkind: VMCluster\nmetadata: {name: vm}\nspec:\n  vmstorage:\n    image:\n      repository: victoriametrics/vmstorage\n      tag: v1.106.1-cluster\n  vmselect:\n    image: {repository: victoriametrics/vmselect}\n",
			repl:   []string{"repository: victoriametrics/vmstorage", "repository: sea.hub:5000/victoriametrics/vmstorage", "{repository: victoriametrics/vmselect}", "{repository: sea.hub:5000/victoriametrics/vmselect}"},
			images: []string{"spec.vmstorage.image.repository=docker.io/victoriametrics/vmstorage:v1.106.1-cluster"},
			warns:  []string{"image docker.io/victoriametrics/vmselect not listed: no tag: the operator picks the tag"},
		},
		{
			name: "configured split reference with a registry part: only the registry part changes",
			cfg: rewrite.Config{ImageFields: []rewrite.ImageField{
				{Group: "example.com", Kind: "Db", Path: "spec.image", Type: rewrite.FieldSplit, Registry: "registry", Repository: "repository", Tag: "tag", Digest: "digest"},
			}},
			in: "apiVersion: example.com/v1\nkind: Db\nmetadata: {name: a}\nspec:\n  image: {registry: docker.io, repository: bitnami/redis, tag: 7.4.1}\n---\n" +
				"apiVersion: example.com/v1\nkind: Db\nmetadata: {name: b}\nspec:\n  image: {registry: docker.io, repository: postgres, tag: '16', digest: 'sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef'}\n---\n" +
				"apiVersion: example.com/v1\nkind: Db\nmetadata: {name: c}\nspec:\n  image: {repository: quay.io/org/db, tag: '1'}\n",
			repl: []string{"{registry: docker.io, repository: bitnami", "{registry: sea.hub:5000, repository: bitnami",
				"{registry: docker.io, repository: postgres", "{registry: sea.hub:5000/library, repository: postgres",
				"{repository: quay.io/org/db", "{repository: sea.hub:5000/org/db"},
			images: []string{
				"spec.image.registry=docker.io/bitnami/redis:7.4.1",
				"spec.image.registry=docker.io/library/postgres@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
				"spec.image.repository=quay.io/org/db:1",
			},
		},
		{
			name: "configured split references: image + version, hub + tag",
			cfg: rewrite.Config{ImageFields: []rewrite.ImageField{
				{Group: "example.com", Kind: "Cache", Path: "spec", Type: rewrite.FieldSplit, Repository: "image", Tag: "version"},
				{Group: "example.com", Kind: "Proxy", Path: "spec.proxy", Type: rewrite.FieldSplit, Repository: "hub", Tag: "tag"},
			}},
			in:     "apiVersion: example.com/v1\nkind: Cache\nmetadata: {name: a}\nspec:\n  image: redis\n  version: \"7.4\"\n---\napiVersion: example.com/v1\nkind: Proxy\nmetadata: {name: b}\nspec:\n  proxy: {hub: docker.io/envoyproxy/envoy, tag: v1.30.1}\n",
			repl:   []string{"image: redis", "image: sea.hub:5000/library/redis", "hub: docker.io/envoyproxy", "hub: sea.hub:5000/envoyproxy"},
			images: []string{"spec.image=docker.io/library/redis:7.4", "spec.proxy.hub=docker.io/envoyproxy/envoy:v1.30.1"},
		},
		{
			name: "configured split reference: uncomposable parts are an error naming the field",
			cfg: rewrite.Config{SkipInvalid: true, ImageFields: []rewrite.ImageField{
				{Group: "example.com", Kind: "Db", Path: "spec.image", Type: rewrite.FieldSplit, Repository: "repository", Tag: "tag"},
			}},
			in:    "apiVersion: example.com/v1\nkind: Db\nmetadata: {name: a}\nspec:\n  image: {repository: org/db, tag: 'not a tag'}\n",
			warns: []string{`spec.image.repository: invalid image reference "org/db:not a tag"`},
		},
		{
			name: "configured registry setting that adds",
			cfg: rewrite.Config{ImageFields: []rewrite.ImageField{
				{Group: "example.com", Kind: "Mesh", Path: "spec.hub", Type: rewrite.FieldRegistry, Add: true},
			}},
			in:       "apiVersion: example.com/v1\nkind: Mesh\nmetadata: {name: a}\nspec:\n  size: 3\n---\napiVersion: example.com/v1\nkind: Mesh\nmetadata: {name: b}\nspec:\n  hub: quay.io/mesh\n",
			repl:     []string{"  size: 3", "  hub: sea.hub:5000\n  size: 3", "hub: quay.io/mesh", "hub: sea.hub:5000/mesh"},
			settings: []string{`spec.hub "" -> "sea.hub:5000" added rewritten`, `spec.hub "quay.io/mesh" -> "sea.hub:5000/mesh" rewritten`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var warns []string
			rw, err := New(tt.cfg, WithWarnings(func(err error) { warns = append(warns, err.Error()) }))
			if err != nil {
				t.Fatal(err)
			}
			out, err := rw.RewriteBytes([]byte(tt.in), "in.yaml")
			if err != nil {
				t.Fatal(err)
			}
			if want := replaceAll(t, tt.in, tt.repl...); string(out) != want {
				t.Errorf("output:\n%s\nwant:\n%s", out, want)
			}
			if got := occurrences(rw.Images()); strings.Join(got, "\n") != strings.Join(tt.images, "\n") {
				t.Errorf("images:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.images, "\n"))
			}
			got := settingLines(rw.Settings())
			sort.Strings(got)
			want := append([]string(nil), tt.settings...)
			sort.Strings(want)
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("settings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
			if len(warns) != len(tt.warns) {
				t.Errorf("warnings:\n%s\nwant %d: %q", strings.Join(warns, "\n"), len(tt.warns), tt.warns)
			}
			for i := range tt.warns {
				if i < len(warns) && !strings.Contains(warns[i], tt.warns[i]) {
					t.Errorf("warning %q, want one containing %q", warns[i], tt.warns[i])
				}
			}
			// Idempotent: the output rewrites to itself, its settings in
			// the target registry.
			again, _ := New(tt.cfg)
			out2, err := again.RewriteBytes(out, "in.yaml")
			if err != nil || string(out2) != string(out) {
				t.Errorf("not idempotent (%v):\n%s", err, out2)
			}
			for _, s := range again.Settings() {
				if tt.cfg.Exclude == nil && s.Action == rewrite.Rewritten {
					t.Errorf("second run rewrote %s again: %+v", s.Location.Field, s)
				}
			}
			// The kio filter (the KRM function) finds and sets the same.
			kr, _ := New(tt.cfg)
			var kout strings.Builder
			err = rewriteNodes(kr, tt.in, &kout)
			if err != nil {
				t.Fatal(err)
			}
			if g, w := settingLines(kr.Settings()), settingLines(rw.Settings()); len(g) != len(w) {
				t.Errorf("kio filter settings %q, stream %q", g, w)
			}
			for _, s := range rw.Settings() {
				if s.Target != "" && s.Action == rewrite.Rewritten && !strings.Contains(kout.String(), s.Target) {
					t.Errorf("kio output lacks %s:\n%s", s.Target, kout.String())
				}
			}
		})
	}
}

// TestOperatorNotes: kinds whose operators start images no manifest names
// are reported once per operator, unless the object names its image.
func TestOperatorNotes(t *testing.T) {
	in := `apiVersion: operator.tigera.io/v1
kind: Installation
metadata: {name: default}
---
apiVersion: operator.tigera.io/v1
kind: Installation
metadata: {name: second}
---
apiVersion: monitoring.coreos.com/v1
kind: Prometheus
metadata: {name: named}
spec: {image: quay.io/prometheus/prometheus:v2.54.1}
---
apiVersion: monitoring.coreos.com/v1
kind: Alertmanager
metadata: {name: main, namespace: monitoring}
spec: {version: v0.27.0}
---
apiVersion: kiali.io/v1alpha1
kind: Kiali
metadata: {name: kiali}
---
apiVersion: pingcap.com/v1alpha1
kind: TidbCluster
metadata: {name: helped}
spec: {helper: {image: alpine:3.16.0}}
---
apiVersion: pingcap.com/v1alpha1
kind: TidbCluster
metadata: {name: basic}
spec: {version: v8.5.0}
`
	rw, _ := New(rewrite.Config{})
	if _, err := rw.RewriteBytes([]byte(in), "app.yaml"); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, n := range rw.Operators() {
		got = append(got, fmt.Sprintf("%s %s %d", n.Operator, n.Location, n.Count))
	}
	want := []string{
		"the Kiali operator app.yaml:19: Kiali kiali 1",
		"the Prometheus operator app.yaml:14: Alertmanager monitoring/main 1",
		"the TiDB operator app.yaml:28: TidbCluster basic 1",
		"the tigera operator app.yaml:1: Installation default 2",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if m := rw.Operators()[3].Message(); !strings.Contains(m, "app.yaml:1: Installation default: the tigera operator starts images no manifest names (calico/node") || !strings.HasSuffix(m, ")") || strings.Contains(m, "--") {
		t.Errorf("message %q", m)
	}
}

// TestFastPathOperators: documents of kinds whose absent fields matter are
// parsed whatever they hold; other documents that merely name such a kind,
// or hold "registry" or "hub" inside words, are not.
func TestFastPathOperators(t *testing.T) {
	rw := mustNew(t, rewrite.Config{})
	for _, tt := range []struct {
		name string
		doc  string
		want bool
	}{
		{"installation", "apiVersion: operator.tigera.io/v1\nkind: Installation\nmetadata: {name: default}\n", true},
		{"installation json", "{\"apiVersion\": \"operator.tigera.io/v1\", \"kind\": \"Installation\"}\n", true},
		{"installation in a list", "apiVersion: v1\nkind: List\nitems:\n- apiVersion: operator.tigera.io/v1\n  kind: Installation\n", true},
		{"kiali", "apiVersion: kiali.io/v1alpha1\nkind: Kiali\nmetadata: {name: kiali}\n", true},
		{"mesh hub", "kind: Mesh\nspec:\n  hub: quay.io/istio\n", true},
		{"mesh hub json", "kind: Mesh\nspec: {\"hub\": \"quay.io/istio\"}\n", true},
		{"kind names in text", "kind: ConfigMap\ndata: {rules: \"alert: PrometheusDown, Installation of Kiali\"}\n", false},
		{"registry in a word", "kind: ConfigMap\ndata: {a: \"see github.com and the registry docs\"}\n", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := rw.mayHoldImages([]byte(tt.doc)); got != tt.want {
				t.Errorf("mayHoldImages(%q) = %v, want %v", tt.doc, got, tt.want)
			}
		})
	}
}

// FuzzOperators asserts, for any input around operator kinds: no panic;
// the output parses into as many documents as the input; rewriting it
// again is a no-op; every added setting is in the output.
func FuzzOperators(f *testing.F) {
	seeds, _ := filepath.Glob(filepath.Join(operatorsGoldenDir, "*.yaml"))
	for _, p := range seeds {
		if data, err := os.ReadFile(p); err == nil {
			f.Add(data)
		}
	}
	f.Add([]byte("{\"apiVersion\": \"operator.tigera.io/v1\", \"kind\": \"Installation\", \"spec\": {\"variant\": \"Calico\"}}\n"))
	f.Add([]byte("kind: List\nitems:\n- {apiVersion: operator.tigera.io/v1, kind: Installation, metadata: {name: b}}\n- apiVersion: operator.tigera.io/v1\n  kind: Installation\n  spec: # c\n    a: 1\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		rw, err := New(rewrite.Config{}, WithWorkers(1))
		if err != nil {
			t.Fatal(err)
		}
		out, err := rw.RewriteBytes(in, "in.yaml")
		if err != nil {
			return
		}
		if n, ok := countDocs(in); ok {
			if m, ok := countDocs(out); !ok || m != n {
				t.Fatalf("input parses into %d documents, output into %d (ok=%v):\n%q\n%q", n, m, ok, in, out)
			}
		}
		again, _ := New(rewrite.Config{})
		out2, err := again.RewriteBytes(out, "in.yaml")
		if err != nil || !bytes.Equal(out, out2) {
			t.Fatalf("not idempotent (%v):\nin:   %q\nout:  %q\nout2: %q", err, in, out, out2)
		}
		for _, s := range rw.Settings() {
			if s.Added && !bytes.Contains(out, []byte(s.Target)) {
				t.Fatalf("added %s not in the output:\n%q", s.Target, out)
			}
		}
	})
}
