package manifest

import (
	"bytes"
	"errors"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rehost/rehost/pkg/rewrite"
	"go.yaml.in/yaml/v3"
)

// Issue 29, item 1: an IPv6 target registry ("[::1]:5000") starts every
// value rehost writes with "[", which a plain scalar cannot: every value
// written must read back as itself in its place, and the rewritten stream
// must parse into the same documents with only the rewritten values
// changed.

// ipv6Registries are target registries whose values need quoting, each
// with a registry written plain in the same places, to compare with.
var ipv6Registries = []struct{ v6, plain string }{
	{"[::1]:5000", "v6.test:5000"},
	{"[fd00::5]:5000/mirror", "v6.test:5000/mirror"},
}

// rewriteTo rewrites in with cfg to registry reg.
func rewriteTo(t *testing.T, cfg rewrite.Config, reg string, in []byte, name string) []byte {
	t.Helper()
	cfg.Registry = reg
	rw, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	out, err := rw.RewriteBytes(in, name)
	if err != nil {
		t.Fatal(err)
	}
	again, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if out2, err := again.RewriteBytes(out, name); err != nil || !bytes.Equal(out, out2) {
		t.Errorf("rewriting the output again: %v\n%s", err, out2)
	}
	return out
}

// assertSameDocuments parses two streams and compares them document by
// document, node by node: the same kinds, keys and tags, and every scalar
// of got holds the value of the same scalar of want with old replaced by
// new. Styles may differ (a value written quoted where the other is
// plain); aliases compare by name.
func assertSameDocuments(t *testing.T, want, got []byte, old, new string) {
	t.Helper()
	dw, dg := yaml.NewDecoder(bytes.NewReader(want)), yaml.NewDecoder(bytes.NewReader(got))
	for i := 0; ; i++ {
		var a, b yaml.Node
		ea, eb := dw.Decode(&a), dg.Decode(&b)
		if errors.Is(ea, io.EOF) && errors.Is(eb, io.EOF) {
			if i == 0 {
				t.Error("no documents: a test that cannot fail")
			}
			return
		}
		if ea != nil || eb != nil {
			t.Fatalf("document %d: %v; %v\n%s", i, ea, eb, got)
		}
		if p, ok := sameValues(&a, &b, old, new, ""); !ok {
			t.Errorf("document %d differs at %s:\n%s", i, p, got)
		}
	}
}

func sameValues(a, b *yaml.Node, old, new, path string) (string, bool) {
	if a.Kind != b.Kind || len(a.Content) != len(b.Content) || a.ShortTag() != b.ShortTag() {
		return path, false
	}
	if v := strings.ReplaceAll(a.Value, old, new); v != b.Value {
		return path + " (" + b.Value + ", want " + v + ")", false
	}
	for i := range a.Content {
		p := path + index(i)
		if a.Kind == yaml.MappingNode {
			p = path + "." + a.Content[i-i%2].Value
		}
		if p, ok := sameValues(a.Content[i], b.Content[i], old, new, p); !ok {
			return p, false
		}
	}
	return "", true
}

// TestIPv6TargetGoldens rewrites every golden stream (plain manifests,
// operators with their registry settings added and rewritten, GitOps
// chart sources) to IPv6 registries, with the config beside each, and
// compares every output, parsed back, with the output for a registry
// written plain in the same places: the same documents, the registry
// aside.
func TestIPv6TargetGoldens(t *testing.T) {
	for _, dir := range []string{goldenDir, operatorsGoldenDir, gitopsGoldenDir} {
		for _, reg := range ipv6Registries {
			t.Run(filepath.Base(dir)+"/"+reg.v6, func(t *testing.T) {
				goldenStreams(t, dir, 4, func(t *testing.T, name string, in []byte, cfg rewrite.Config) {
					if cfg.Registry != "" && cfg.Registry != rewrite.DefaultRegistry {
						t.Skipf("the config sets registry %s", cfg.Registry)
					}
					// Images already in sea.hub:5000 stay there, as they
					// do with the default registry.
					cfg.Exclude = append(cfg.Exclude, rewrite.DefaultRegistry)
					want := rewriteTo(t, cfg, reg.plain, in, name)
					got := rewriteTo(t, cfg, reg.v6, in, name)
					if bytes.Contains(want, []byte(reg.plain)) != bytes.Contains(got, []byte(reg.v6)) {
						t.Errorf("rewritten to %s: %v, to %s: %v", reg.plain, bytes.Contains(want, []byte(reg.plain)), reg.v6, bytes.Contains(got, []byte(reg.v6)))
					}
					assertSameDocuments(t, want, got, reg.plain, reg.v6)
				})
			})
		}
	}
}

// ipv6Stream holds the places a value can be written in: block and flow
// mappings and sequences, each quoting style, JSON, anchors and aliases,
// composed and split references, embedded references in plain strings in a
// block and in a flow list, operator registry settings (present, absent in
// a block, a flow and a JSON map), GitOps chart sources.
const ipv6Stream = `apiVersion: v1
kind: Pod
metadata:
  name: web
  labels: {app: &app nginx}
spec:
  containers:
  - name: a
    image: nginx
  - {name: b, image: redis:7}
  - name: c
    image: "quay.io/x/y:1"
  - name: d
    image: 'ghcr.io/x/z:1'
  - name: e
    image: *app
  - name: f
    image: &f busybox:1.36 # comment
    args: [--helper-image=busybox:1.36, x]
    command:
    - run
    - --sidecar-image=quay.io/a/b:2
    env:
    - {name: SIDECAR_IMAGE, value: "quay.io/a/c:3"}
  initContainers: [{name: i, image: *f}, {name: j, image: alpine}]
---
{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "j"}, "spec": {"containers": [{"name": "a", "image": "nginx:1"}]}}
---
apiVersion: monitoring.coreos.com/v1
kind: Prometheus
metadata: {name: p}
spec:
  baseImage: quay.io/prometheus/prometheus
  version: v2.53.0
---
apiVersion: monitoring.coreos.com/v1
kind: Alertmanager
metadata: {name: a}
spec: {baseImage: quay.io/prometheus/alertmanager, version: v0.27.0}
---
apiVersion: operator.tigera.io/v1
kind: Installation
metadata: {name: default}
spec:
  variant: Calico
---
apiVersion: operator.tigera.io/v1
kind: Installation
metadata: {name: flow}
spec: {variant: Calico}
---
{"apiVersion": "operator.tigera.io/v1", "kind": "Installation", "metadata": {"name": "json"}, "spec": {"variant": "Calico"}}
---
apiVersion: operator.tigera.io/v1
kind: Installation
metadata: {name: set}
spec: {registry: quay.io/}
---
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: app}
spec:
  source:
    repoURL: https://charts.example.com/stable
    chart: foo
    targetRevision: 1.0.0
  sources:
  - {repoURL: 'https://charts.example.com/b', chart: bar, targetRevision: 2.0.0}
---
apiVersion: source.toolkit.fluxcd.io/v1
kind: HelmRepository
metadata: {name: repo}
spec: {url: https://charts.example.com/flux, interval: 5m}
---
apiVersion: source.toolkit.fluxcd.io/v1
kind: HelmRepository
metadata: {name: block}
spec:
  url: "https://charts.example.com/flux2"
  type: default
`

// TestIPv6TargetStream rewrites ipv6Stream to each IPv6 registry, in both
// path styles, and checks the output document by document: against the
// output for a registry written plain, and against the values the KRM
// function's path (RewriteNode) gives.
func TestIPv6TargetStream(t *testing.T) {
	for _, reg := range ipv6Registries {
		for _, style := range []rewrite.PathStyle{rewrite.PathStyleStrip, rewrite.PathStyleNest} {
			t.Run(reg.v6+"/"+string(style), func(t *testing.T) {
				cfg := rewrite.Config{PathStyle: style}
				want := rewriteTo(t, cfg, reg.plain, []byte(ipv6Stream), "in.yaml")
				out := rewriteTo(t, cfg, reg.v6, []byte(ipv6Stream), "in.yaml")
				assertSameDocuments(t, want, out, reg.plain, reg.v6)
				cfg.Registry = reg.v6
				assertNodePathAgrees(t, cfg, []byte(ipv6Stream), out)
				host := strings.SplitN(reg.v6, "/", 2)[0]
				if n := bytes.Count(out, []byte(host)); n < 18 {
					t.Errorf("%d values rewritten to %s, want at least 18:\n%s", n, host, out)
				}
				if style == rewrite.PathStyleStrip {
					root := reg.v6
					for _, line := range []string{
						"    image: '" + root + "/library/nginx'\n",                     // plain: quoted
						"{name: b, image: '" + root + "/library/redis:7'}",              // in a flow map
						"    image: \"" + root + "/x/y:1\"\n",                           // double-quoted stays so
						"    image: '" + root + "/x/z:1'\n",                             // single-quoted stays so
						"args: ['--helper-image=" + root + "/library/busybox:1.36', x]", // embedded in a flow list: quoted whole
						"    - --sidecar-image=" + root + "/a/b:2\n",                    // embedded in a block: in place
						`"image": "` + root + `/library/nginx:1"`,                       // JSON
						"    repoURL: '" + root + "/charts'\n",                          // Argo CD
						"spec: {registry: '" + root + "/'}",                             // a registry setting in a flow map
						"spec: {variant: Calico, registry: '" + root + "/'}",            // added to a flow map
						`"spec": {"variant": "Calico", "registry": "` + root + `/"}`,    // added to a JSON map
						"spec:\n  registry: '" + root + "/'\n  variant: Calico\n",       // added to a block map
					} {
						if !bytes.Contains(out, []byte(line)) {
							t.Errorf("output lacks %q:\n%s", line, out)
						}
					}
				}
			})
		}
	}
}

// TestProofCatchesBrokenValues: the proof of a rewrite turns a value
// written so that it does not read back, or a span that is not the value's
// token, into an *unsafeEditError at its line, whichever way it proves.
func TestProofCatchesBrokenValues(t *testing.T) {
	doc := "apiVersion: v1\nkind: Pod\nspec:\n  containers:\n  - {name: a, image: nginx}\n  - name: b\n    image: redis\n"
	var root yaml.Node
	if err := yaml.Unmarshal([]byte(doc), &root); err != nil {
		t.Fatal(err)
	}
	cs := root.Content[0].Content[5].Content[1].Content
	flowImage, blockImage := cs[0].Content[3], cs[1].Content[3]
	want := map[*yaml.Node]string{flowImage: "[::1]:5000/library/nginx", blockImage: "[::1]:5000/library/redis"}
	edits := []edit{{node: flowImage, value: want[flowImage]}, {node: blockImage, value: want[blockImage]}}
	for _, tt := range []struct {
		name string
		reps []replacement
		line int
	}{
		{"plain IPv6 in a block", []replacement{{blockImage, "redis", "[::1]:5000/library/redis"}}, 7},
		{"plain IPv6 in a flow map", []replacement{{flowImage, "nginx", "[::1]:5000/library/nginx"}}, 5},
		{"quoted, but not the value", []replacement{{blockImage, "redis", "'[::1]:5000/library/nginx'"}}, 7},
		{"a span beyond the token", []replacement{{flowImage, "nginx}", "'[::1]:5000/library/nginx'"}}, 5},
		{"a number", []replacement{{blockImage, "redis", "5000"}}, 7},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx := &scalarContext{root: &root, edits: edits}
			err := verifyTokens(tt.reps, want, ctx, &prover{})
			var ue *unsafeEditError
			if !errors.As(err, &ue) || ue.Line != tt.line {
				t.Errorf("verifyTokens: %v, want an *unsafeEditError at line %d", err, tt.line)
			}
		})
	}
	// The whole-document proof.
	broken := strings.Replace(doc, "image: redis", "image: [::1]:5000/library/redis", 1)
	if err := verifySplice([]byte(broken), &root, edits, want); err == nil {
		t.Error("verifySplice accepted a document that does not parse")
	}
	changed := strings.Replace(strings.Replace(doc, "image: redis", "image: '[::1]:5000/library/redis'", 1), "image: nginx", "image: '[::1]:5000/library/nginx'", 1)
	if err := verifySplice([]byte(changed), &root, edits, want); err != nil {
		t.Errorf("verifySplice refused the right document: %v", err)
	}
	other := strings.Replace(changed, "name: b", "name: c", 1)
	var ue *unsafeEditError
	if err := verifySplice([]byte(other), &root, edits, want); !errors.As(err, &ue) || ue.Line != 6 || !strings.Contains(err.Error(), "spec.containers[1].name") {
		t.Errorf("verifySplice: %v, want the change of spec.containers[1].name at line 6", err)
	}
	// And a good splice proves token by token.
	rw, err := New(rewrite.Config{Registry: "[::1]:5000"})
	if err != nil {
		t.Fatal(err)
	}
	out, err := rw.RewriteBytes([]byte(doc), "in.yaml")
	if err != nil {
		t.Fatal(err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(out))
	var got yaml.Node
	if err := dec.Decode(&got); err != nil || !errors.Is(dec.Decode(&got), io.EOF) {
		t.Errorf("output %q: %v", out, err)
	}
}
