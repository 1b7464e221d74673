package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestLightBinary: rehost starts in milliseconds only while it links
// neither Helm nor kyaml's function framework (their package
// initialisation runs at every start); rehost-helm and rehost-fn carry them.
func TestLightBinary(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Skipf("go list: %v", err)
	}
	for _, pkg := range strings.Fields(string(out)) {
		for _, heavy := range []string{"helm.sh/helm/", "k8s.io/client-go/", "sigs.k8s.io/kustomize/kyaml/fn/framework", "k8s.io/kube-openapi/pkg/validation/strfmt"} {
			if strings.HasPrefix(pkg, heavy) {
				t.Errorf("rehost links %s: move what needs it into a companion binary", pkg)
			}
		}
	}
}
