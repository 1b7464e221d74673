package krmfn_test

import (
	"strings"
	"testing"

	"github.com/rehost/rehost/pkg/krmfn"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// TestSummaryResults: the function gives the CLI's one-line summaries as
// results: the embedded references left as written (a warning beside the
// per-image infos), added registry settings (info) and operators that
// start images no manifest names (warning).
func TestSummaryResults(t *testing.T) {
	// The image list ConfigMap's own data is free text: its references
	// are left as written, and summed up in one warning.
	rl, err := process(t, "image-list-update")
	if err != nil {
		t.Fatal(err)
	}
	var warns []*framework.Result
	for _, r := range rl.Results {
		if r.Severity == framework.Warning {
			warns = append(warns, r)
		}
	}
	if len(warns) != 1 || !strings.HasPrefix(warns[0].Message, "1 image reference(s) embedded in args, env values, ConfigMap data or annotations (1 image(s)) found and not rewritten;") ||
		warns[0].ResourceRef == nil || warns[0].ResourceRef.Kind != "ConfigMap" {
		t.Errorf("warnings %v: want the embedded summary on the ConfigMap", warns)
	}

	in := `apiVersion: config.kubernetes.io/v1
kind: ResourceList
items:
- apiVersion: operator.tigera.io/v1
  kind: Installation
  metadata:
    name: default
  spec:
    calicoNetwork:
      ipPools: [{cidr: 192.168.0.0/16}]
`
	rw := &kio.ByteReadWriter{Reader: strings.NewReader(in)}
	nodes, err := rw.Read()
	if err != nil {
		t.Fatal(err)
	}
	rl = &framework.ResourceList{Items: nodes}
	if err := (krmfn.Processor{}).Process(rl); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range rl.Results {
		got = append(got, string(r.Severity)+": "+r.Message)
	}
	all := strings.Join(got, "\n")
	if len(got) != 2 || !strings.Contains(got[0], "info: ") || !strings.Contains(got[0], "registry setting spec.registry: sea.hub:5000/ added") || !strings.Contains(got[0], "(noAddRegistry: true in the function config leaves it out)") || strings.Contains(got[0], "--") ||
		!strings.Contains(got[1], "warning: ") || !strings.Contains(got[1], "the tigera operator starts images no manifest names") || !strings.Contains(got[1], "list them in an imageList file") || strings.Contains(got[1], "--") {
		t.Errorf("results:\n%s", all)
	}
	reg, err := rl.Items[0].Pipe(yaml.Lookup("spec", "registry"))
	if err != nil || reg == nil || yaml.GetValue(reg) != "sea.hub:5000/" {
		t.Errorf("spec.registry = %v, %v", reg, err)
	}
}
