package krmfn_test

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/rehost/rehost/pkg/krmfn"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// process runs the Processor on a golden case's input and returns the
// ResourceList it leaves and its error.
func process(t *testing.T, name string) (*framework.ResourceList, error) {
	t.Helper()
	rw := &kio.ByteReadWriter{Reader: bytes.NewReader(read(t, filepath.Join(goldenDir, name, "input.yaml"))), KeepReaderAnnotations: true}
	nodes, err := rw.Read()
	if err != nil {
		t.Fatal(err)
	}
	rl := &framework.ResourceList{Items: nodes, FunctionConfig: rw.FunctionConfig}
	return rl, krmfn.Processor{}.Process(rl)
}

// TestResults asserts, independently of the golden files, the results of
// each case: how many of each severity, and that the function fails
// exactly when there is an error result, with those results as its error.
func TestResults(t *testing.T) {
	tests := []struct {
		name                  string
		info, warning, errors int
		// firstField is the field path of the first result of the
		// severity that matters for the case ("" to skip).
		firstField string
	}{
		{name: "rewrite-config", info: 9, firstField: "spec.template.spec.containers[0].env[0].value"},
		{name: "configmap-config", info: 2, firstField: "spec.template.spec.containers[1].image"},
		{name: "no-function-config", info: 1},
		{name: "skip-invalid", info: 1, warning: 3, firstField: "spec.template.spec.containers[0].image"},
		{name: "invalid-image", errors: 1, firstField: "spec.template.spec.containers[0].image"},
		{name: "collision", errors: 1, firstField: "spec.template.spec.containers[0].image"},
		{name: "image-list-add", info: 4},
		{name: "image-list-update", info: 2, warning: 1},
		{name: "bad-config", errors: 1},
		{name: "unsupported-config-kind", errors: 1},
		{name: "configmap-bad-key", errors: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rl, err := process(t, tt.name)
			count := map[framework.Severity]int{}
			var first *framework.Result
			for _, r := range rl.Results {
				count[r.Severity]++
				if r.ResourceRef == nil {
					t.Errorf("result without resourceRef: %s", r)
				}
				want := framework.Info
				if tt.warning > 0 {
					want = framework.Warning
				}
				if tt.errors > 0 {
					want = framework.Error
				}
				if first == nil && r.Severity == want {
					first = r
				}
			}
			if count[framework.Info] != tt.info || count[framework.Warning] != tt.warning || count[framework.Error] != tt.errors {
				t.Errorf("results: %d info, %d warning, %d error; want %d, %d, %d\n%v",
					count[framework.Info], count[framework.Warning], count[framework.Error], tt.info, tt.warning, tt.errors, rl.Results)
			}
			if len(count) > 3 {
				t.Errorf("severities outside the KRM functions specification: %v", count)
			}
			if tt.firstField != "" && (first == nil || first.Field == nil || first.Field.Path != tt.firstField) {
				t.Errorf("first result %v: want field %s", first, tt.firstField)
			}
			if tt.errors == 0 {
				if err != nil {
					t.Fatalf("Process() = %v, want nil", err)
				}
				return
			}
			res, ok := err.(framework.Results)
			if !ok {
				t.Fatalf("Process() = %T %v, want framework.Results", err, err)
			}
			if len(res) != tt.errors || res.ExitCode() != 1 {
				t.Errorf("Process() returned %d results (exit code %d), want the %d error results (exit code 1)", len(res), res.ExitCode(), tt.errors)
			}
		})
	}
}

// TestImageListConfigMap checks the ConfigMap the function adds or updates.
func TestImageListConfigMap(t *testing.T) {
	tests := []struct {
		name, namespace string
		want            string
		keep            map[string]string // other data that must stay
	}{
		{name: "image-list-add", want: "docker.io/library/nginx:1.25\ndocker.io/library/redis:latest\nsea.hub:5000/library/nginx:1.25\n"},
		{name: "image-list-update", namespace: "ops", want: "ghcr.io/acme/web:2.1@sha256:9b2a8e1d2c3f4a5b6c7d8e9f0a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6e7f8a9b\n", keep: map[string]string{"owner": "platform-team"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rl, err := process(t, tt.name)
			if err != nil {
				t.Fatal(err)
			}
			var cms []*yaml.RNode
			for _, it := range rl.Items {
				if it.GetKind() == "ConfigMap" && it.GetName() == "rehost-images" {
					cms = append(cms, it)
				}
			}
			if len(cms) != 1 {
				t.Fatalf("%d ConfigMaps rehost-images, want 1", len(cms))
			}
			cm := cms[0]
			if cm.GetApiVersion() != "v1" || cm.GetNamespace() != tt.namespace {
				t.Errorf("ConfigMap %s namespace %q, want v1 in %q", cm.GetApiVersion(), cm.GetNamespace(), tt.namespace)
			}
			data := cm.GetDataMap()
			if data[krmfn.ImageListKey] != tt.want {
				t.Errorf("data.imageList = %q, want %q", data[krmfn.ImageListKey], tt.want)
			}
			for k, v := range tt.keep {
				if data[k] != v {
					t.Errorf("data.%s = %q, want %q kept", k, data[k], v)
				}
			}
		})
	}
}

// TestImageListOffByDefault: without imageList no ConfigMap appears, even
// when images were rewritten.
func TestImageListOffByDefault(t *testing.T) {
	rl, err := process(t, "rewrite-config")
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range rl.Items {
		if _, ok := it.GetDataMap()[krmfn.ImageListKey]; ok {
			t.Errorf("%s %s has data.imageList", it.GetKind(), it.GetName())
		}
	}
}
