package krmfn_test

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rehost/rehost/pkg/krmfn"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/fn/framework/frameworktestutil"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/krmfn")

// goldenDir holds one directory per case: input.yaml (a ResourceList),
// expected.yaml (the ResourceList written) and, when the function fails,
// errors.txt (its error, compared exactly).
var goldenDir = filepath.Join("..", "..", "testdata", "krmfn")

// TestProcessGolden runs every case with kyaml's ProcessorResultsChecker.
func TestProcessGolden(t *testing.T) {
	c := frameworktestutil.ProcessorResultsChecker{
		TestDataDirectory:        goldenDir,
		UpdateExpectedFromActual: *update,
		// Compare errors exactly, not as regular expressions, so -update
		// writes usable errors.txt files.
		ErrorAssertionFunc: frameworktestutil.RequireStrippedStringsEqual,
		Processor:          func() framework.ResourceListProcessor { return krmfn.Processor{} },
	}
	c.Assert(t)
	if n := len(c.TestCasesRun()); n < 14 {
		t.Errorf("ran %d cases, want all 14 under %s", n, goldenDir)
	}
}

// goldenCase is one directory of goldenDir.
type goldenCase struct {
	name            string
	input, expected []byte
	failed          bool // has errors.txt
}

func goldenCases(t *testing.T) []goldenCase {
	t.Helper()
	dirs, err := filepath.Glob(filepath.Join(goldenDir, "*", "input.yaml"))
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no cases under %s: %v", goldenDir, err)
	}
	var out []goldenCase
	for _, in := range dirs {
		dir := filepath.Dir(in)
		c := goldenCase{name: filepath.Base(dir), input: read(t, in), expected: read(t, filepath.Join(dir, "expected.yaml"))}
		_, err := os.Stat(filepath.Join(dir, "errors.txt"))
		c.failed = err == nil
		out = append(out, c)
	}
	return out
}

func read(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// execute runs the function on a ResourceList as "rehost fn" does.
func execute(in []byte) (out []byte, err error) {
	var buf bytes.Buffer
	err = framework.Execute(krmfn.Processor{}, &kio.ByteReadWriter{Reader: bytes.NewReader(in), Writer: &buf, KeepReaderAnnotations: true})
	return buf.Bytes(), err
}

// TestProcessGoldenFailures compares the results written by failing cases
// too (ProcessorResultsChecker only compares their error): they must carry
// the error results. Their items are not compared: on failure the
// orchestrator discards them.
func TestProcessGoldenFailures(t *testing.T) {
	for _, c := range goldenCases(t) {
		if !c.failed {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			out, err := execute(c.input)
			if err == nil {
				t.Fatal("no error")
			}
			got, want := results(t, out), results(t, c.expected)
			if got != want {
				t.Errorf("results differ from expected.yaml\n got:\n%s\nwant:\n%s", got, want)
			}
			if !strings.Contains(got, "severity: error") {
				t.Errorf("no error result in output:\n%s", out)
			}
		})
	}
}

// results returns the results of a ResourceList as YAML.
func results(t *testing.T, rl []byte) string {
	t.Helper()
	rn, err := yaml.Parse(string(rl))
	if err != nil {
		t.Fatal(err)
	}
	r, err := rn.Pipe(yaml.Lookup("results"))
	if err != nil || r == nil {
		t.Fatalf("no results in\n%s", rl)
	}
	return r.MustString()
}

// items parses the items of a ResourceList.
func items(t *testing.T, rl []byte) []*yaml.RNode {
	t.Helper()
	nodes, err := (&kio.ByteReader{Reader: bytes.NewReader(rl), OmitReaderAnnotations: true}).Read()
	if err != nil {
		t.Fatal(err)
	}
	return nodes
}

func id(rn *yaml.RNode) string {
	return rn.GetApiVersion() + "/" + rn.GetKind() + " " + rn.GetNamespace() + "/" + rn.GetName()
}

// TestNoResourcesAdded runs the function on every successful case: the
// items out are the items in, in the same order, plus the image-list
// ConfigMap when one is configured and not in the input.
func TestNoResourcesAdded(t *testing.T) {
	for _, c := range goldenCases(t) {
		if c.failed {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			rl, err := execute(c.input)
			if err != nil {
				t.Fatal(err)
			}
			in, out := items(t, c.input), items(t, rl)
			if len(out) < len(in) {
				t.Fatalf("%d items out, %d in", len(out), len(in))
			}
			for i := range in {
				if id(in[i]) != id(out[i]) {
					t.Errorf("item %d: %s out, %s in", i, id(out[i]), id(in[i]))
				}
			}
			added := out[len(in):]
			switch {
			case c.name == "image-list-add":
				if len(added) != 1 || id(added[0]) != "v1/ConfigMap /rehost-images" {
					t.Errorf("added %d items, want the ConfigMap rehost-images alone", len(added))
				}
			case len(added) > 0:
				t.Errorf("added %d items (first %s), want none", len(added), id(added[0]))
			}
		})
	}
}

// annotationsCase is a ResourceList whose items carry every annotation
// kustomize and kpt set, and what "rehost fn" writes for it.
var (
	annotationsIn  = filepath.Join(goldenDir, "annotations", "resourcelist.yaml")
	annotationsOut = filepath.Join(goldenDir, "annotations", "resourcelist.expected.yaml")
)

// TestAnnotationsGolden runs the function with the reader and writer
// settings of "rehost fn" (kyaml's fn/framework/command) on a ResourceList
// carrying kyaml's index, path and id annotations.
func TestAnnotationsGolden(t *testing.T) {
	out, err := execute(read(t, annotationsIn))
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile(annotationsOut, out, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	frameworktestutil.RequireStrippedStringsEqual(t, string(read(t, annotationsOut)), string(out))
}

// legacyMirrors are the annotations kyaml's framework.Execute adds as
// legacy copies of internal ones (kio.ReconcileInternalAnnotations).
var legacyMirrors = map[string]string{
	"config.k8s.io/id":           kioutil.IdAnnotation,
	"config.kubernetes.io/path":  kioutil.PathAnnotation,
	"config.kubernetes.io/index": kioutil.IndexAnnotation,
}

// TestAnnotationsKept runs the function on every successful case: each
// input item's annotations (kyaml's index, path and id among them) come out
// unchanged, and the only ones added are kyaml's legacy copies of internal
// ones.
func TestAnnotationsKept(t *testing.T) {
	type pair struct{ name, in string }
	pairs := []pair{{"annotations", annotationsIn}}
	for _, c := range goldenCases(t) {
		if !c.failed {
			pairs = append(pairs, pair{c.name, filepath.Join(goldenDir, c.name, "input.yaml")})
		}
	}
	checked := map[string]bool{}
	for _, p := range pairs {
		t.Run(p.name, func(t *testing.T) {
			input := read(t, p.in)
			rl, err := execute(input)
			if err != nil {
				t.Fatal(err)
			}
			in, out := items(t, input), items(t, rl)
			for i := range in {
				if i >= len(out) {
					t.Fatalf("item %d missing", i)
				}
				want, got := in[i].GetAnnotations(), out[i].GetAnnotations()
				for k, v := range want {
					if got[k] != v {
						t.Errorf("%s: annotation %s = %q, want %q", id(in[i]), k, got[k], v)
					}
					checked[k] = true
				}
				for k, v := range got {
					if _, ok := want[k]; ok {
						continue
					}
					if internal, ok := legacyMirrors[k]; !ok || got[internal] != v {
						t.Errorf("%s: annotation %s: %q added", id(in[i]), k, v)
					}
				}
			}
		})
	}
	for _, k := range []string{kioutil.IndexAnnotation, "config.kubernetes.io/index", kioutil.PathAnnotation, kioutil.IdAnnotation} {
		if !checked[k] {
			t.Errorf("no case has annotation %s", k)
		}
	}
}

// TestProcessEnvImages: the function rewrites the config-reloader image
// that a ConfigMap item passes to a later Deployment item through
// $(PROMETHEUS_CONFIG_RELOADER) (Bitnami kube-prometheus), as rehost
// rewrite does.
func TestProcessEnvImages(t *testing.T) {
	in := `apiVersion: config.kubernetes.io/v1
kind: ResourceList
items:
- apiVersion: v1
  kind: ConfigMap
  metadata: {name: kp-operator, namespace: monitoring}
  data:
    prometheus-config-reloader: bitnami/prometheus-operator:0.85.0
- apiVersion: apps/v1
  kind: Deployment
  metadata: {name: kp-operator, namespace: monitoring}
  spec:
    template:
      spec:
        containers:
        - name: operator
          image: quay.io/example/operator:1
          args: ["--prometheus-config-reloader=$(PROMETHEUS_CONFIG_RELOADER)"]
          env:
          - name: PROMETHEUS_CONFIG_RELOADER
            valueFrom: {configMapKeyRef: {name: kp-operator, key: prometheus-config-reloader}}
`
	out, err := execute([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), "prometheus-config-reloader: sea.hub:5000/bitnami/prometheus-operator:0.85.0\n") {
		t.Errorf("the ConfigMap is not rewritten:\n%s", out)
	}
}
