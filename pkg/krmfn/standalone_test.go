package krmfn_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/rehost/rehost/pkg/krmfn"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// TestStandaloneInputs: each input is a stream of its own; a second input
// without a leading "---" keeps its resources (and images) apart from the
// first input's last document. Results name the input; the output carries
// no annotation Standalone added.
func TestStandaloneInputs(t *testing.T) {
	a := "apiVersion: v1\nkind: Pod\nmetadata:\n  name: a\nspec:\n  containers:\n  - name: main\n    image: nginx:1.25\n"
	b := "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: b\nspec:\n  template:\n    spec:\n      containers:\n      - name: main\n        image: quay.io/team/b:2\n"
	var out bytes.Buffer
	res, err := krmfn.Standalone(nil, []krmfn.Input{{Name: "a.yaml", Reader: strings.NewReader(a)}, {Name: "b.yaml", Reader: strings.NewReader(b)}}, &out)
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Replace(a, "nginx:1.25", "sea.hub:5000/library/nginx:1.25", 1) + "---\n" + strings.Replace(b, "quay.io/team/b:2", "sea.hub:5000/team/b:2", 1)
	if out.String() != want {
		t.Errorf("output:\n%s\nwant:\n%s", out.String(), want)
	}
	var files []string
	for _, r := range res {
		if r.Severity != framework.Info || r.File == nil {
			t.Errorf("result %v: want info with a file", r)
			continue
		}
		files = append(files, r.File.Path)
	}
	if strings.Join(files, ",") != "a.yaml,b.yaml" {
		t.Errorf("results name files %v, want a.yaml, b.yaml", files)
	}
}

// TestStandaloneError: on an error nothing is written, and the error
// results name the file.
func TestStandaloneError(t *testing.T) {
	fc := yaml.MustParse("apiVersion: rehost.dev/v1alpha1\nkind: RewriteConfig\nregistry: sea.hub:5000\n")
	bad := "apiVersion: v1\nkind: Pod\nmetadata:\n  name: bad\nspec:\n  containers:\n  - name: main\n    image: \"\"\n"
	var out bytes.Buffer
	res, err := krmfn.Standalone(fc, []krmfn.Input{{Name: "bad.yaml", Reader: strings.NewReader(bad)}}, &out)
	errs, ok := err.(framework.Results)
	if !ok || len(errs) != 1 || errs[0].File == nil || errs[0].File.Path != "bad.yaml" {
		t.Fatalf("err = %v, want one error result naming bad.yaml", err)
	}
	if out.Len() != 0 {
		t.Errorf("output on error:\n%s", out.String())
	}
	for _, r := range res {
		if r.Severity == framework.Info {
			t.Errorf("info result on error: %v", r)
		}
	}
}

// TestQuotingStyle: the function keeps each rewritten value's style, as
// "rehost rewrite" does: plain stays plain, quoted stays quoted. In flow
// collections ({...}, [...]) kyaml's encoder, which writes every
// ResourceList, single-quotes any value holding ":", whether the function
// touched it or not (the untouched args below): that is the
// serialization of kyaml and of every orchestrator built on it, documented
// in docs/kustomize.md, not a choice of the function.
func TestQuotingStyle(t *testing.T) {
	in := `apiVersion: config.kubernetes.io/v1
kind: ResourceList
items:
- apiVersion: v1
  kind: Pod
  metadata:
    name: p
  spec:
    containers:
    - name: plain
      image: registry.k8s.io/pause:3.9
    - name: double
      image: "registry.k8s.io/pause:3.9"
    - name: single
      image: 'registry.k8s.io/pause:3.9'
    - {name: flow, image: registry.k8s.io/pause:3.9, args: [--listen=0.0.0.0:80]}
`
	out, err := execute([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"      image: sea.hub:5000/pause:3.9\n",
		"      image: \"sea.hub:5000/pause:3.9\"\n",
		"      image: 'sea.hub:5000/pause:3.9'\n",
		"    - {name: flow, image: 'sea.hub:5000/pause:3.9', args: ['--listen=0.0.0.0:80']}\n",
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// TestStandaloneLines: lines in messages are lines of the input file, also
// for its later documents (kyaml's reader would count them from each
// document's start).
func TestStandaloneLines(t *testing.T) {
	in := "# header\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n---\n" +
		"apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n  - name: main\n    image: nginx:1.25\n    image: nginx:1.26\n"
	var out bytes.Buffer
	res, err := krmfn.Standalone(nil, []krmfn.Input{{Name: "app.yaml", Reader: strings.NewReader(in)}}, &out)
	if err != nil {
		t.Fatal(err)
	}
	var warnings []string
	for _, r := range res {
		if r.Severity == framework.Warning {
			warnings = append(warnings, r.Message)
		}
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], `duplicate key "image" (lines 14, 15)`) {
		t.Errorf("warnings %q, want one naming lines 14 and 15", warnings)
	}
	if !strings.Contains(out.String(), "image: sea.hub:5000/library/nginx:1.25\n    image: sea.hub:5000/library/nginx:1.26\n") {
		t.Errorf("output:\n%s", out.String())
	}
}
