package e2e

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// helm4WithPlugin installs rehost's post-renderer plugin (helm-plugin/rehost)
// into private Helm directories, as a user would with `helm plugin install`,
// and returns Helm 4's path and the environment that uses those directories.
func helm4WithPlugin(t *testing.T) (string, []string) {
	t.Helper()
	helm4 := needHelm4(t)
	home := t.TempDir()
	env := append(os.Environ(),
		"HELM_DATA_HOME="+filepath.Join(home, "data"),
		"HELM_CONFIG_HOME="+filepath.Join(home, "config"),
		"HELM_CACHE_HOME="+filepath.Join(home, "cache"),
		"HELM_PLUGINS="+filepath.Join(home, "data", "plugins"),
	)
	runEnv(t, env, nil, helm4, "plugin", "install", filepath.Join(repoRoot(), "helm-plugin", "rehost"))
	if out := runEnv(t, env, nil, helm4, "plugin", "list"); !bytes.Contains(out, []byte("postrenderer/v1")) {
		t.Fatalf("helm plugin list:\n%s", out)
	}
	return helm4, env
}

// runEnv runs a command with env and returns its stdout; it fails the test,
// showing stderr, when the command fails.
func runEnv(t *testing.T, env []string, stdin []byte, name string, args ...string) []byte {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Env = env
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %v: %v\nstderr:\n%s", name, args, err, e.Bytes())
	}
	return o.Bytes()
}

// notInTarget returns the image values of a stream that are not in the
// target registry, as rehost images -o json reports them.
func notInTarget(t *testing.T, stream []byte, registry string) []string {
	t.Helper()
	out := run(t, stream, rehostBin(), "images", "-o", "json", "--registry", registry)
	var imgs []struct{ Source, Action string }
	if err := imagesOf(out, &imgs); err != nil {
		t.Fatal(err)
	}
	var bad []string
	for _, img := range imgs {
		if img.Action != "in-target" {
			bad = append(bad, img.Source)
		}
	}
	return bad
}

// TestHelm4PostRendererPlugin: with the plugin installed, Helm 4's
// `--post-renderer rehost` rewrites every image a chart installs, hooks
// (a pre-install Job, a test Pod) included, and gives document for document
// what `rehost rewrite` gives on Helm 4's plain `helm template` output;
// --post-renderer-args reach rehost.
func TestHelm4PostRendererPlugin(t *testing.T) {
	helm4, env := helm4WithPlugin(t)
	tests := []struct {
		chart string
		flags []string
	}{
		{"hooks", nil},
		{"parent", []string{"--set", "sub-c.enabled=true"}},
		{"withcrd", nil},
		{"multidoc", []string{"--set", "image=nginx:1.25"}},
		{"annotations", []string{"--set", "extra.enabled=true"}},
	}
	for _, tt := range tests {
		t.Run(tt.chart, func(t *testing.T) {
			common := append([]string{"template", "shop", testChart(tt.chart), "--include-crds", "--kube-version", chartKube}, tt.flags...)
			plain := runEnv(t, env, nil, helm4, common...)
			post := runEnv(t, env, nil, helm4, append(common, "--post-renderer", "rehost")...)
			want := run(t, plain, rehostBin(), "rewrite")
			gotDocs, gotHooks := helmDocs(t, post)
			wantDocs, wantHooks := helmDocs(t, want)
			if !slices.Equal(gotDocs, wantDocs) || !slices.Equal(gotHooks, wantHooks) {
				t.Errorf("helm template --post-renderer rehost:\n%s\nwant (helm template | rehost rewrite):\n%s", post, want)
			}
			if bad := notInTarget(t, post, "sea.hub:5000"); len(bad) > 0 {
				t.Errorf("images not rewritten: %v\n%s", bad, post)
			}
			if tt.chart == "hooks" && !bytes.Contains(post, []byte("helm.sh/hook")) {
				t.Errorf("no hook in the output:\n%s", post)
			}

			args := runEnv(t, env, nil, helm4, append(common, "--post-renderer", "rehost", "--post-renderer-args", "--registry=harbor.local/mirror")...)
			if bad := notInTarget(t, args, "harbor.local/mirror"); len(bad) > 0 {
				t.Errorf("--post-renderer-args --registry=harbor.local/mirror: not rewritten: %v", bad)
			}
		})
	}
}

// TestHelm4InstallDryRun: `helm install --dry-run=client` through the
// plugin prints the release with every image rewritten, hooks included.
func TestHelm4InstallDryRun(t *testing.T) {
	helm4, env := helm4WithPlugin(t)
	out := runEnv(t, env, nil, helm4, "install", "shop", testChart("hooks"), "--dry-run=client", "--post-renderer", "rehost")
	var images []string
	for _, line := range strings.Split(string(out), "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "image: "); ok {
			images = append(images, v)
		}
	}
	if len(images) < 3 || !bytes.Contains(out, []byte("HOOKS:")) {
		t.Fatalf("helm install --dry-run=client: want the manifest and its hooks, got:\n%s", out)
	}
	for _, img := range images {
		if !strings.HasPrefix(img, "sea.hub:5000/") {
			t.Errorf("image %s not rewritten:\n%s", img, out)
		}
	}
}

// TestHelm4RendersAsRehost: rehost renders charts with Helm 3's library;
// Helm 4's helm template gives the same documents in the same order for
// the same Kubernetes version (it only ends each document with a blank
// line, and defaults to another Kubernetes version: see docs/helm.md).
func TestHelm4RendersAsRehost(t *testing.T) {
	helm4 := needHelm4(t)
	for chart, set := range map[string]string{"hooks": "", "parent": "sub-c.enabled=true", "withcrd": "", "multidoc": "image=nginx:1.25", "annotations": "extra.enabled=true"} {
		t.Run(chart, func(t *testing.T) {
			flags := []string{"--include-crds", "--kube-version", chartKube}
			if set != "" {
				flags = append(flags, "--set", set)
			}
			plain := run(t, nil, helm4, append([]string{"template", "shop", testChart(chart)}, flags...)...)
			want := run(t, plain, rehostBin(), "rewrite")
			got := run(t, nil, rehostBin(), append([]string{"rewrite", testChart(chart), "--release-name", "shop"}, flags...)...)
			gotDocs, gotHooks := helmDocs(t, got)
			wantDocs, wantHooks := helmDocs(t, want)
			if !slices.Equal(gotDocs, wantDocs) || !slices.Equal(gotHooks, wantHooks) {
				t.Errorf("rehost rewrite CHART:\n%s\nwant (Helm 4 helm template | rehost rewrite):\n%s", got, want)
			}
		})
	}
}
