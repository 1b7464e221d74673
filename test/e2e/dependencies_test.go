package e2e

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// TestChartDependencies: the parent chart without its charts/ directory,
// its dependencies in a chart repository indexed by helm repo index and
// in an OCI registry (the real registry), is listed and rewritten by
// images and rewrite as the same chart vendored by helm dependency build,
// its directory byte for byte unchanged; mirror --charts as-is pushes it
// with its dependencies vendored; --no-fetch-dependencies fails as
// before, and a repository serving HTML is an error naming the chart, the
// dependency, its version and its repository.
func TestChartDependencies(t *testing.T) {
	helm := needTool(t, "helm")
	reg := startRegistry(t)
	env := helmEnv(t)

	// sub-a and sub-b in a chart repository, sub-c in the registry.
	repoDir := t.TempDir()
	for _, sub := range []string{"sub-a", "sub-b", "sub-c"} {
		runEnv(t, env, nil, helm, "package", filepath.Join(testChart("parent"), "charts", sub), "--destination", repoDir)
	}
	runEnv(t, env, nil, helm, "push", filepath.Join(repoDir, "sub-c-0.1.0.tgz"), "oci://"+reg+"/deps", "--plain-http")
	os.Remove(filepath.Join(repoDir, "sub-c-0.1.0.tgz"))
	srv := httptest.NewServer(http.FileServer(http.Dir(repoDir)))
	t.Cleanup(srv.Close)
	runEnv(t, env, nil, helm, "repo", "index", repoDir, "--url", srv.URL)

	repos := map[string]string{"sub-a": srv.URL, "sub-b": srv.URL, "sub-c": "oci://" + reg + "/deps"}
	chart := depsChart(t, repos)
	vendored := depsChart(t, repos)
	runEnv(t, env, nil, helm, "dependency", "build", vendored, "--plain-http")
	if _, err := os.Stat(filepath.Join(vendored, "charts", "sub-c-0.1.0.tgz")); err != nil {
		t.Fatalf("helm dependency build: %v", err)
	}
	before := treeSum(t, chart)

	common := []string{"--registry", "sea.hub:5000", "--kube-version", chartKube, "--plain-http", "--set", "sub-c.enabled=true"}
	wantImages := run(t, nil, rehostBin(), append([]string{"images", vendored}, common...)...)
	out, errOut, err := runErr(nil, rehostBin(), append([]string{"images", chart}, common...)...)
	if err != nil || !bytes.Equal(out, wantImages) || len(wantImages) == 0 {
		t.Errorf("images of the unvendored chart (%v):\n%s\nwant (helm dependency build):\n%s\nstderr:\n%s", err, out, wantImages, errOut)
	}
	for _, want := range []string{
		"rehost: chart " + chart + ": fetched dependency sub-a 0.1.0 from " + srv.URL + ", by its constraint 0.1.0",
		"rehost: chart " + chart + ": fetched dependency sub-c 0.1.0 from oci://" + reg + "/deps, by its constraint 0.1.0",
	} {
		if !strings.Contains(string(errOut), want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
	wantRewrite := run(t, nil, rehostBin(), append([]string{"rewrite", vendored}, common...)...)
	if got := run(t, nil, rehostBin(), append([]string{"rewrite", chart}, common...)...); !bytes.Equal(got, wantRewrite) {
		t.Errorf("rewrite of the unvendored chart:\n%s\nwant (helm dependency build):\n%s", got, wantRewrite)
	}
	if after := treeSum(t, chart); after != before {
		t.Errorf("the chart's directory changed: %s, was %s", after, before)
	}

	// mirror --charts as-is pushes the chart with its dependencies (as
	// helm package writes them, expanded under charts/); the
	// images are left where they are (--exclude), so that nothing but the
	// chart is copied.
	var exclude []string
	for _, l := range strings.Fields(string(wantImages)) {
		exclude = append(exclude, "--exclude", strings.SplitN(l, "/", 2)[0])
	}
	args := append([]string{"--charts", "as-is", "--registry", reg, "--insecure", "--kube-version", chartKube, "--plain-http", chart}, exclude...)
	mustMirror(t, args...)
	pulled := t.TempDir()
	runEnv(t, env, nil, helm, "pull", "oci://"+reg+"/charts/parent", "--version", "0.1.0", "--plain-http", "--destination", pulled)
	files := tgzNames(t, filepath.Join(pulled, "parent-0.1.0.tgz"))
	for _, want := range []string{"parent/charts/sub-a/Chart.yaml", "parent/charts/sub-b/Chart.yaml", "parent/charts/sub-c/Chart.yaml", "parent/Chart.yaml"} {
		if !files[want] {
			t.Errorf("the pushed chart lacks %s", want)
		}
	}
	if after := treeSum(t, chart); after != before {
		t.Errorf("mirror changed the chart's directory")
	}

	// --no-fetch-dependencies: today's error.
	_, errOut, err = runErr(nil, rehostBin(), "images", chart, "--no-fetch-dependencies")
	if err == nil || !strings.Contains(string(errOut), "sub-a, sub-b, sub-c") || !strings.Contains(string(errOut), "helm dependency build") {
		t.Errorf("--no-fetch-dependencies: %v\n%s", err, errOut)
	}

	// A repository serving HTML.
	html := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, "<!doctype html><html><body>Sign in</body></html>")
	}))
	t.Cleanup(html.Close)
	bad := depsChart(t, map[string]string{"sub-a": html.URL, "sub-b": srv.URL, "sub-c": srv.URL})
	badBefore := treeSum(t, bad)
	out, errOut, err = runErr(nil, rehostBin(), "images", bad)
	want := "chart " + bad + ": dependency sub-a version 0.1.0 from " + html.URL + ": " + html.URL + " is not a chart repository"
	if err == nil || len(out) != 0 || !strings.Contains(string(errOut), want) {
		t.Errorf("a repository serving HTML: %v, stdout %q, stderr:\n%s\nwant %q", err, out, errOut, want)
	}
	if treeSum(t, bad) != badBefore {
		t.Error("a failed fetch changed the chart's directory")
	}
}

// depsChart writes the parent chart without its charts/ directory, each
// dependency's repository set, and returns its directory.
func depsChart(t *testing.T, repos map[string]string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "parent")
	src := testChart("parent")
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if rel == "charts" {
			return filepath.SkipDir
		}
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dir, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dir, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(filepath.Join(dir, "Chart.yaml"))
	var lines []string
	dep := ""
	for _, l := range strings.Split(string(raw), "\n") {
		lines = append(lines, l)
		if n, ok := strings.CutPrefix(l, "- name: "); ok {
			dep = n
			lines = append(lines, "  repository: "+repos[dep])
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "Chart.yaml"), []byte(strings.Join(lines, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// treeSum hashes every path, mode and content under dir.
func treeSum(t *testing.T, dir string) string {
	t.Helper()
	var paths []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		paths = append(paths, p)
		return nil
	})
	sort.Strings(paths)
	h := sha256.New()
	for _, p := range paths {
		st, err := os.Lstat(p)
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(h, p+"\x00"+st.Mode().String()+"\x00")
		if st.Mode().IsRegular() {
			b, _ := os.ReadFile(p)
			h.Write(b)
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}

// tgzNames lists the files of a packaged chart.
func tgzNames(t *testing.T, file string) map[string]bool {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	names := map[string]bool{}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return names
		}
		if err != nil {
			t.Fatal(err)
		}
		names[h.Name] = true
	}
}
