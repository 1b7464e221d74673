package e2e

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// gitopsObjects are Flux and Argo CD objects whose chart sources are on the
// internet: a Flux HelmRepository with the HelmRelease that names its
// chart, a Flux OCIRepository of the chart, an Argo CD Application.
const gitopsObjects = `apiVersion: source.toolkit.fluxcd.io/v1
kind: HelmRepository
metadata: {name: charts, namespace: flux-system}
spec:
  interval: 10m
  url: https://charts.example.com/stable
---
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: airgap, namespace: apps}
spec:
  interval: 10m
  chart:
    spec:
      chart: airgap
      version: 0.3.0
      sourceRef: {kind: HelmRepository, name: charts, namespace: flux-system}
---
apiVersion: source.toolkit.fluxcd.io/v1
kind: OCIRepository
metadata: {name: airgap-chart, namespace: apps}
spec:
  interval: 10m
  layerSelector:
    mediaType: application/vnd.cncf.helm.chart.content.v1.tar+gzip
    operation: copy
  url: oci://ghcr.io/example/charts/airgap
  ref: {tag: 0.3.0}
---
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: airgap, namespace: argocd}
spec:
  project: default
  source:
    repoURL: https://charts.example.com/stable
    chart: airgap
    targetRevision: 0.3.0
  destination: {server: https://kubernetes.default.svc, namespace: apps}
`

// TestGitOpsSourcesPullFromTarget pushes a chart to a real registry where
// rehost mirror puts charts (<registry>/charts/NAME:VERSION, here with
// helm push), rewrites Flux and Argo CD objects for that registry, and
// pulls the chart with helm by the reference each controller composes from
// the rewritten objects: Flux, an OCI HelmRepository's URL/CHART:VERSION
// and an OCIRepository's URL:TAG; Argo CD, oci://REPOURL/CHART at
// targetRevision (util/helm PullOCI). Rewriting the output again changes
// nothing.
func TestGitOpsSourcesPullFromTarget(t *testing.T) {
	helm := needTool(t, "helm")
	reg := startRegistry(t)
	dir := t.TempDir()
	env := append(os.Environ(), "HELM_CONFIG_HOME="+filepath.Join(dir, "config"), "HELM_CACHE_HOME="+filepath.Join(dir, "cache"), "HELM_DATA_HOME="+filepath.Join(dir, "data"))
	helmRun := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(helm, args...)
		cmd.Env = env
		var o, e bytes.Buffer
		cmd.Stdout, cmd.Stderr = &o, &e
		if err := cmd.Run(); err != nil {
			t.Fatalf("helm %s: %v\n%s", strings.Join(args, " "), err, e.String())
		}
		return o.String()
	}
	helmRun("package", filepath.Join(repoRoot(), "testdata", "charts", "airgap"), "-d", dir)
	helmRun("push", filepath.Join(dir, "airgap-0.3.0.tgz"), "oci://"+reg+"/charts", "--plain-http")

	out := run(t, []byte(gitopsObjects), rehostBin(), "rewrite", "--registry", reg)
	if again := run(t, out, rehostBin(), "rewrite", "--registry", reg); !bytes.Equal(again, out) {
		t.Errorf("rewriting the output again changed it:\n%s", again)
	}
	docs := map[string]map[string]any{}
	dec := yaml.NewDecoder(bytes.NewReader(out))
	for {
		var d map[string]any
		if err := dec.Decode(&d); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		docs[d["kind"].(string)] = d
	}
	spec := func(kind string) map[string]any { return docs[kind]["spec"].(map[string]any) }

	repo := spec("HelmRepository")
	if repo["type"] != "oci" || repo["url"] != "oci://"+reg+"/charts" {
		t.Fatalf("HelmRepository spec: %v", repo)
	}
	chart := spec("HelmRelease")["chart"].(map[string]any)["spec"].(map[string]any)
	oci := spec("OCIRepository")
	src := spec("Application")["source"].(map[string]any)
	for what, ref := range map[string][2]string{
		"Flux HelmRepository + HelmRelease": {repo["url"].(string) + "/" + chart["chart"].(string), chart["version"].(string)},
		"Flux OCIRepository":                {oci["url"].(string), oci["ref"].(map[string]any)["tag"].(string)},
		"Argo CD Application":               {"oci://" + src["repoURL"].(string) + "/" + src["chart"].(string), src["targetRevision"].(string)},
	} {
		dest := filepath.Join(dir, strings.NewReplacer(" ", "-", "+", "and").Replace(what))
		if err := os.MkdirAll(dest, 0o755); err != nil {
			t.Fatal(err)
		}
		helmRun("pull", ref[0], "--version", ref[1], "--plain-http", "-d", dest)
		if _, err := os.Stat(filepath.Join(dest, "airgap-0.3.0.tgz")); err != nil {
			t.Errorf("%s: helm pull %s --version %s: %v", what, ref[0], ref[1], err)
		}
	}
}
