package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestMirrorSourceMirrorPlan: a dry run shows where each image would be
// read from (no request with --attachments none: none of these hosts
// exists); names stay the sources'; --source-mirror replaces the config
// file's mirror of the same prefix, longest prefix first.
func TestMirrorSourceMirrorPlan(t *testing.T) {
	dir := writeFiles(t, map[string]string{"rehost.yaml": `sourceMirrors:
- {prefix: docker.io, mirror: old.corp/dockerhub}
- {prefix: quay.io, mirror: mirror.corp:5000/q}
`})
	in := "nginx:1.25\nquay.io/jetstack/cert-manager-controller:v1.15.0\nquay.io/prometheus/prometheus:v2\nghcr.io/x/y:1\n"
	out, errOut, code := rehost(t, in, "mirror", "--image-list", "-", "--config", filepath.Join(dir, "rehost.yaml"), "--dry-run", "--attachments", "none", "--progress", "plain",
		"--source-mirror", "docker.io=mirror.corp:5000/dockerhub", "--source-mirror", "quay.io/jetstack=jetstack.corp")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	want := "would copy docker.io/library/nginx:1.25 -> sea.hub:5000/library/nginx:1.25 from mirror.corp:5000/dockerhub/library/nginx:1.25\n" +
		"would copy ghcr.io/x/y:1 -> sea.hub:5000/x/y:1\n" +
		"would copy quay.io/jetstack/cert-manager-controller:v1.15.0 -> sea.hub:5000/jetstack/cert-manager-controller:v1.15.0 from jetstack.corp/cert-manager-controller:v1.15.0\n" +
		"would copy quay.io/prometheus/prometheus:v2 -> sea.hub:5000/prometheus/prometheus:v2 from mirror.corp:5000/q/prometheus/prometheus:v2\n"
	if out != want {
		t.Errorf("plan:\n%s\nwant:\n%s", out, want)
	}
	// The pins name the sources, not the mirrors (a dry run with --pin
	// asks the mirror, which does not exist here: the failure names it).
	_, errOut, code = rehost(t, "nginx:1.25\n", "mirror", "--image-list", "-", "--dry-run", "--pin", "--progress", "plain", "--stall-timeout", "2s",
		"--source-mirror", "docker.io=127.0.0.1:1/dockerhub")
	if code != 1 || !strings.Contains(errOut, "docker.io/library/nginx:1.25 -> sea.hub:5000/library/nginx:1.25 from 127.0.0.1:1/dockerhub/library/nginx:1.25: ") {
		t.Errorf("pin through an unreachable mirror: exit %d, stderr %s", code, errOut)
	}
}

// TestMirrorSourceMirrorBadInput: a --source-mirror without "=", with a
// scheme, or mapping a prefix twice, and a config file doing so, are
// errors naming the flag or the file's line; nothing is asked.
func TestMirrorSourceMirrorBadInput(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"twice.yaml":  "sourceMirrors:\n- {prefix: docker.io, mirror: a.corp}\n- {prefix: Index.Docker.IO, mirror: b.corp}\n",
		"scheme.yaml": "registry: sea.hub:5000\nsourceMirrors:\n- prefix: docker.io\n  mirror: https://a.corp\n",
	})
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--source-mirror", "docker.io"}, `--source-mirror docker.io: want PREFIX=MIRROR, like docker.io=mirror.corp:5000/dockerhub`},
		{[]string{"--source-mirror", "https://docker.io=mirror.corp"}, `--source-mirror https://docker.io=mirror.corp: prefix "https://docker.io": want a registry host or host/path without a scheme`},
		{[]string{"--source-mirror", "docker.io=https://mirror.corp/dockerhub"}, `--source-mirror docker.io=https://mirror.corp/dockerhub: mirror "https://mirror.corp/dockerhub": want host[:port][/path] without a scheme`},
		{[]string{"--source-mirror", "nginx=mirror.corp"}, `--source-mirror nginx=mirror.corp: prefix "nginx": "nginx" is not a registry host`},
		{[]string{"--source-mirror", "docker.io=a.corp", "--source-mirror", "index.docker.io=b.corp"}, `--source-mirror index.docker.io=b.corp: docker.io is mapped twice (--source-mirror docker.io=a.corp)`},
		{[]string{"--config", filepath.Join(dir, "twice.yaml")}, filepath.Join(dir, "twice.yaml") + `: config: line 3: sourceMirrors[1].prefix: docker.io is mapped twice (sourceMirrors[0] maps it too)`},
		{[]string{"--config", filepath.Join(dir, "scheme.yaml")}, filepath.Join(dir, "scheme.yaml") + `: config: line 4: sourceMirrors[0].mirror: "https://a.corp": want host[:port][/path] without a scheme`},
		{[]string{"--source-mirror-only"}, `--source-mirror-only: no source mirror given`},
	} {
		out, errOut, code := rehost(t, "nginx:1.25\n", append([]string{"mirror", "--image-list", "-", "--dry-run", "--attachments", "none"}, c.args...)...)
		if code == 0 || out != "" || !strings.Contains(errOut, c.want) {
			t.Errorf("rehost mirror %v: exit %d, stdout %q, stderr %q; want an error containing %q", c.args, code, out, errOut, c.want)
		}
	}
	_, errOut, code := rehost(t, "", "mirror", "--from-oci", t.TempDir(), "--source-mirror", "docker.io=a.corp")
	if code == 0 || strings.Count(errOut, "\n") != 1 || !hasFacts(errOut, "--from-oci", "--source-mirror") {
		t.Errorf("--from-oci --source-mirror: exit %d, %s", code, errOut)
	}
	help, _, _ := rehost(t, "", "mirror", "--help")
	for _, want := range []string{"--source-mirror PREFIX=MIRROR", "--source-mirror-only", "docker.io=mirror.corp:5000/dockerhub"} {
		if !strings.Contains(help, want) {
			t.Errorf("mirror --help does not mention %q", want)
		}
	}
}
