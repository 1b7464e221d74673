package rewrite

import "testing"

// TestLocationString: errors and listings name the file, the line when
// known, the object as far as known and the field.
func TestLocationString(t *testing.T) {
	for _, tt := range []struct {
		l    Location
		want string
	}{
		{Location{File: "a.yaml"}, "a.yaml"},
		{Location{File: "a.yaml", Line: 1}, "a.yaml:1"},
		{Location{File: "<stdin>", Line: 14, Kind: "Deployment", Namespace: "prod", Name: "web", Field: "spec.template.spec.containers[0].image"}, "<stdin>:14: Deployment prod/web: spec.template.spec.containers[0].image"},
		{Location{File: "a.yaml", Line: 3, Kind: "Pod", Name: "p", Field: "spec.containers[0].image"}, "a.yaml:3: Pod p: spec.containers[0].image"},
		{Location{File: "a.yaml", Line: 3, Kind: "Pod"}, "a.yaml:3: Pod"},
		{Location{File: "a.yaml", Namespace: "ns", Name: "p"}, "a.yaml: ns/p"},
		{Location{File: "a.yaml", Line: 2, Field: "data.x"}, "a.yaml:2: data.x"},
	} {
		if got := tt.l.String(); got != tt.want {
			t.Errorf("%#v.String() = %q, want %q", tt.l, got, tt.want)
		}
	}
}
