package manifest

import (
	"reflect"
	"strings"
	"testing"

	"github.com/rehost/rehost/pkg/rewrite"
	"go.yaml.in/yaml/v3"
)

// gatewayDoc is Istio's gateway chart's Deployment: the proxy container's
// image is "auto", which the sidecar injector replaces.
const gatewayDoc = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: istio-ingressgateway
  namespace: istio-ingress
spec:
  selector:
    matchLabels: {istio: ingressgateway}
  template:
    metadata:
      labels:
        sidecar.istio.io/inject: "true"
        istio: ingressgateway
    spec:
      containers:
        - name: istio-proxy
          # "auto" will be populated at runtime by the mutating webhook.
          image: auto
        - name: helper
          image: busybox:1.36
`

// injectorDoc is the ConfigMap istiod's chart renders its values into.
const injectorDoc = `apiVersion: v1
kind: ConfigMap
metadata:
  name: istio-sidecar-injector
  namespace: istio-system
data:
  values: |-
    {
      "global": {
        "hub": "docker.io/istio",
        "proxy": {
          "image": "proxyv2"
        },
        "tag": "1.27.0",
        "variant": ""
      },
      "revision": ""
    }
  config: |-
    policy: enabled
`

// TestAdmissionPlaceholders: Istio's "image: auto" in a Pod that asks for
// injection is left as written and not listed, and noted with the image
// the injector puts in its place when the input holds the injector's
// values (before or after the Pod); the same value in a Pod that does not
// ask for injection is an image like any other.
func TestAdmissionPlaceholders(t *testing.T) {
	podAnno := strings.NewReplacer("kind: Deployment", "kind: Pod").Replace(`apiVersion: v1
kind: Deployment
metadata:
  name: gw
  annotations:
    sidecar.istio.io/inject: "true"
spec:
  containers:
    - name: istio-proxy
      image: auto
`)
	tests := []struct {
		name    string
		in      string
		images  []string // sources listed
		auto    bool     // "image: auto" left as written
		note    string   // substring of the note, "" for none
		noteLoc string
	}{
		{"gateway alone", gatewayDoc, []string{"docker.io/library/busybox:1.36"}, true,
			`image "auto" is its placeholder, left as written and not listed; it injects its proxy image, global.hub/global.proxy.image:global.tag of istiod's values (the istio-sidecar-injector ConfigMap, not in this input)`,
			"in.yaml:18: Deployment istio-ingress/istio-ingressgateway"},
		{"injector after the gateway", gatewayDoc + "---\n" + injectorDoc, []string{"docker.io/library/busybox:1.36"}, true,
			`it injects docker.io/istio/proxyv2:1.27.0 (global.hub, global.proxy.image and global.tag of ConfigMap istio-system/istio-sidecar-injector values, in.yaml:22)`, ""},
		{"injector before the gateway", injectorDoc + "---\n" + gatewayDoc, []string{"docker.io/library/busybox:1.36"}, true,
			`it injects docker.io/istio/proxyv2:1.27.0 (global.hub, global.proxy.image and global.tag of ConfigMap istio-system/istio-sidecar-injector values, in.yaml:1)`, ""},
		{"revision label", strings.Replace(gatewayDoc, `sidecar.istio.io/inject: "true"`, `istio.io/rev: canary`, 1), []string{"docker.io/library/busybox:1.36"}, true, `image "auto" is its placeholder`, ""},
		{"a Pod annotated", podAnno, nil, true, `image "auto" is its placeholder`, ""},
		{"variant and revision", gatewayDoc + "---\n" + strings.NewReplacer(`"variant": ""`, `"variant": "distroless"`, "name: istio-sidecar-injector", "name: istio-sidecar-injector-canary").Replace(injectorDoc),
			[]string{"docker.io/library/busybox:1.36"}, true, `it injects docker.io/istio/proxyv2:1.27.0-distroless (global.hub, global.proxy.image and global.tag of ConfigMap istio-system/istio-sidecar-injector-canary values`, ""},
		{"proxy image in full", gatewayDoc + "---\n" + strings.Replace(injectorDoc, `"image": "proxyv2"`, `"image": "mirror.example.com/istio/proxyv2:1.27.0"`, 1),
			[]string{"docker.io/library/busybox:1.36"}, true, `it injects mirror.example.com/istio/proxyv2:1.27.0 (`, ""},
		{"no injection asked", strings.Replace(gatewayDoc, `sidecar.istio.io/inject: "true"`, `sidecar.istio.io/inject: "false"`, 1),
			[]string{"docker.io/library/auto:latest", "docker.io/library/busybox:1.36"}, false, "", ""},
		{"injection asked, an image", strings.Replace(gatewayDoc, "image: auto", "image: docker.io/istio/proxyv2:1.27.0", 1),
			[]string{"docker.io/istio/proxyv2:1.27.0", "docker.io/library/busybox:1.36"}, false, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rw, err := New(rewrite.Config{Registry: "sea.hub:5000"})
			if err != nil {
				t.Fatal(err)
			}
			out, err := rw.RewriteBytes([]byte(tt.in), "in.yaml")
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(tt.in, "image: auto\n") {
				left, moved := strings.Contains(string(out), "image: auto\n"), strings.Contains(string(out), "image: sea.hub:5000/library/auto\n")
				if left != tt.auto || moved == tt.auto {
					t.Errorf("image: auto left: %t, rewritten: %t; want left %t:\n%s", left, moved, tt.auto, out)
				}
			}
			if tt.auto {
				want := strings.Replace(tt.in, "image: busybox:1.36", "image: sea.hub:5000/library/busybox:1.36", 1)
				if string(out) != want {
					t.Errorf("output:\n%s\nwant:\n%s", out, want)
				}
			}
			if got := rw.Sources(); !reflect.DeepEqual(got, tt.images) && !(len(got) == 0 && len(tt.images) == 0) {
				t.Errorf("sources %q, want %q", got, tt.images)
			}
			ops := rw.Operators()
			if tt.note == "" {
				if len(ops) != 0 {
					t.Errorf("notes %+v", ops)
				}
				return
			}
			if len(ops) != 1 || ops[0].Operator != "Istio's sidecar injector" || !strings.Contains(ops[0].Message(), tt.note) {
				t.Fatalf("notes %+v, want one with %q", ops, tt.note)
			}
			if tt.noteLoc != "" && ops[0].Location.String() != tt.noteLoc {
				t.Errorf("note at %s, want %s", ops[0].Location, tt.noteLoc)
			}
		})
	}
}

// TestAdmissionPlaceholdersFinder: the finder does not return the
// placeholder as an image field, so that every consumer (the rewriter,
// the values search, the KRM function) leaves it alone.
func TestAdmissionPlaceholdersFinder(t *testing.T) {
	f, err := NewFinder(nil)
	if err != nil {
		t.Fatal(err)
	}
	n := parseOne(t, gatewayDoc)
	var paths []string
	for _, fd := range f.Find(n) {
		paths = append(paths, fd.Path+"="+fd.Value)
	}
	if want := []string{"spec.template.spec.containers[1].image=busybox:1.36"}; !reflect.DeepEqual(paths, want) {
		t.Errorf("fields %q, want %q", paths, want)
	}
}

func TestSplitPath(t *testing.T) {
	for p, want := range map[string][]string{
		"spec.template.spec.containers[0].image": {"spec", "template", "spec", "containers", "[0]", "image"},
		"items[2].spec.containers[10].image":     {"items", "[2]", "spec", "containers", "[10]", "image"},
		"image":                                  {"image"},
	} {
		t.Run(p, func(t *testing.T) {
			if got := splitPath(p); !reflect.DeepEqual(got, want) {
				t.Errorf("splitPath(%q) = %q, want %q", p, got, want)
			}
		})
	}
}

func parseOne(t *testing.T, doc string) *yaml.Node {
	t.Helper()
	var n yaml.Node
	if err := yaml.Unmarshal([]byte(doc), &n); err != nil {
		t.Fatal(err)
	}
	return &n
}
