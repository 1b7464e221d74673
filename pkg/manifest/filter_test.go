package manifest

import (
	"strings"
	"testing"

	"github.com/rehost/rehost/pkg/rewrite"
	"sigs.k8s.io/kustomize/kyaml/kio"
)

// TestFilterLocations: the kio filter names the file of kyaml's path
// annotation (without a line: positions are in the stream kyaml parsed,
// not in that file), and "<input>" with the line when no annotation names
// a file.
func TestFilterLocations(t *testing.T) {
	bad := "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  namespace: ns\n%sspec:\n  containers:\n  - name: c\n    image: Bad\n"
	for _, tt := range []struct {
		annotations string
		want        string
	}{
		{"", "<input>:9: Pod ns/p: spec.containers[0].image: invalid image reference \"Bad\""},
		{"  annotations: {internal.config.kubernetes.io/path: apps/web.yaml}\n", "apps/web.yaml: Pod ns/p: spec.containers[0].image: invalid image reference \"Bad\""},
		{"  annotations: {config.kubernetes.io/path: apps/web.yaml}\n", "apps/web.yaml: Pod ns/p: spec.containers[0].image: invalid image reference \"Bad\""},
		{"  annotations: {config.kubernetes.io/path: \"\"}\n", "<input>:10: Pod ns/p: spec.containers[0].image: invalid image reference \"Bad\""},
	} {
		in := strings.Replace(bad, "%s", tt.annotations, 1)
		rw := mustNew(t, rewrite.Config{})
		err := kio.Pipeline{
			Inputs:  []kio.Reader{&kio.ByteReader{Reader: strings.NewReader(in), OmitReaderAnnotations: true}},
			Filters: []kio.Filter{rw.Filter()},
			Outputs: []kio.Writer{&kio.ByteWriter{Writer: &strings.Builder{}}},
		}.Execute()
		if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
			t.Errorf("annotations %q: err = %v, want prefix %q", tt.annotations, err, tt.want)
		}
	}
}
