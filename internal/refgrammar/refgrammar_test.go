package refgrammar

import (
	"strings"
	"testing"
)

func TestGrammar(t *testing.T) {
	for _, c := range []struct {
		f    func(string) bool
		name string
		in   string
		want bool
	}{
		{Host, "host", "sea.hub:5000", true},
		{Host, "host", "localhost", true},
		{Host, "host", "[::1]:5000", true},
		{Host, "host", "my-registry.example.com", true},
		{Host, "host", "-bad.io", false},
		{Host, "host", "bad_host.io", false},
		{Host, "host", "host:port", false},
		{Component, "component", "library", true},
		{Component, "component", "a.b_c__d---e", true},
		{Component, "component", "Upper", false},
		{Component, "component", "a..b", false},
		{Component, "component", "-a", false},
		{Component, "component", "", false},
		{Tag, "tag", "1.25", true},
		{Tag, "tag", "_x", true},
		{Tag, "tag", "v1.0.0-rc.1_build.7", true},
		{Tag, "tag", ".x", false},
		{Tag, "tag", "-x", false},
		{Tag, "tag", "1+build", false},
		{Tag, "tag", strings.Repeat("a", 128), true},
		{Tag, "tag", strings.Repeat("a", 129), false},
	} {
		if got := c.f(c.in); got != c.want {
			t.Errorf("%s(%q) = %v, want %v", c.name, c.in, got, c.want)
		}
	}
}
