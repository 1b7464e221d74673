package e2e

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// TestValuesChartFamilies: on charts reproducing the shapes of the charts
// people use - Bitnami's image verification, tigera-operator's toYaml'd
// Installation, Docker Hub official images with split registry and
// repository (and null keys the template defaults) - `helm template -f
// overlay` equals `rehost rewrite` on every document, hooks included,
// with Helm 3 and Helm 4. Bitnami's NOTES.txt fails the render without the
// switch the overlay sets, in both Helms.
func TestValuesChartFamilies(t *testing.T) {
	helms := helmBinaries(t)
	for _, tt := range []struct {
		chart string
		keys  []string // lines the overlay must hold
	}{
		{"airgap-bitnami", []string{"  imageRegistry: sea.hub:5000\n", "    # Bitnami's image verification (common.errors.insecureImages, https://github.com/bitnami/charts/issues/30850)", "    allowInsecureImages: true\n"}},
		{"airgap-calico", []string{"  # Installation default: spec.registry unset -> sea.hub:5000/\n  registry: sea.hub:5000/\n"}},
		{"airgap-dockerhub", []string{"  registry: sea.hub:5000\n  # docker.io/traefik:v3.4.1 -> sea.hub:5000/library/traefik:v3.4.1, with image.registry\n  repository: library/traefik\n"}},
	} {
		t.Run(tt.chart, func(t *testing.T) {
			chart := testChart(tt.chart)
			render := []string{"--kube-version", chartKube, "-n", "shop"}
			overlay := run(t, nil, rehostBin(), append([]string{"values", chart}, render...)...)
			for _, k := range tt.keys {
				if !bytes.Contains(overlay, []byte(k)) {
					t.Errorf("the overlay has no %q:\n%s", k, overlay)
				}
			}
			overlayFile := filepath.Join(t.TempDir(), "airgap-values.yaml")
			if err := os.WriteFile(overlayFile, overlay, 0o644); err != nil {
				t.Fatal(err)
			}
			want := run(t, nil, rehostBin(), append([]string{"rewrite", chart}, render...)...)
			for name, helm := range helms {
				got := runHelm(t, helm, append(append([]string{"template", chart, "--include-crds"}, render...), "-f", overlayFile)...)
				sameDocs(t, name+" template -f overlay", got, want)
			}
			if tt.chart == "airgap-bitnami" {
				noSwitch := writeTemp(t, "global: {imageRegistry: sea.hub:5000}\n")
				for name, helm := range helms {
					_, errOut, err := runErr(nil, helm, append(append([]string{"template", chart}, render...), "-f", noSwitch)...)
					if err == nil || !bytes.Contains(errOut, []byte("Original containers have been substituted for unrecognized ones")) {
						t.Errorf("%s renders the relocated Bitnami chart without the switch: %v\n%s", name, err, errOut)
					}
				}
			}
		})
	}
}

// TestRelocateBitnami: the relocated Bitnami chart renders with both Helms
// as rehost rewrite renders the original, hook included, with no switch:
// its images annotation names the target images.
func TestRelocateBitnami(t *testing.T) {
	helms := helmBinaries(t)
	chart := testChart("airgap-bitnami")
	out := filepath.Join(t.TempDir(), "bitnami")
	run(t, nil, rehostBin(), "relocate", chart, "--output", out, "--kube-version", chartKube)
	want := run(t, nil, rehostBin(), "rewrite", chart, "--kube-version", chartKube)
	for name, helm := range helms {
		got := runHelm(t, helm, "template", out, "--include-crds", "--kube-version", chartKube)
		sameDocs(t, name+" template relocated", got, want)
		if vals := string(runHelm(t, helm, "show", "values", out)); !strings.Contains(vals, "allowInsecureImages: false") || !strings.Contains(vals, "imageRegistry: \"sea.hub:5000\"") {
			t.Errorf("%s show values:\n%s", name, vals)
		}
	}
}

// TestValuesIstio: istiod's pilot moves by global.hub, whose echoes in the
// istio-sidecar-injector and values ConfigMaps are the only other changes
// (injected proxies then come from the target registry too); with Helm 3
// and Helm 4, every other document equals rehost rewrite. The gateway's
// "image: auto" is left as written by rehost rewrite, not listed, and noted
// with the proxy image the injector puts in its place, named when the
// injector's ConfigMap is in the input.
func TestValuesIstio(t *testing.T) {
	helms := helmBinaries(t)
	chart := testChart("airgap-istiod")
	render := []string{"--kube-version", chartKube, "-n", "istio-system"}
	overlay := run(t, nil, rehostBin(), append([]string{"values", chart}, render...)...)
	if !bytes.Contains(overlay, []byte("global:\n  # docker.io/istio/pilot:1.27.0 -> sea.hub:5000/istio/pilot:1.27.0\n  hub: sea.hub:5000/istio\n")) {
		t.Fatalf("overlay:\n%s", overlay)
	}
	overlayFile := filepath.Join(t.TempDir(), "airgap-values.yaml")
	if err := os.WriteFile(overlayFile, overlay, 0o644); err != nil {
		t.Fatal(err)
	}
	want := run(t, nil, rehostBin(), append([]string{"rewrite", chart}, render...)...)
	wantDocs := byName(t, want)
	for name, helm := range helms {
		got := byName(t, runHelm(t, helm, append(append([]string{"template", chart}, render...), "-f", overlayFile)...))
		if len(got) != len(wantDocs) {
			t.Fatalf("%s: %d documents, want %d", name, len(got), len(wantDocs))
		}
		for k, g := range got {
			w := wantDocs[k]
			if k == "ConfigMap istio-sidecar-injector" || k == "ConfigMap values" {
				// The echoes differ from rehost rewrite's in the hub only.
				if reflect.DeepEqual(g, w) {
					t.Errorf("%s: %s does not echo the overlay", name, k)
				}
				var vals struct {
					Global struct{ Hub string } `json:"global"`
				}
				data, _ := g["data"].(map[string]interface{})
				text, _ := data["values"].(string)
				if text == "" {
					text, _ = data["merged-values"].(string)
				}
				if err := json.Unmarshal([]byte(text), &vals); err != nil || vals.Global.Hub != "sea.hub:5000/istio" {
					t.Errorf("%s: %s: hub %q, %v", name, k, vals.Global.Hub, err)
				}
				continue
			}
			if !reflect.DeepEqual(g, w) {
				t.Errorf("%s: %s:\n%v\nwant (rehost rewrite):\n%v", name, k, g, w)
			}
		}
	}

	// The gateway: rewritten alone, then with istiod's rendering.
	gateway := run(t, nil, needTool(t, "helm"), "template", "gw", testChart("airgap-istio-gateway"), "-n", "istio-ingress", "--kube-version", chartKube)
	istiod := run(t, nil, needTool(t, "helm"), append([]string{"template", "istiod", chart}, render...)...)
	for _, tc := range []struct {
		name, in, note string
	}{
		{"gateway alone", string(gateway), `Istio's sidecar injector starts images no manifest names (image "auto" is its placeholder, left as written and not listed; it injects its proxy image, global.hub/global.proxy.image:global.tag of istiod's values (the istio-sidecar-injector ConfigMap, not in this input))`},
		{"with istiod", string(istiod) + "---\n" + string(gateway), `it injects docker.io/istio/proxyv2:1.27.0 (global.hub, global.proxy.image and global.tag of ConfigMap istio-system/istio-sidecar-injector values, <stdin>:`},
	} {
		out, errOut, err := runErr([]byte(tc.in), rehostBin(), "rewrite", "--image-list", filepath.Join(t.TempDir(), "images.txt"))
		if err != nil {
			t.Fatalf("%s: %v\n%s", tc.name, err, errOut)
		}
		if !bytes.Contains(out, []byte("image: auto\n")) || bytes.Contains(out, []byte("library/auto")) {
			t.Errorf("%s: image: auto rewritten:\n%s", tc.name, out)
		}
		if !bytes.Contains(errOut, []byte(tc.note)) {
			t.Errorf("%s: stderr has no %q:\n%s", tc.name, tc.note, errOut)
		}
		imgs := string(run(t, []byte(tc.in), rehostBin(), "images"))
		if strings.Contains(imgs, "auto") {
			t.Errorf("%s: images lists auto:\n%s", tc.name, imgs)
		}
	}
}

// byName parses a rendered stream into its documents by "Kind name".
func byName(t *testing.T, stream []byte) map[string]map[string]interface{} {
	t.Helper()
	out := map[string]map[string]interface{}{}
	dec := yaml.NewDecoder(bytes.NewReader(stream))
	for {
		var doc map[string]interface{}
		if err := dec.Decode(&doc); err != nil {
			break
		}
		if doc == nil {
			continue
		}
		meta, _ := doc["metadata"].(map[string]interface{})
		out[doc["kind"].(string)+" "+meta["name"].(string)] = doc
	}
	return out
}
