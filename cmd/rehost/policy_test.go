package main

import (
	"path/filepath"
	"strings"
	"testing"
)

func TestPolicyCommand(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"rehost.yaml": "registry: harbor.local:8443/mirror\nexclude: [quay.io]\nrewriteEmbedded: true\nimageFields:\n- {kind: Runner, path: spec.image}\n",
		"pins.tsv":    "docker.io/library/nginx:1.25\tharbor.local:8443/mirror/library/nginx:1.25@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\n",
	})
	cfg := filepath.Join(dir, "rehost.yaml")
	pins := filepath.Join(dir, "pins.tsv")
	tests := []struct {
		args       []string
		code       int
		out, noOut []string // substrings of stdout, and strings stdout must not hold
		errOut     string
	}{
		{args: []string{"policy"}, out: []string{"apiVersion: admissionregistration.k8s.io/v1\nkind: MutatingAdmissionPolicy", "kind: MutatingAdmissionPolicyBinding", "'sea.hub:5000/' + q.repo + q.sfx", "values: [kube-system]"}, noOut: []string{"ValidatingAdmissionPolicy"}},
		{args: []string{"policy", "--config", cfg}, out: []string{"'harbor.local:8443/mirror/' + q.repo", "q.reg == 'quay.io/'", "#   rewriteEmbedded", "#   imageFields"}, errOut: "rehost: config settings imageFields, rewriteEmbedded apply at render time only"},
		{args: []string{"policy", "--config", cfg, "--registry", "sea.hub:5000", "--exclude", "ghcr.io/a"}, out: []string{"'sea.hub:5000/' + q.repo", "q.reg == 'quay.io/'", "startsWith('ghcr.io/a/')"}, errOut: "apply at render time only"},
		{args: []string{"policy", "--api-version", "admissionregistration.k8s.io/v1alpha1", "--validate", "--namespace-selector", ""}, out: []string{"apiVersion: admissionregistration.k8s.io/v1alpha1\nkind: MutatingAdmissionPolicy", "kind: ValidatingAdmissionPolicy", "validationActions: [Warn, Audit]", "namespaceSelector: {}"}, noOut: []string{"kube-system"}},
		{args: []string{"policy", "--deny", "--name", "net"}, out: []string{"name: net\n", "name: net-check", "validationActions: [Deny]"}},
		{args: []string{"policy", "--format", "kyverno", "--validate", "--path-style", "nest"}, out: []string{"kind: ClusterPolicy", "foreach:", "name: rhnest", "replace_all(regex_replace_all('[]]:'", "/{{ rhnest }}/{{ rhrepo }}{{ rhsuffix }}", "rehost-check-init-containers", "validationFailureAction: audit"}},
		{args: []string{"policy", "--pins", pins, "--config", cfg}, out: []string{"  variables:\n", "- name: pins0\n", "{'docker.io/library/nginx:1.25': 'sha256:0123", "k in variables.pins0 ? variables.pins0[k] : ''"}, errOut: "apply at render time only"},
		{args: []string{"policy", "--pins", pins, "--config", cfg, "--format", "kyverno"}, code: 1, errOut: "rehost: rehost policy: pins: not supported with --format kyverno: the Kyverno policy carries no table of pinned digests; use --format admission, or pin at render time (rehost rewrite --pins)\n"},
		{args: []string{"policy", "--pins", pins}, code: 1, errOut: "pins: invalid image reference \"docker.io/library/nginx:1.25\": pinned to harbor.local:8443/mirror/library/nginx:1.25@sha256"},
		{args: []string{"policy", "--format", "opa"}, code: 1, errOut: `format: got "opa"`},
		{args: []string{"policy", "--format", "kyverno", "--api-version", "admissionregistration.k8s.io/v1"}, code: 1, errOut: "rehost: rehost policy: api-version: only for --format admission\n"},
		{args: []string{"policy", "--api-version", "v2"}, code: 1, errOut: `api-version: got "v2"`},
		{args: []string{"policy", "--namespace-selector", "a in (b"}, code: 1, errOut: "namespace selector"},
		{args: []string{"policy", "--registry", "https://x"}, code: 1, errOut: "registry"},
		{args: []string{"policy", "extra"}, code: 1, errOut: "unknown command"},
	}
	for _, tt := range tests {
		out, errOut, code := rehost(t, "", tt.args...)
		if code != tt.code {
			t.Errorf("%v: code %d, want %d (stderr %s)", tt.args, code, tt.code, errOut)
			continue
		}
		for _, s := range tt.out {
			if !strings.Contains(out, s) {
				t.Errorf("%v: stdout does not hold %q", tt.args, s)
			}
		}
		for _, s := range tt.noOut {
			if strings.Contains(out, s) {
				t.Errorf("%v: stdout holds %q", tt.args, s)
			}
		}
		if tt.errOut == "" && errOut != "" || !strings.Contains(errOut, tt.errOut) {
			t.Errorf("%v: stderr %q, want %q", tt.args, errOut, tt.errOut)
		}
		if tt.code != 0 && out != "" {
			t.Errorf("%v: failed but wrote %d bytes", tt.args, len(out))
		}
	}
}
