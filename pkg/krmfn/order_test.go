package krmfn

import "testing"

func TestPathLess(t *testing.T) {
	tests := []struct {
		a, b string
		want bool
	}{
		{"spec.containers[2].image", "spec.containers[10].image", true},
		{"spec.containers[10].image", "spec.containers[2].image", false},
		{"spec.containers[0].image", "spec.initContainers[0].image", true},
		{"spec.containers[1].image", "spec.containers[1].image", false},
		{"spec.image", "spec.image.x", true},
		{"spec.volumes[0].image.reference", "spec.volumes[0].image", false},
		{"", "a", true},
	}
	for _, tt := range tests {
		if got := pathLess(tt.a, tt.b); got != tt.want {
			t.Errorf("pathLess(%q, %q) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
	}
}
