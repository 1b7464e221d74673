package airgap

import (
	"reflect"
	"strings"
	"testing"
)

func TestFillSlot(t *testing.T) {
	tests := []struct {
		parts  []string
		want   string
		x      string
		solved bool
	}{
		{[]string{"", "/bitnami/redis:7.2"}, "sea.hub:5000/bitnami/redis:7.2", "sea.hub:5000", true},
		{[]string{"", ":1.25"}, "sea.hub:5000/library/nginx:1.25", "sea.hub:5000/library/nginx", true},
		{[]string{"docker.io/", ":7.2"}, "sea.hub:5000/bitnami/redis:7.2", "", false},
		{[]string{"", "/a:", ""}, "x/a:x", "x", true},
		{[]string{"", "/a:", ""}, "x/a:y", "", false},
		{[]string{"", "/nginx:1.25"}, "sea.hub:5000/library/nginx:1.25", "sea.hub:5000/library", true},
	}
	for _, tt := range tests {
		x, ok := fillSlot(tt.parts, tt.want)
		if x != tt.x || ok != tt.solved {
			t.Errorf("fillSlot(%q, %q) = %q, %t; want %q, %t", tt.parts, tt.want, x, ok, tt.x, tt.solved)
		}
	}
}

func TestOccursInName(t *testing.T) {
	tests := []struct {
		ref, v string
		want   bool
	}{
		{"docker.io/bitnami/redis:7.2", "docker.io", true},
		{"docker.io/bitnami/redis:7.2", "bitnami/redis", true},
		{"docker.io/bitnami/redis:7.2", "7.2", false},     // the tag
		{"docker.io/bitnami/redis:7.2", "redis", true},    // a component
		{"docker.io/bitnami/redis:7.2", "itnami", false},  // inside a component
		{"nginx@sha256:abc", "abc", false},                // the digest
		{"registry.k8s.io/x:v1", "registry.k8s.io", true}, //
	}
	for _, tt := range tests {
		if got := occursInName(tt.ref, tt.v); got != tt.want {
			t.Errorf("occursInName(%q, %q) = %t", tt.ref, tt.v, got)
		}
	}
}

func TestHostSplits(t *testing.T) {
	reg := &candidate{path: []interface{}{"tempo", "image", "registry"}}
	repo := &candidate{path: []interface{}{"tempo", "image", "repository"}}
	sols := [][]string{{"docker.io", "grafana/tempo"}, {"docker.io/grafana", "tempo"}}
	if got := hostSplits(sols, []*candidate{reg, repo}, []int{0, 1}, refHost("docker.io/grafana/tempo:2.8.0")); !reflect.DeepEqual(got, sols[:1]) {
		t.Errorf("hostSplits = %q", got)
	}
	// No registry key among them: no way to tell.
	if got := hostSplits(sols, []*candidate{repo, repo}, []int{0, 1}, "docker.io"); len(got) != 0 {
		t.Errorf("hostSplits without a registry key = %q", got)
	}
	for ref, host := range map[string]string{"docker.io/a/b:1": "docker.io", "nginx:1": "", "library/nginx": "", "localhost/a": "localhost", "reg:5000/a": "reg:5000"} {
		if got := refHost(ref); got != host {
			t.Errorf("refHost(%q) = %q, want %q", ref, got, host)
		}
	}
}

func TestFillMarkers(t *testing.T) {
	tests := []struct {
		segs  []string
		holes []int
		n     int
		s     string
		want  [][]string
	}{
		{[]string{"", "/", ":3.0"}, []int{0, 1}, 2, "docker.io/haproxy:3.0", [][]string{{"docker.io", "haproxy"}}},
		{[]string{"", "/", ":1"}, []int{0, 1}, 2, "docker.io/library/nginx:1", [][]string{{"docker.io", "library/nginx"}, {"docker.io/library", "nginx"}}},
		{[]string{"", "/a:", ""}, []int{0, 0}, 1, "x/a:x", [][]string{{"x"}}},
		{[]string{"", "/a:", ""}, []int{0, 0}, 1, "x/a:y", nil},
		{[]string{"q", ""}, []int{0}, 1, "docker.io", nil},
	}
	for _, tt := range tests {
		if got := fillMarkers(tt.segs, tt.holes, tt.n, tt.s, 2); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("fillMarkers(%q, %v, %q) = %q, want %q", tt.segs, tt.holes, tt.s, got, tt.want)
		}
	}
}

// TestNaturalValue: where a key sits in a reference decides its natural
// value: a registry key the target registry (with the source host when
// nested), a repository key the target repository, "library/" included.
func TestNaturalValue(t *testing.T) {
	tests := []struct {
		value, want string
		slot        slot
		natural     string
		ok          bool
	}{
		{"docker.io/traefik:v3", "sea.hub:5000/library/traefik:v3", slot{parts: []string{"", "/traefik:v3"}, held: "docker.io", known: true}, "sea.hub:5000", true},
		{"docker.io/traefik:v3", "sea.hub:5000/library/traefik:v3", slot{parts: []string{"docker.io/", ":v3"}, held: "traefik", known: true}, "library/traefik", true},
		{"docker.io/bitnami/nginx:1", "sea.hub:5000/bitnami/nginx:1", slot{parts: []string{"", "/bitnami/nginx:1"}, held: "docker.io", known: true}, "sea.hub:5000", true},
		{"docker.io/bitnami/nginx:1", "h:1/m/docker.io/bitnami/nginx:1", slot{parts: []string{"", "/bitnami/nginx:1"}, held: "docker.io", known: true}, "h:1/m/docker.io", true},
		{"nginx:1.25", "sea.hub:5000/library/nginx:1.25", slot{parts: []string{"", ":1.25"}, held: "nginx", known: true}, "sea.hub:5000/library/nginx", true},
		{"--image=quay.io/a/b:1", "--image=sea.hub:5000/a/b:1", slot{parts: []string{"--image=", "/a/b:1"}, held: "quay.io", known: true}, "sea.hub:5000", true},
		// Inside the host: no natural value.
		{"docker.io/bitnami/nginx:1", "sea.hub:5000/bitnami/nginx:1", slot{parts: []string{"docker.", "/bitnami/nginx:1"}, held: "io", known: true}, "", false},
	}
	for _, tt := range tests {
		f := imageField{value: tt.value, want: tt.want, token: tt.value}
		if i := strings.Index(tt.value, "="); i >= 0 {
			f.at, f.token = i+1, tt.value[i+1:]
		}
		c := &candidate{slots: map[int]slot{0: tt.slot}}
		sv := &solver{s: &Search{fields: []imageField{f}}, boundaries: map[int]func(int) (int, bool){}}
		got, ok := sv.naturalValue(c, 0)
		if got != tt.natural || ok != tt.ok {
			t.Errorf("%s in %q -> %q: %q, %t; want %q, %t", tt.slot.held, tt.value, tt.want, got, ok, tt.natural, tt.ok)
		}
	}
}
