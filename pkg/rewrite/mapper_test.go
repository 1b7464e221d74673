package rewrite

import (
	"errors"
	"strings"
	"testing"
)

const dig = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

func TestMap(t *testing.T) {
	tests := []struct {
		name   string
		config Config
		in     string
		target string // value written into the manifest
		source string // qualified source, as listed
		action Action
	}{
		{name: "official image without tag", in: "nginx", target: "sea.hub:5000/library/nginx", source: "docker.io/library/nginx:latest", action: Rewritten},
		{name: "official image with tag", in: "nginx:1.25", target: "sea.hub:5000/library/nginx:1.25", source: "docker.io/library/nginx:1.25", action: Rewritten},
		{name: "docker hub user image", in: "bitnami/redis:7.2", target: "sea.hub:5000/bitnami/redis:7.2", source: "docker.io/bitnami/redis:7.2", action: Rewritten},
		{name: "docker.io spelled out", in: "docker.io/nginx:1.25", target: "sea.hub:5000/library/nginx:1.25", source: "docker.io/library/nginx:1.25", action: Rewritten},
		{name: "index.docker.io", in: "index.docker.io/library/nginx:1.25", target: "sea.hub:5000/library/nginx:1.25", source: "docker.io/library/nginx:1.25", action: Rewritten},
		{name: "registry.k8s.io", in: "registry.k8s.io/pause:3.9", target: "sea.hub:5000/pause:3.9", source: "registry.k8s.io/pause:3.9", action: Rewritten},
		{name: "ghcr.io", in: "ghcr.io/kyverno/kyverno:v1.5.1", target: "sea.hub:5000/kyverno/kyverno:v1.5.1", source: "ghcr.io/kyverno/kyverno:v1.5.1", action: Rewritten},
		{name: "port, deep path, tag and digest", in: "registry.example.com:8443/x/y/z:2.0@" + dig, target: "sea.hub:5000/x/y/z:2.0@" + dig, source: "registry.example.com:8443/x/y/z:2.0@" + dig, action: Rewritten},
		{name: "digest only", in: "quay.io/a/b@" + dig, target: "sea.hub:5000/a/b@" + dig, source: "quay.io/a/b@" + dig, action: Rewritten},
		{name: "IPv4 with port", in: "10.0.0.5:5000/x/y:1", target: "sea.hub:5000/x/y:1", source: "10.0.0.5:5000/x/y:1", action: Rewritten},
		{name: "IPv6 with port", in: "[fd00::1]:5000/x:1", target: "sea.hub:5000/x:1", source: "[fd00::1]:5000/x:1", action: Rewritten},
		{name: "localhost with port", in: "localhost:5000/foo/bar:1", target: "sea.hub:5000/foo/bar:1", source: "localhost:5000/foo/bar:1", action: Rewritten},
		{name: "already in target", in: "sea.hub:5000/library/nginx:1.25", target: "sea.hub:5000/library/nginx:1.25", source: "sea.hub:5000/library/nginx:1.25", action: InTarget},
		{name: "registry with prefix", config: Config{Registry: "sea.hub:5000/prefix"}, in: "nginx", target: "sea.hub:5000/prefix/library/nginx", source: "docker.io/library/nginx:latest", action: Rewritten},
		{name: "other registry", config: Config{Registry: "harbor.local"}, in: "quay.io/team/app:1", target: "harbor.local/team/app:1", source: "quay.io/team/app:1", action: Rewritten},
		{name: "nest style", config: Config{PathStyle: PathStyleNest}, in: "quay.io/team/app:1", target: "sea.hub:5000/quay.io/team/app:1", source: "quay.io/team/app:1", action: Rewritten},
		{name: "nest style docker hub", config: Config{PathStyle: PathStyleNest}, in: "nginx", target: "sea.hub:5000/docker.io/library/nginx", source: "docker.io/library/nginx:latest", action: Rewritten},
		{name: "nest style port made path-safe", config: Config{PathStyle: PathStyleNest}, in: "registry.example.com:8443/x:1", target: "sea.hub:5000/registry.example.com_8443/x:1", source: "registry.example.com:8443/x:1", action: Rewritten},
		// An IPv6 source host in a path component (issue 29, item 6).
		{name: "nest style IPv6 with port", config: Config{PathStyle: PathStyleNest}, in: "[::1]:5000/foo:1", target: "sea.hub:5000/0__1-5000/foo:1", source: "[::1]:5000/foo:1", action: Rewritten},
		{name: "nest style IPv6", config: Config{PathStyle: PathStyleNest}, in: "[FD00::5]/foo", target: "sea.hub:5000/fd00__5/foo", source: "[fd00::5]/foo:latest", action: Rewritten},
		{name: "nest style IPv6 ending in ::", config: Config{PathStyle: PathStyleNest}, in: "[fe80::]:443/a/b:1", target: "sea.hub:5000/fe80__0-443/a/b:1", source: "[fe80::]:443/a/b:1", action: Rewritten},
		{name: "nest style IPv6 all zeros", config: Config{PathStyle: PathStyleNest}, in: "[::]/x:1", target: "sea.hub:5000/0__0/x:1", source: "[::]/x:1", action: Rewritten},
		{name: "nest style IPv6 with IPv4", config: Config{PathStyle: PathStyleNest, Registry: "sea.hub:5000/m"}, in: "[::ffff:1.2.3.4]:5/x", target: "sea.hub:5000/m/0__ffff_1.2.3.4-5/x", source: "[::ffff:1.2.3.4]:5/x:latest", action: Rewritten},
		{name: "nest style IPv6 in full", config: Config{PathStyle: PathStyleNest}, in: "[1:2:3:4:5:6:7:8]/x:1", target: "sea.hub:5000/1_2_3_4_5_6_7_8/x:1", source: "[1:2:3:4:5:6:7:8]/x:1", action: Rewritten},
		{name: "exclude host", config: Config{Exclude: []string{"quay.io"}}, in: "quay.io/team/app:1", target: "quay.io/team/app:1", source: "quay.io/team/app:1", action: Excluded},
		{name: "exclude repository prefix", config: Config{Exclude: []string{"docker.io/library/busybox"}}, in: "busybox:1.36", target: "docker.io/library/busybox:1.36", source: "docker.io/library/busybox:1.36", action: Excluded},
		{name: "exclude prefix is component-wise", config: Config{Exclude: []string{"docker.io/library/busy"}}, in: "busybox:1.36", target: "sea.hub:5000/library/busybox:1.36", source: "docker.io/library/busybox:1.36", action: Rewritten},
		{name: "exclude namespace", config: Config{Exclude: []string{"docker.io/bitnami"}}, in: "bitnami/redis:7.2", target: "docker.io/bitnami/redis:7.2", source: "docker.io/bitnami/redis:7.2", action: Excluded},
		{name: "exclude docker hub by bare name", config: Config{Exclude: []string{"busybox"}}, in: "docker.io/library/busybox", target: "docker.io/library/busybox", source: "docker.io/library/busybox:latest", action: Excluded},
		// An exclusion that names an official image ("library/") does not
		// also match the Docker Hub namespace of the same name.
		{name: "exclude official image spares the namespace", config: Config{Exclude: []string{"docker.io/library/busybox"}}, in: "docker.io/busybox/tool:1", target: "sea.hub:5000/busybox/tool:1", source: "docker.io/busybox/tool:1", action: Rewritten},
		{name: "exclude library/ prefix spares the namespace", config: Config{Exclude: []string{"library/busybox"}}, in: "busybox/tool:1", target: "sea.hub:5000/busybox/tool:1", source: "docker.io/busybox/tool:1", action: Rewritten},
		{name: "exclude index.docker.io official image spares the namespace", config: Config{Exclude: []string{"index.docker.io/library/busybox"}}, in: "busybox/tool:1", target: "sea.hub:5000/busybox/tool:1", source: "docker.io/busybox/tool:1", action: Rewritten},
		{name: "exclude official image still matches it", config: Config{Exclude: []string{"docker.io/library/busybox"}}, in: "busybox", target: "docker.io/library/busybox", source: "docker.io/library/busybox:latest", action: Excluded},
		// A bare name is the official image (as docker pull reads it), not
		// the namespace; with its host, one component is ambiguous and
		// matches both (docs/mapping.md).
		{name: "exclude bare name spares the namespace", config: Config{Exclude: []string{"busybox"}}, in: "busybox/tool:1", target: "sea.hub:5000/busybox/tool:1", source: "docker.io/busybox/tool:1", action: Rewritten},
		{name: "exclude docker.io/name matches the namespace too", config: Config{Exclude: []string{"docker.io/bitnami"}}, in: "bitnami/redis:7", target: "docker.io/bitnami/redis:7", source: "docker.io/bitnami/redis:7", action: Excluded},
		{name: "exclude docker.io/name matches the official image too", config: Config{Exclude: []string{"docker.io/bitnami"}}, in: "bitnami:1", target: "docker.io/library/bitnami:1", source: "docker.io/library/bitnami:1", action: Excluded},
		// Host exclusions are normalised like image hosts.
		{name: "exclude host in upper case", config: Config{Exclude: []string{"Quay.io"}}, in: "quay.io/team/app:1", target: "quay.io/team/app:1", source: "quay.io/team/app:1", action: Excluded},
		{name: "exclude host in upper case spares other hosts", config: Config{Exclude: []string{"Quay.io"}}, in: "ghcr.io/team/app:1", target: "sea.hub:5000/team/app:1", source: "ghcr.io/team/app:1", action: Rewritten},
		{name: "exclude index.docker.io matches docker hub official images", config: Config{Exclude: []string{"index.docker.io"}}, in: "nginx:1.25", target: "docker.io/library/nginx:1.25", source: "docker.io/library/nginx:1.25", action: Excluded},
		{name: "exclude index.docker.io matches docker hub namespaces", config: Config{Exclude: []string{"index.docker.io"}}, in: "docker.io/bitnami/redis:7.2", target: "docker.io/bitnami/redis:7.2", source: "docker.io/bitnami/redis:7.2", action: Excluded},
		{name: "exclude Docker.IO matches docker hub", config: Config{Exclude: []string{"Docker.IO"}}, in: "index.docker.io/library/nginx:1.25", target: "docker.io/library/nginx:1.25", source: "docker.io/library/nginx:1.25", action: Excluded},
		{name: "exclude repository prefix with upper-case host", config: Config{Exclude: []string{"Quay.io/team"}}, in: "quay.io/team/app:1", target: "quay.io/team/app:1", source: "quay.io/team/app:1", action: Excluded},
		// The target registry host is normalised: an image already under it
		// is left alone, however the registry was spelled.
		{name: "target host in upper case is normalised", config: Config{Registry: "Sea.Hub:5000/mirror"}, in: "nginx:1.25", target: "sea.hub:5000/mirror/library/nginx:1.25", source: "docker.io/library/nginx:1.25", action: Rewritten},
		{name: "already under an upper-case target", config: Config{Registry: "Sea.Hub:5000/mirror"}, in: "sea.hub:5000/mirror/library/nginx:1.25", target: "sea.hub:5000/mirror/library/nginx:1.25", source: "sea.hub:5000/mirror/library/nginx:1.25", action: InTarget},
		{name: "target index.docker.io is docker.io", config: Config{Registry: "index.docker.io/mirror"}, in: "docker.io/mirror/library/nginx:1.25", target: "docker.io/mirror/library/nginx:1.25", source: "docker.io/mirror/library/nginx:1.25", action: InTarget},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := NewMapper(tt.config)
			if err != nil {
				t.Fatal(err)
			}
			got, err := m.Map(tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if got.Action != tt.action {
				t.Errorf("action = %s, want %s", got.Action, tt.action)
			}
			if got.Action == Rewritten {
				if s := got.Target.String(); s != tt.target {
					t.Errorf("target = %s, want %s", s, tt.target)
				}
			} else if got.Target != got.Source {
				t.Errorf("unchanged image has target %v != source %v", got.Target, got.Source)
			}
			if s := got.Source.Qualified(); s != tt.source {
				t.Errorf("source = %s, want %s", s, tt.source)
			}
			// Idempotency: mapping the target again leaves it alone.
			if got.Action == Rewritten {
				again, err := m.Map(got.Target.String())
				if err != nil {
					t.Fatal(err)
				}
				if again.Action != InTarget || again.Target.String() != got.Target.String() {
					t.Errorf("remapping %s: %s %s", got.Target, again.Action, again.Target)
				}
			}
		})
	}
}

// TestNestTargetsParse: in path style nest, the target of every valid
// source host (DNS names, IPv4 and IPv6 addresses, ports) is a valid
// reference, and two different hosts never share a path component unless
// they name the same IPv6 address.
func TestNestTargetsParse(t *testing.T) {
	m, err := NewMapper(Config{PathStyle: PathStyleNest})
	if err != nil {
		t.Fatal(err)
	}
	hosts := []string{"quay.io", "localhost", "localhost:5000", "a.b:0", "registry.example.com:8443", "10.0.0.5:5000", "my-reg.io",
		"[::1]", "[::1]:5000", "[::]", "[::]:1", "[fe80::]", "[1::]", "[::ffff:1.2.3.4]", "[::1.2.3.4]:5", "[1:2:3:4:5:6:7:8]",
		"[1:2:3:4:5:6:7::]", "[2001:db8::8a2e:370:7334]:443", "[2001:DB8::1]", "[0-0--1]"}
	seen := map[string]string{}
	n := 0
	for _, h := range hosts {
		mp, err := m.Map(h + "/app:1")
		if err != nil {
			continue // not a host ("[0-0--1]")
		}
		n++
		if _, err := ParseRef(mp.Target.String()); err != nil {
			t.Errorf("%s: target %s does not parse: %v", h, mp.Target, err)
		}
		comp := strings.SplitN(mp.Target.Repository, "/", 2)[0]
		if other, ok := seen[comp]; ok {
			t.Errorf("%s and %s share the component %s", h, other, comp)
		}
		seen[comp] = h
	}
	if n < 19 {
		t.Errorf("only %d hosts mapped", n)
	}
}

func TestMapInvalid(t *testing.T) {
	m, err := NewMapper(Config{})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct{ in, want string }{
		{"", "empty image reference"},
		{"Nginx:1.25", "repository can only contain"},
		{"{{ .Values.image }}", "render the chart"},
		{"nginx:", "tag"},
		{" nginx", "white space"},
		{"nginx@sha256:abc", "digest"},
		{"a@b@c", "exactly one"},
		{"'./0", "registry host"},
		{"-bad.io/x:1", "registry host"},
		{"bad_host.io/x:1", "registry host"},
		{"library//nginx:1", "path component"},
		{"quay.io/a//b:1", "path component"},
		{"-nginx", "path component"},
		{"a..b", "path component"},
		{"quay.io/a/b/", "path component"},
		{"nginx:-x", "tag"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			_, err := m.Map(tt.in)
			var ie *InvalidReferenceError
			if !errors.As(err, &ie) {
				t.Fatalf("Map(%q) error = %v, want InvalidReferenceError", tt.in, err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q does not contain %q", err, tt.want)
			}
		})
	}
}

func TestConfigValidate(t *testing.T) {
	tests := []struct {
		name string
		c    Config
		want string
	}{
		{"scheme in registry", Config{Registry: "https://sea.hub:5000"}, "registry"},
		{"empty prefix component", Config{Registry: "sea.hub:5000//x"}, "registry"},
		{"bad path style", Config{PathStyle: "flat"}, "pathStyle"},
		{"bad kind", Config{Kind: "Other"}, "kind"},
		{"bad apiVersion", Config{APIVersion: "v1"}, "apiVersion"},
		{"empty exclusion", Config{Exclude: []string{""}}, "exclude[0]"},
		{"image field without kind", Config{ImageFields: []ImageField{{Path: "spec.image"}}}, "imageFields[0].kind"},
		{"image field bad path", Config{ImageFields: []ImageField{{Kind: "X", Path: "spec..image"}}}, "imageFields[0].path"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.c.Validate()
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Validate() = %v, want error mentioning %q", err, tt.want)
			}
		})
	}
}

func TestLoadConfig(t *testing.T) {
	c, err := LoadConfig([]byte(`apiVersion: rehost.dev/v1alpha1
kind: RewriteConfig
metadata:
  name: rehost
  annotations:
    config.kubernetes.io/function: '{exec: {path: rehost}}'
registry: sea.hub:5000
pathStyle: strip
exclude: [sea.hub:5000, docker.io/library/busybox]
imageFields:
- {group: monitoring.coreos.com, kind: Prometheus, path: spec.image}
`))
	if err != nil {
		t.Fatal(err)
	}
	if c.Registry != "sea.hub:5000" || len(c.Exclude) != 2 || len(c.ImageFields) != 1 || c.Metadata.Name != "rehost" {
		t.Errorf("unexpected config %+v", c)
	}
	_, err = LoadConfig([]byte("registry: x.io\nregistyr: y.io\n"))
	if err == nil || !strings.Contains(err.Error(), "registyr") {
		t.Errorf("unknown field: err = %v, want it named", err)
	}
}

func TestCollision(t *testing.T) {
	m, _ := NewMapper(Config{})
	var s ImageSet
	add := func(v, file string) error {
		mp, err := m.Map(v)
		if err != nil {
			t.Fatal(err)
		}
		return s.Add(Occurrence{Mapping: mp, Location: Location{File: file, Line: 3}})
	}
	if err := add("docker.io/team/app:1", "a.yaml"); err != nil {
		t.Fatal(err)
	}
	if err := add("team/app:2", "b.yaml"); err != nil {
		t.Fatalf("same source repository, other tag: %v", err)
	}
	if err := add("sea.hub:5000/team/app:1", "c.yaml"); err != nil {
		t.Fatalf("image already in target is no collision: %v", err)
	}
	err := add("quay.io/team/app:1", "d.yaml")
	var ce *CollisionError
	if !errors.As(err, &ce) {
		t.Fatalf("err = %v, want collision", err)
	}
	for _, want := range []string{"docker.io/team/app", "a.yaml:3", "quay.io/team/app", "d.yaml:3", "sea.hub:5000/team/app"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("collision error %q does not name %q", err, want)
		}
	}
	if got := s.Sources(); strings.Join(got, ",") != "docker.io/team/app:1,docker.io/team/app:2,sea.hub:5000/team/app:1" {
		t.Errorf("Sources() = %v", got)
	}
}

func TestMapRegistry(t *testing.T) {
	tests := []struct {
		cfg      Config
		in, want string
		action   Action
		narrower string
		wantErr  string
	}{
		{in: "quay.io/", want: "sea.hub:5000/", action: Rewritten},
		{in: "docker.io/", want: "sea.hub:5000/", action: Rewritten},
		{in: "docker.io/istio", want: "sea.hub:5000/istio", action: Rewritten},
		{in: "gcr.io/istio-release/", want: "sea.hub:5000/istio-release/", action: Rewritten},
		{in: "istio", want: "sea.hub:5000/istio", action: Rewritten}, // Docker Hub
		{cfg: Config{PathStyle: PathStyleNest}, in: "quay.io/", want: "sea.hub:5000/quay.io/", action: Rewritten},
		{cfg: Config{PathStyle: PathStyleNest}, in: "docker.io/istio", want: "sea.hub:5000/docker.io/istio", action: Rewritten},
		{cfg: Config{PathStyle: PathStyleNest, Registry: "harbor.local:8443/mirror"}, in: "registry.example.com:5000/x/", want: "harbor.local:8443/mirror/registry.example.com_5000/x/", action: Rewritten},
		{cfg: Config{Registry: "sea.hub:5000/apps"}, in: "quay.io/", want: "sea.hub:5000/apps/", action: Rewritten},
		{in: "sea.hub:5000/", want: "sea.hub:5000/", action: InTarget},
		{in: "sea.hub:5000/istio", want: "sea.hub:5000/istio", action: InTarget},
		{cfg: Config{Exclude: []string{"quay.io"}}, in: "quay.io/", want: "quay.io/", action: Excluded},
		{cfg: Config{Exclude: []string{"docker.io/istio"}}, in: "docker.io/istio", want: "docker.io/istio", action: Excluded},
		{cfg: Config{Exclude: []string{"docker.io/istio/pilot"}}, in: "docker.io/istio", want: "sea.hub:5000/istio", action: Rewritten, narrower: "docker.io/istio/pilot"},
		{in: "docker.io/istio:1.22", wantErr: "registry host"},
		{in: "quay.io/x@sha256:0123", wantErr: "registry host"},
		{in: "/", wantErr: "registry host"},
		{in: "Quay.io/Calico", wantErr: "invalid"},
	}
	for _, tt := range tests {
		m, err := NewMapper(tt.cfg)
		if err != nil {
			t.Fatal(err)
		}
		got, err := m.MapRegistry(tt.in)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("MapRegistry(%q) error = %v, want %q", tt.in, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got.Target != tt.want || got.Action != tt.action || strings.Join(got.Narrower, ",") != tt.narrower {
			t.Errorf("MapRegistry(%q) [%+v] = %+v, %v; want %q %s narrower %q", tt.in, tt.cfg, got, err, tt.want, tt.action, tt.narrower)
		}
		// Consistency: every image below the setting maps to the target
		// setting followed by its name.
		if err == nil && tt.action == Rewritten {
			name := "calico/node:v3.28.0"
			src := strings.TrimSuffix(tt.in, "/") + "/" + name
			mp, err := m.Map(src)
			if err != nil || mp.Target.String() != strings.TrimSuffix(got.Target, "/")+"/"+name {
				t.Errorf("Map(%q) = %v, %v; the setting %q gives %s/%s", src, mp.Target, err, got.Target, strings.TrimSuffix(got.Target, "/"), name)
			}
		}
	}
}

func TestValidateImageFieldTypes(t *testing.T) {
	tests := []struct {
		f       ImageField
		wantErr string
	}{
		{f: ImageField{Kind: "K", Path: "spec.image"}},
		{f: ImageField{Kind: "K", Path: "spec.hub", Type: FieldRegistry, Add: true, TrailingSlash: true}},
		{f: ImageField{Kind: "K", Path: "spec.image", Type: FieldSplit, Repository: "repository", Tag: "tag", Digest: "digest", Registry: "registry"}},
		{f: ImageField{Kind: "K", Path: "spec.image", Type: FieldSplit, Tag: "tag"}, wantErr: "imageFields[0].repository: required"},
		{f: ImageField{Kind: "K", Path: "spec.image", Type: FieldSplit, Repository: "a[].b"}, wantErr: "imageFields[0].repository"},
		{f: ImageField{Kind: "K", Path: "spec.image", Tag: "tag"}, wantErr: "imageFields[0].tag: only for type split"},
		{f: ImageField{Kind: "K", Path: "spec.image", Add: true}, wantErr: "imageFields[0].add"},
		{f: ImageField{Kind: "K", Path: "spec.image", Type: "hub"}, wantErr: `imageFields[0].type: got "hub"`},
	}
	for _, tt := range tests {
		err := Config{ImageFields: []ImageField{tt.f}}.Validate()
		if tt.wantErr == "" && err != nil || tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
			t.Errorf("%+v: error %v, want %q", tt.f, err, tt.wantErr)
		}
	}
}

// TestExclusions holds Exclusions to what MapRef applies: for each
// reference, the mapper excludes it exactly when the returned hosts and
// prefixes say so.
func TestExclusions(t *testing.T) {
	m, err := NewMapper(Config{Exclude: []string{"Quay.io", "index.docker.io/bitnami", "busybox", "ghcr.io/a/b/"}})
	if err != nil {
		t.Fatal(err)
	}
	hosts, repos := m.Exclusions()
	if got, want := strings.Join(hosts, ","), "quay.io"; got != want {
		t.Errorf("hosts = %s, want %s", got, want)
	}
	if got, want := strings.Join(repos, ","), "docker.io/library/bitnami,docker.io/bitnami,docker.io/library/busybox,ghcr.io/a/b"; got != want {
		t.Errorf("repos = %s, want %s", got, want)
	}
	for _, in := range []string{"quay.io/x/y:1", "bitnami/redis", "bitnami", "busybox", "busybox/x", "ghcr.io/a/b", "ghcr.io/a/b/c:1", "ghcr.io/a/bc", "nginx"} {
		mp, err := m.Map(in)
		if err != nil {
			t.Fatal(err)
		}
		name := mp.Source.RepositoryName()
		want := false
		for _, h := range hosts {
			want = want || mp.Source.Registry == h
		}
		for _, p := range repos {
			want = want || name == p || strings.HasPrefix(name, p+"/")
		}
		if got := mp.Action == Excluded; got != want {
			t.Errorf("%s: excluded = %v, Exclusions say %v", in, got, want)
		}
	}
	if m.Prefix() != "" {
		t.Errorf("Prefix() = %q", m.Prefix())
	}
}
