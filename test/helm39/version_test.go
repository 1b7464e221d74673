package helm39

import (
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chartutil"
)

// helmWant is the Helm minor version this module proves the core against:
// sealer's (go.mod pins v3.9.4).
const helmWant = "v3.9"

// linkedHelm returns the version of the Helm library linked into the
// test, as Helm knows itself ("v3.9", "v3.22").
func linkedHelm() string { return chartutil.DefaultCapabilities.HelmVersion.Version }

// requireHelm39 skips a test that is not linked against Helm 3.9: in the
// repository's go.work every module shares one build list, in which
// pkg/helm's Helm 3.22 wins. `make test` runs this module with GOWORK=off.
func requireHelm39(t *testing.T) {
	t.Helper()
	if v := linkedHelm(); v != helmWant && !strings.HasPrefix(v, helmWant+"+") {
		t.Skipf("linked against helm %s, not %s (go.work selects pkg/helm's): run `GOWORK=off go test ./...` in test/helm39, as make test does", v, helmWant)
	}
}

// TestLinkedHelm says which Helm the module links.
func TestLinkedHelm(t *testing.T) {
	requireHelm39(t)
	t.Logf("linked against helm %s", linkedHelm())
}
