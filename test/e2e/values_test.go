package e2e

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// helmBinaries returns the Helm 3 and Helm 4 binaries, by major version.
// Each test runs with both; a missing one skips (or fails in CI).
func helmBinaries(t *testing.T) map[string]string {
	t.Helper()
	return map[string]string{"helm3": needTool(t, "helm"), "helm4": needHelm4(t)}
}

// runHelm runs a helm binary with private cache, config and data
// directories, never the user's.
func runHelm(t *testing.T, helm string, args ...string) []byte {
	t.Helper()
	home := t.TempDir()
	cmd := exec.Command(helm, args...)
	cmd.Env = append(os.Environ(),
		"HELM_CACHE_HOME="+filepath.Join(home, "cache"),
		"HELM_CONFIG_HOME="+filepath.Join(home, "config"),
		"HELM_DATA_HOME="+filepath.Join(home, "data"))
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %v: %v\nstderr:\n%s", helm, args, err, e.String())
	}
	return o.Bytes()
}

// sameDocs compares two rendered streams document by document, hooks
// included, as parsed YAML (comments and layout aside).
func sameDocs(t *testing.T, what string, got, want []byte) {
	t.Helper()
	gotDocs, gotHooks := helmDocs(t, got)
	wantDocs, wantHooks := helmDocs(t, want)
	if len(wantHooks) == 0 || len(wantDocs) == 0 {
		t.Fatalf("want hooks and ordinary documents, got %d and %d", len(wantHooks), len(wantDocs))
	}
	if !reflect.DeepEqual(gotDocs, wantDocs) {
		t.Errorf("%s: documents:\n%s\nwant (rehost rewrite):\n%s", what, strings.Join(gotDocs, "\n"), strings.Join(wantDocs, "\n"))
	}
	if !reflect.DeepEqual(gotHooks, wantHooks) {
		t.Errorf("%s: hooks:\n%s\nwant (rehost rewrite):\n%s", what, strings.Join(gotHooks, "\n"), strings.Join(wantHooks, "\n"))
	}
}

// TestValuesOverlayIsRewrite: `helm template CHART -f user.yaml -f
// overlay.yaml` equals `rehost rewrite CHART -f user.yaml` on every
// document, hooks and subcharts included, with Helm 3 and Helm 4.
func TestValuesOverlayIsRewrite(t *testing.T) {
	helms := helmBinaries(t)
	chart := testChart("airgap")
	user := writeTemp(t, "web: {image: \"nginx:1.27\"}\ncache: {image: {tag: 7.4.0}}\njobs: {schedule: \"@daily\"}\n")
	for _, tt := range []struct {
		name    string
		mapping []string
	}{
		{"default", []string{"--exclude", "docker.io/library/busybox"}},
		{"nest", []string{"--exclude", "docker.io/library/busybox", "--registry", "harbor.local:8443/mirror", "--path-style", "nest"}},
		{"exclusions", []string{"--exclude", "docker.io/library/busybox", "--exclude", "quay.io", "--exclude", "docker.io/bitnami"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			render := []string{"--kube-version", chartKube, "-f", user, "-n", "shop"}
			overlay := run(t, nil, rehostBin(), append(append([]string{"values", chart}, render...), tt.mapping...)...)
			overlayFile := filepath.Join(t.TempDir(), "airgap-values.yaml")
			if err := os.WriteFile(overlayFile, overlay, 0o644); err != nil {
				t.Fatal(err)
			}
			want := run(t, nil, rehostBin(), append(append([]string{"rewrite", chart}, render...), tt.mapping...)...)
			for name, helm := range helms {
				got := runHelm(t, helm, append(append([]string{"template", chart, "--include-crds"}, render...), "-f", overlayFile)...)
				sameDocs(t, name+" template -f overlay", got, want)
				if name == "helm3" && !bytes.Equal(got, want) {
					t.Errorf("helm template -f overlay is not byte for byte rehost rewrite:\n%s\nwant:\n%s", got, want)
				}
			}
		})
	}
}

// TestValuesPartial: the image hard-coded in a template is reported with
// its template file and line, the exit status is 3 (0 with
// --allow-partial), and the overlay moves every other image.
func TestValuesPartial(t *testing.T) {
	helm := needTool(t, "helm")
	chart := testChart("airgap")
	out, errOut, err := runErr(nil, rehostBin(), "values", chart, "--kube-version", chartKube)
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 3 {
		t.Fatalf("exit %v, want 3; stderr:\n%s", err, errOut)
	}
	if !bytes.Contains(errOut, []byte("airgap/templates/web.yaml:18: Deployment release-name-web: spec.template.spec.initContainers[0].image: busybox:1.36")) {
		t.Errorf("stderr does not report busybox with its template line:\n%s", errOut)
	}
	if _, errOut, err := runErr(nil, rehostBin(), "values", chart, "--allow-partial", "--kube-version", chartKube); err != nil {
		t.Fatalf("--allow-partial: %v\n%s", err, errOut)
	}
	overlayFile := filepath.Join(t.TempDir(), "airgap-values.yaml")
	if err := os.WriteFile(overlayFile, out, 0o644); err != nil {
		t.Fatal(err)
	}
	got := runHelm(t, helm, "template", chart, "--kube-version", chartKube, "-f", overlayFile)
	want := run(t, nil, rehostBin(), "rewrite", chart, "--kube-version", chartKube)
	want = bytes.ReplaceAll(want, []byte("sea.hub:5000/library/busybox:1.36"), []byte("busybox:1.36"))
	if !bytes.Equal(got, want) {
		t.Errorf("helm template -f overlay:\n%s\nwant (rehost rewrite, busybox left):\n%s", got, want)
	}
}

// TestRelocate: the relocated chart, packaged or as a directory, passes
// helm lint and renders as rehost rewrite renders the original, with Helm 3
// and Helm 4; its values files keep their comments.
func TestRelocate(t *testing.T) {
	helms := helmBinaries(t)
	chart := testChart("airgap")
	for _, output := range []string{"airgap-airgap.tgz", "airgap-dir"} {
		t.Run(output, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), output)
			run(t, nil, rehostBin(), "relocate", chart, "--output", out, "--exclude", "docker.io/library/busybox", "--kube-version", chartKube)
			want := run(t, nil, rehostBin(), "rewrite", chart, "--exclude", "docker.io/library/busybox", "--kube-version", chartKube)
			for name, helm := range helms {
				runHelm(t, helm, "lint", out, "--kube-version", chartKube)
				got := runHelm(t, helm, "template", out, "--include-crds", "--kube-version", chartKube)
				sameDocs(t, name+" template relocated", got, want)
				show := string(runHelm(t, helm, "show", "values", out))
				for _, keep := range []string{"# Values of the airgap test chart.", "image: sea.hub:5000/library/nginx:1.25   # the web server", "imageRegistry: \"sea.hub:5000\""} {
					if !strings.Contains(show, keep) {
						t.Errorf("%s show values: no %q:\n%s", name, keep, show)
					}
				}
				chartYAML := string(runHelm(t, helm, "show", "chart", out))
				if !strings.Contains(chartYAML, "image: sea.hub:5000/acme/operand:3.1") {
					t.Errorf("%s show chart: the helm.sh/images annotation is not relocated:\n%s", name, chartYAML)
				}
			}
		})
	}
}

// TestValuesNamedAndOperator: keys that also feed a named reference (an
// *_IMAGE env value) and an operator's registry setting that rehost
// rewrite adds: `helm template -f overlay` still equals rehost rewrite,
// with Helm 3 and Helm 4.
func TestValuesNamedAndOperator(t *testing.T) {
	helms := helmBinaries(t)
	for _, tt := range []struct {
		chart   string
		mapping []string
	}{
		{"airgap-labels", []string{"--exclude", "quay.io/prometheus/statsd-exporter"}}, // its key also feeds an annotation
		{"airgap-operator", nil},
		{"airgap-bitnami", nil}, // a library chart's helper, global.imageRegistry, NOTES that check the images
	} {
		t.Run(tt.chart, func(t *testing.T) {
			chart := testChart(tt.chart)
			overlay := run(t, nil, rehostBin(), append([]string{"values", chart, "--kube-version", chartKube}, tt.mapping...)...)
			overlayFile := filepath.Join(t.TempDir(), "airgap-values.yaml")
			if err := os.WriteFile(overlayFile, overlay, 0o644); err != nil {
				t.Fatal(err)
			}
			want := run(t, nil, rehostBin(), append([]string{"rewrite", chart, "--kube-version", chartKube}, tt.mapping...)...)
			for name, helm := range helms {
				got := runHelm(t, helm, "template", chart, "--kube-version", chartKube, "-f", overlayFile)
				gotDocs, _ := helmDocs(t, got)
				wantDocs, _ := helmDocs(t, want)
				if !reflect.DeepEqual(gotDocs, wantDocs) {
					t.Errorf("%s template -f overlay:\n%s\nwant (rehost rewrite):\n%s", name, strings.Join(gotDocs, "\n"), strings.Join(wantDocs, "\n"))
				}
			}
		})
	}
}

// TestIPv6Target (issue 29, item 1): an IPv6 target registry through the
// commands that write YAML with the real Helm and the KRM function binary:
// the values overlay and the relocated chart of a chart that quotes its
// images parse, and render with Helm 3 and Helm 4 what rehost rewrite
// gives, document by document; rehost fn gives what rehost rewrite gives.
// A chart that writes its images unquoted cannot take an IPv6 registry
// from values: the images are reported, saying why.
func TestIPv6Target(t *testing.T) {
	helms := helmBinaries(t)
	const reg = "[fd00::5]:5000"
	chart := testChart("airgap-absent")
	render := []string{"--kube-version", chartKube, "--registry", reg}
	want, _ := helmDocs(t, run(t, nil, rehostBin(), append([]string{"rewrite", chart}, render...)...))
	if len(want) == 0 || !strings.Contains(strings.Join(want, ""), reg+"/library/nginx:1.25") {
		t.Fatalf("rehost rewrite: %q", want)
	}
	overlay := run(t, nil, rehostBin(), append([]string{"values", chart}, render...)...)
	var values map[string]any
	if err := yaml.Unmarshal(overlay, &values); err != nil || values["global"].(map[string]any)["imageRegistry"] != reg {
		t.Fatalf("the overlay does not read back (%v):\n%s", err, overlay)
	}
	overlayFile := writeTemp(t, string(overlay))
	relocated := filepath.Join(t.TempDir(), "relocated")
	run(t, nil, rehostBin(), append([]string{"relocate", chart, "--output", relocated}, render...)...)
	for name, helm := range helms {
		got, _ := helmDocs(t, runHelm(t, helm, "template", chart, "--kube-version", chartKube, "-f", overlayFile))
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s template -f overlay:\n%s\nwant:\n%s", name, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		got, _ = helmDocs(t, runHelm(t, helm, "template", relocated, "--kube-version", chartKube))
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s template relocated:\n%s\nwant:\n%s", name, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}

	stream := []byte("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: a\n    image: nginx\n  - {name: b, image: redis:7}\n" +
		"---\napiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: a}\nspec:\n  source: {repoURL: https://charts.example.com, chart: x, targetRevision: 1.0.0}\n")
	config := writeTemp(t, "apiVersion: rehost.dev/v1alpha1\nkind: RewriteConfig\nregistry: '"+reg+"'\n")
	fnOut := run(t, nil, fnBin(), config, writeTemp(t, string(stream)))
	rwOut := run(t, stream, rehostBin(), "rewrite", "--registry", reg)
	gotFn, _ := helmDocs(t, fnOut)
	wantFn, _ := helmDocs(t, rwOut)
	if len(wantFn) != 2 || !reflect.DeepEqual(gotFn, wantFn) || !strings.Contains(string(rwOut), "    image: '"+reg+"/library/nginx'\n") || !strings.Contains(string(rwOut), "{repoURL: '"+reg+"/charts',") {
		t.Errorf("rehost fn:\n%s\nrehost rewrite:\n%s", fnOut, rwOut)
	}

	_, errOut, err := runErr(nil, rehostBin(), "values", testChart("airgap-operator"), "--kube-version", chartKube, "--registry", reg)
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 3 || !bytes.Contains(errOut, []byte("the chart writes the value without quotes")) {
		t.Errorf("values of a chart writing its images unquoted: %v\n%s", err, errOut)
	}
}
