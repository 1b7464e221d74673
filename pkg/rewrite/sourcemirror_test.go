package rewrite

import (
	"errors"
	"strings"
	"testing"
)

func TestParseSourceMirror(t *testing.T) {
	for _, c := range []struct {
		in      string
		want    SourceMirror
		wantErr string
	}{
		{in: "docker.io=mirror.corp:5000/dockerhub", want: SourceMirror{"docker.io", "mirror.corp:5000/dockerhub"}},
		{in: "quay.io/jetstack=mirror.corp:5000/q/jetstack", want: SourceMirror{"quay.io/jetstack", "mirror.corp:5000/q/jetstack"}},
		{in: " registry.k8s.io = mirror.corp ", want: SourceMirror{"registry.k8s.io", "mirror.corp"}},
		{in: "localhost:5000=127.0.0.1:5001/cache", want: SourceMirror{"localhost:5000", "127.0.0.1:5001/cache"}},
		{in: "docker.io=mirror", want: SourceMirror{"docker.io", "mirror"}},
		{in: "docker.io", wantErr: `"docker.io": want PREFIX=MIRROR`},
		{in: "", wantErr: `"": want PREFIX=MIRROR`},
		{in: "https://docker.io=mirror.corp", wantErr: `prefix "https://docker.io": want a registry host or host/path without a scheme`},
		{in: "docker.io=https://mirror.corp/dockerhub", wantErr: `mirror "https://mirror.corp/dockerhub": want host[:port][/path] without a scheme`},
		{in: "docker.io=", wantErr: `mirror "": empty`},
		{in: "=mirror.corp", wantErr: `prefix "": empty`},
		{in: "nginx=mirror.corp", wantErr: `prefix "nginx": "nginx" is not a registry host`},
		{in: "library/nginx=mirror.corp", wantErr: `"library" is not a registry host`},
		{in: "docker.io/library/nginx:1.25=mirror.corp", wantErr: "a tag names an image"},
		{in: "docker.io/library/nginx@sha256:" + strings.Repeat("a", 64) + "=m.corp", wantErr: "a digest names an image"},
		{in: "docker.io/Library=mirror.corp", wantErr: `repository path component "Library"`},
		{in: "docker.io=mirror.corp/Upper", wantErr: `mirror "mirror.corp/Upper": path: repository path component "Upper"`},
		{in: "docker.io=bad_host.io", wantErr: `mirror "bad_host.io": registry host "bad_host.io" is not a domain name`},
	} {
		got, err := ParseSourceMirror(c.in)
		if c.wantErr != "" {
			var se *SourceMirrorError
			if err == nil || !errors.As(err, &se) || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("ParseSourceMirror(%q) = %v, %v; want a *SourceMirrorError containing %q", c.in, got, err, c.wantErr)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("ParseSourceMirror(%q) = %+v, %v; want %+v", c.in, got, err, c.want)
		}
	}
}

func TestSourceMirrorNormalized(t *testing.T) {
	for in, want := range map[SourceMirror]SourceMirror{
		{"Index.Docker.IO/", "Mirror.Corp:5000/dockerhub/"}: {"docker.io", "mirror.corp:5000/dockerhub"},
		{"quay.io/jetstack", "m.corp"}:                      {"quay.io/jetstack", "m.corp"},
	} {
		if got, err := in.Normalized(); err != nil || got != want {
			t.Errorf("%v.Normalized() = %v, %v; want %v", in, got, err, want)
		}
	}
	if _, err := (SourceMirror{"nginx", "m.corp"}).Normalized(); err == nil {
		t.Error("nginx=m.corp normalised")
	}
}

func TestSourceMirrorsFind(t *testing.T) {
	s, err := NewSourceMirrors([]SourceMirror{
		{"docker.io", "mirror.corp:5000/dockerhub"},
		{"quay.io", "mirror.corp:5000/q"},
		{"quay.io/jetstack", "jetstack-mirror.corp"},
		{"Registry.K8S.io/", "mirror.corp:5000/k8s/"},
		{"ghcr.io/org/team", "mirror.corp:5000/team"},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, want, prefix string }{
		{"docker.io/library/nginx", "mirror.corp:5000/dockerhub/library/nginx", "docker.io"},
		{"index.docker.io/library/nginx", "mirror.corp:5000/dockerhub/library/nginx", "docker.io"},
		{"Docker.IO/bitnami/redis", "mirror.corp:5000/dockerhub/bitnami/redis", "docker.io"},
		// Longest prefix first, whatever the order given.
		{"quay.io/jetstack/cert-manager-controller", "jetstack-mirror.corp/cert-manager-controller", "quay.io/jetstack"},
		{"quay.io/prometheus/prometheus", "mirror.corp:5000/q/prometheus/prometheus", "quay.io"},
		// Path components whole.
		{"quay.io/jetstackx/app", "mirror.corp:5000/q/jetstackx/app", "quay.io"},
		{"ghcr.io/org/teamwork/app", "", ""},
		{"ghcr.io/org/team/app", "mirror.corp:5000/team/app", "ghcr.io/org/team"},
		{"ghcr.io/org/team", "mirror.corp:5000/team", "ghcr.io/org/team"},
		{"registry.k8s.io/pause", "mirror.corp:5000/k8s/pause", "registry.k8s.io"},
		// Hosts whole too.
		{"docker.io.evil.com/x", "", ""},
		{"myquay.io/x", "", ""},
		{"gcr.io/x/y", "", ""},
	} {
		got, prefix, ok := s.Find(c.name)
		if got != c.want || prefix != c.prefix || ok != (c.want != "") {
			t.Errorf("Find(%q) = %q, %q, %v; want %q, %q", c.name, got, prefix, ok, c.want, c.prefix)
		}
	}
	want := []SourceMirror{{"ghcr.io/org/team", "mirror.corp:5000/team"}, {"quay.io/jetstack", "jetstack-mirror.corp"}, {"registry.k8s.io", "mirror.corp:5000/k8s"}, {"docker.io", "mirror.corp:5000/dockerhub"}, {"quay.io", "mirror.corp:5000/q"}}
	if got := s.List(); len(got) != len(want) {
		t.Errorf("List = %v", got)
	} else {
		for i := range want {
			if got[i] != want[i] {
				t.Errorf("List[%d] = %v, want %v (longest prefix first)", i, got[i], want[i])
			}
		}
	}
	var none *SourceMirrors
	if _, _, ok := none.Find("docker.io/library/nginx"); ok || none.Len() != 0 {
		t.Error("a nil SourceMirrors found a mirror")
	}
}

func TestSourceMirrorsMirror(t *testing.T) {
	s, err := NewSourceMirrors([]SourceMirror{{"docker.io", "mirror"}, {"quay.io/x/y", "m.corp"}})
	if err != nil {
		t.Fatal(err)
	}
	r, _ := ParseRef("nginx:1.25@sha256:" + strings.Repeat("a", 64))
	m, prefix, err := s.Mirror(r)
	if err != nil || prefix != "docker.io" || m.Registry != "mirror" || m.Repository != "library/nginx" || m.Tag != "1.25" || m.Digest != r.Digest {
		t.Errorf("Mirror(%s) = %+v, %q, %v", r, m, prefix, err)
	}
	r, _ = ParseRef("ghcr.io/a/b:1")
	if m, prefix, err := s.Mirror(r); err != nil || prefix != "" || m != (Ref{}) {
		t.Errorf("Mirror(%s) = %+v, %q, %v; want no mirror", r, m, prefix, err)
	}
	// The prefix is the repository itself and the mirror has no path.
	r, _ = ParseRef("quay.io/x/y:1")
	var se *SourceMirrorError
	if _, _, err := s.Mirror(r); !errors.As(err, &se) || !strings.Contains(err.Error(), "has no path") {
		t.Errorf("Mirror(%s): %v; want an error saying the mirror has no path", r, err)
	}
	if m, _, err := s.Mirror(mustRef(t, "quay.io/x/y/z:1")); err != nil || m.String() != "m.corp/z:1" {
		t.Errorf("Mirror(quay.io/x/y/z:1) = %s, %v", m, err)
	}
}

func mustRef(t *testing.T, s string) Ref {
	t.Helper()
	r, err := ParseRef(s)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestNewSourceMirrorsErrors(t *testing.T) {
	for _, c := range []struct {
		in   []SourceMirror
		want string
	}{
		{[]SourceMirror{{"docker.io", "a.corp"}, {"quay.io", "b.corp"}, {"index.docker.io", "c.corp"}}, "prefix docker.io is mapped twice (entries 0 and 2)"},
		{[]SourceMirror{{"quay.io/x", "a.corp"}, {"QUAY.IO/x/", "b.corp"}}, "prefix quay.io/x is mapped twice (entries 0 and 1)"},
		{[]SourceMirror{{"docker.io", "a.corp"}, {"nginx", "b.corp"}}, `entry 1: prefix "nginx"`},
		{[]SourceMirror{{"docker.io", "http://a.corp"}}, `entry 0: mirror "http://a.corp": want host[:port][/path] without a scheme`},
	} {
		_, err := NewSourceMirrors(c.in)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("NewSourceMirrors(%v): %v; want an error containing %q", c.in, err, c.want)
		}
	}
	var de *DuplicatePrefixError
	_, err := NewSourceMirrors([]SourceMirror{{"docker.io", "a.corp"}, {"docker.io", "a.corp"}})
	if !errors.As(err, &de) || de.Prefix != "docker.io" || de.First != 0 || de.Second != 1 {
		t.Errorf("duplicate: %v (%+v)", err, de)
	}
}

// TestConfigSourceMirrors: sourceMirrors in a config file; a bad entry
// or a prefix given twice is a *ConfigError naming the field and its
// line.
func TestConfigSourceMirrors(t *testing.T) {
	c, err := LoadConfig([]byte(`apiVersion: rehost.dev/v1alpha1
kind: RewriteConfig
sourceMirrors:
- {prefix: docker.io, mirror: mirror.corp:5000/dockerhub}
- prefix: quay.io
  mirror: mirror.corp:5000/q
`))
	if err != nil || len(c.SourceMirrors) != 2 || c.SourceMirrors[1] != (SourceMirror{"quay.io", "mirror.corp:5000/q"}) {
		t.Fatalf("LoadConfig: %+v, %v", c.SourceMirrors, err)
	}
	for _, tc := range []struct{ doc, want string }{
		{`sourceMirrors:
- {prefix: docker.io, mirror: mirror.corp:5000/dockerhub}
- prefix: quay.io
  mirror: https://mirror.corp/q
`, `config: line 4: sourceMirrors[1].mirror: "https://mirror.corp/q": want host[:port][/path] without a scheme`},
		{`registry: sea.hub:5000
sourceMirrors:
- {prefix: docker.io, mirror: a.corp}
- {prefix: quay.io, mirror: b.corp}
- {prefix: index.docker.io, mirror: c.corp}
`, `config: line 5: sourceMirrors[2].prefix: docker.io is mapped twice (sourceMirrors[0] maps it too)`},
		{`sourceMirrors:
- {prefix: nginx, mirror: a.corp}
`, `config: line 2: sourceMirrors[0].prefix: "nginx": "nginx" is not a registry host`},
		{`sourceMirrors:
- {mirror: a.corp}
`, `config: line 2: sourceMirrors[0].prefix: "": empty`},
		{`sourceMirrors:
- {prefix: docker.io, mirror: a.corp, location: x}
`, `field location not found`},
	} {
		_, err := LoadConfig([]byte(tc.doc))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("LoadConfig:\n%s\ngot %v\nwant an error containing %q", tc.doc, err, tc.want)
		}
	}
	// Without a file (Validate alone): no line.
	err = Config{SourceMirrors: []SourceMirror{{"docker.io", "a.corp"}, {"docker.io", "b.corp"}}}.Validate()
	var ce *ConfigError
	if !errors.As(err, &ce) || ce.Line != 0 || ce.Field != "sourceMirrors[1].prefix" {
		t.Errorf("Validate: %v", err)
	}
}
