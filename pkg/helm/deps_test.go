package helm

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/rehost/rehost/pkg/rewrite"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/cli"
	"helm.sh/helm/v3/pkg/cli/values"
	"helm.sh/helm/v3/pkg/repo"
)

// subchart packages testdata/charts/parent/charts/NAME (at version, when
// not empty, renamed to name when not empty) into dir.
func subchart(t *testing.T, dir, sub, name, version string) string {
	t.Helper()
	ch, err := loader.Load(filepath.Join(chartPath("parent"), "charts", sub))
	if err != nil {
		t.Fatal(err)
	}
	if name != "" {
		ch.Metadata.Name = name
	}
	if version != "" {
		ch.Metadata.Version = version
	}
	src := filepath.Join(t.TempDir(), ch.Name())
	if err := copyTree(filepath.Join(chartPath("parent"), "charts", sub), src); err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(filepath.Join(src, "Chart.yaml"))
	text := strings.Replace(string(raw), "name: "+sub, "name: "+ch.Name(), 1)
	text = strings.Replace(text, "version: 0.1.0", "version: "+ch.Metadata.Version, 1)
	os.WriteFile(filepath.Join(src, "Chart.yaml"), []byte(text), 0o644)
	out := filepath.Join(dir, sub+"-"+ch.Metadata.Version+".tgz")
	if _, err := Package(src, out); err != nil {
		t.Fatal(err)
	}
	return out
}

// depRepo serves a chart repository (helm repo index) of sub-a and sub-b
// at 0.1.0 and 0.2.0, and sub-c at 0.1.0.
func depRepo(t *testing.T) (*httptest.Server, string) {
	t.Helper()
	dir := t.TempDir()
	for _, v := range []string{"0.1.0", "0.2.0"} {
		subchart(t, dir, "sub-a", "", v)
		subchart(t, dir, "sub-b", "", v)
	}
	subchart(t, dir, "sub-c", "", "")
	srv := httptest.NewServer(http.FileServer(http.Dir(dir)))
	t.Cleanup(srv.Close)
	idx, err := repo.IndexDirectory(dir, srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	if err := idx.WriteFile(filepath.Join(dir, "index.yaml"), 0o644); err != nil {
		t.Fatal(err)
	}
	return srv, dir
}

// unvendored writes the parent chart without its charts/ directory, its
// dependencies' repository set to repos[name] (and the version to
// versions[name] when set), and returns its directory.
func unvendored(t *testing.T, repos, versions map[string]string, lock string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "parent")
	if err := copyTree(chartPath("parent"), dir); err != nil {
		t.Fatal(err)
	}
	os.RemoveAll(filepath.Join(dir, "charts"))
	raw, _ := os.ReadFile(filepath.Join(dir, "Chart.yaml"))
	var out []string
	dep := ""
	for _, l := range strings.Split(string(raw), "\n") {
		if n, ok := strings.CutPrefix(l, "- name: "); ok {
			dep = n
		}
		if dep != "" && strings.HasPrefix(l, "  version: ") {
			if v := versions[dep]; v != "" {
				l = "  version: " + strconv.Quote(v)
			}
			out = append(out, l, "  repository: "+strconv.Quote(repos[dep]))
			continue
		}
		out = append(out, l)
	}
	os.WriteFile(filepath.Join(dir, "Chart.yaml"), []byte(strings.Join(out, "\n")), 0o644)
	if lock != "" {
		os.WriteFile(filepath.Join(dir, "Chart.lock"), []byte(lock), 0o644)
	}
	return dir
}

// treeHash hashes every file's path, mode and content under dir.
func treeHash(t *testing.T, dir string) string {
	t.Helper()
	h := sha256.New()
	var paths []string
	filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		paths = append(paths, p)
		return nil
	})
	sort.Strings(paths)
	for _, p := range paths {
		st, _ := os.Lstat(p)
		h.Write([]byte(p + st.Mode().String() + "\x00"))
		if st.Mode().IsRegular() {
			b, _ := os.ReadFile(p)
			h.Write(b)
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}

func renderedText(t *testing.T, path string, opts Options) []string {
	t.Helper()
	c, err := Render(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	var docs []string
	for _, m := range c.Manifests {
		docs = append(docs, m.Name+"\n"+m.Content)
	}
	return docs
}

// TestFetchDependenciesHTTP: a chart whose dependencies are in a chart
// repository, not vendored, renders as the same chart vendored once they
// are fetched; the chart's directory is unchanged; the lock decides the
// version when it is in step, the constraint otherwise.
func TestFetchDependenciesHTTP(t *testing.T) {
	home := userHelmDirs(t)
	srv, _ := depRepo(t)
	repos := map[string]string{"sub-a": srv.URL, "sub-b": srv.URL + "/", "sub-c": srv.URL}
	chart := unvendored(t, repos, map[string]string{"sub-a": "^0.1.0"}, "")
	before := treeHash(t, chart)

	if _, err := Render(chart, Options{}); !errors.Is(err, ErrMissingDependencies) {
		t.Fatalf("rendering the unvendored chart: %v, want ErrMissingDependencies", err)
	}
	work := t.TempDir()
	got, fetched, err := FetchDependencies(context.Background(), chart, work, DependencyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(got, work) {
		t.Errorf("the chart with dependencies is %s, not under %s", got, work)
	}
	var versions []string
	for _, f := range fetched {
		versions = append(versions, f.Name+"@"+f.Fetched)
	}
	if want := []string{"sub-a@0.1.0", "sub-b@0.1.0", "sub-c@0.1.0"}; !reflect.DeepEqual(versions, want) {
		t.Errorf("fetched %v, want %v", versions, want)
	}
	opts := Options{Values: valuesOpts("sub-c.enabled=true")}
	if a, b := renderedText(t, got, opts), renderedText(t, chartPath("parent"), opts); !reflect.DeepEqual(a, b) {
		t.Errorf("the chart with fetched dependencies renders\n%s\nthe vendored one\n%s", strings.Join(a, "\n---\n"), strings.Join(b, "\n---\n"))
	}
	if after := treeHash(t, chart); after != before {
		t.Error("the chart's directory changed")
	}
	// Nothing missing: the chart itself, nothing fetched.
	if p, f, err := FetchDependencies(context.Background(), chartPath("parent"), t.TempDir(), DependencyOptions{}); err != nil || p != chartPath("parent") || f != nil {
		t.Errorf("a vendored chart: %s %v %v", p, f, err)
	}

	// A lock in step pins sub-a at 0.2.0, which ^0.1.0 does not allow:
	// helm dependency build takes the lock's version without checking
	// it; rehost checks the served chart against the constraint, so
	// constrain sub-a to >=0.1.0.
	loose := unvendored(t, repos, map[string]string{"sub-a": ">=0.1.0", "sub-b": ">=0.1.0"}, "")
	first, fetched, err := FetchDependencies(context.Background(), loose, t.TempDir(), DependencyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if fetched[0].Fetched != "0.2.0" || fetched[0].Locked {
		t.Errorf("without a lock: %+v, want sub-a 0.2.0 by its constraint", fetched[0])
	}
	// Helm's own lock of that chart, edited to 0.1.0 with its digest
	// recomputed: in step.
	_ = first
	lockText := lockFor(t, loose, map[string]string{"sub-a": "0.1.0", "sub-b": "0.1.0", "sub-c": "0.1.0"})
	locked := unvendored(t, repos, map[string]string{"sub-a": ">=0.1.0", "sub-b": ">=0.1.0"}, lockText)
	_, fetched, err = FetchDependencies(context.Background(), locked, t.TempDir(), DependencyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if fetched[0].Fetched != "0.1.0" || !fetched[0].Locked {
		t.Errorf("with a lock in step: %+v, want sub-a 0.1.0 of the lock", fetched[0])
	}
	// Out of step (the digest of another Chart.yaml): the constraints.
	stale := unvendored(t, repos, map[string]string{"sub-a": ">=0.1.0", "sub-b": ">=0.1.0"}, strings.Replace(lockText, "digest: sha256:", "digest: sha256:00", 1))
	_, fetched, err = FetchDependencies(context.Background(), stale, t.TempDir(), DependencyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if fetched[0].Fetched != "0.2.0" || fetched[0].Locked {
		t.Errorf("with a lock out of step: %+v, want sub-a 0.2.0 by its constraint", fetched[0])
	}
	assertEmpty(t, home)
}

// lockFor is the Chart.lock of chart (whose dependencies are URLs) with
// the versions given, in step.
func lockFor(t *testing.T, chart string, versions map[string]string) string {
	t.Helper()
	ch, err := loader.Load(chart)
	if err != nil {
		t.Fatal(err)
	}
	f := &depFetcher{repos: repo.NewFile()}
	var text strings.Builder
	text.WriteString("dependencies:\n")
	var lock []string
	for _, d := range ch.Metadata.Dependencies {
		lock = append(lock, d.Name)
		text.WriteString("- name: " + d.Name + "\n  repository: " + strconv.Quote(d.Repository) + "\n  version: " + versions[d.Name] + "\n")
	}
	_ = lock
	// The digest as Helm computes it, found by checking candidates.
	ch.Lock = nil
	body := text.String()
	tmp := t.TempDir()
	os.WriteFile(filepath.Join(tmp, "Chart.lock"), []byte(body+"digest: x\ngenerated: \"2026-01-01T00:00:00Z\"\n"), 0o644)
	parsed, err := loader.Load(withLock(t, chart, filepath.Join(tmp, "Chart.lock")))
	if err != nil {
		t.Fatal(err)
	}
	digest := f.digest(parsed)
	return body + "digest: " + digest + "\ngenerated: \"2026-01-01T00:00:00Z\"\n"
}

// withLock copies chart with the lock file given.
func withLock(t *testing.T, chart, lock string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "c")
	if err := copyTree(chart, dir); err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(lock)
	os.WriteFile(filepath.Join(dir, "Chart.lock"), raw, 0o644)
	return dir
}

// TestFetchDependenciesOCI: dependencies in an OCI registry, and through
// a source mirror.
func TestFetchDependenciesOCI(t *testing.T) {
	home := userHelmDirs(t)
	// The registry of TestPullOCI; test/e2e runs the same against the
	// real registry binary.
	reg := &ociRegistry{blobs: map[string][]byte{}, manifests: map[string][]byte{}, tags: map[string][]string{}}
	dir := t.TempDir()
	reg.add(t, "charts/sub-a", "0.1.0", subchart(t, dir, "sub-a", "", ""))
	reg.add(t, "charts/sub-b", "0.1.0", subchart(t, dir, "sub-b", "", ""))
	reg.add(t, "mirror/charts/sub-c", "0.1.0", subchart(t, dir, "sub-c", "", ""))
	srv := httptest.NewServer(reg)
	t.Cleanup(srv.Close)
	u, _ := url.Parse(srv.URL)
	oci := "oci://" + u.Host + "/charts"
	chart := unvendored(t, map[string]string{"sub-a": oci, "sub-b": oci, "sub-c": "oci://charts.example/charts"}, nil, "")
	before := treeHash(t, chart)
	mirrors, err := rewrite.NewSourceMirrors([]rewrite.SourceMirror{{Prefix: "charts.example", Mirror: u.Host + "/mirror"}})
	if err != nil {
		t.Fatal(err)
	}
	got, fetched, err := FetchDependencies(context.Background(), chart, t.TempDir(), DependencyOptions{PlainHTTP: true, SourceMirrors: mirrors})
	if err != nil {
		t.Fatal(err)
	}
	if f := fetched[2]; f.From != "oci://"+u.Host+"/mirror/charts" || f.Repository != "oci://charts.example/charts" {
		t.Errorf("sub-c: %+v, want it read from the mirror", f)
	}
	opts := Options{Values: valuesOpts("sub-c.enabled=true")}
	if a, b := renderedText(t, got, opts), renderedText(t, chartPath("parent"), opts); !reflect.DeepEqual(a, b) {
		t.Errorf("the chart with fetched dependencies renders otherwise than the vendored one")
	}
	if after := treeHash(t, chart); after != before {
		t.Error("the chart's directory changed")
	}
	assertEmpty(t, home)
}

// TestFetchDependenciesBad: a repository that serves HTML, a chart of
// another name, a version the constraint refuses, a repository that
// cannot be reached, a name without a repositories file: errors naming
// the chart, the dependency, its version and its repository; the chart's
// directory is unchanged.
func TestFetchDependenciesBad(t *testing.T) {
	userHelmDirs(t)
	html := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Write([]byte("<!doctype html><html><body>Sign in</body></html>"))
	}))
	t.Cleanup(html.Close)

	// A repository whose index says sub-a but serves sub-b's chart.
	dir := t.TempDir()
	subchart(t, dir, "sub-a", "sub-b", "")
	other := httptest.NewServer(http.FileServer(http.Dir(dir)))
	t.Cleanup(other.Close)
	idx := repo.NewIndexFile()
	idx.MustAdd(mustMetadata(t, "sub-a", "0.1.0"), "sub-a-0.1.0.tgz", other.URL, "sha256:0")
	idx.WriteFile(filepath.Join(dir, "index.yaml"), 0o644)

	// A repository whose index lists a file that is not a chart.
	junkDir := t.TempDir()
	os.WriteFile(filepath.Join(junkDir, "sub-a-0.1.0.tgz"), []byte("<html>not a chart</html>"), 0o644)
	junk := httptest.NewServer(http.FileServer(http.Dir(junkDir)))
	t.Cleanup(junk.Close)
	junkIdx := repo.NewIndexFile()
	junkIdx.MustAdd(mustMetadata(t, "sub-a", "0.1.0"), "sub-a-0.1.0.tgz", junk.URL, "sha256:0")
	junkIdx.WriteFile(filepath.Join(junkDir, "index.yaml"), 0o644)

	srv, _ := depRepo(t)
	for _, tt := range []struct {
		name    string
		repo    string
		version string
		want    string
	}{
		{"html", html.URL, "", "dependency sub-a version 0.1.0 from " + html.URL + ": " + html.URL + " is not a chart repository"},
		{"other name", other.URL, "", "dependency sub-a version 0.1.0 from " + other.URL + ": it served chart sub-b 0.1.0, not sub-a"},
		{"junk", junk.URL, "", "dependency sub-a version 0.1.0 from " + junk.URL + ": what it served is not a chart"},
		{"no such version", srv.URL, "9.9.9", "dependency sub-a version 9.9.9 from " + srv.URL + ": "},
		{"unreachable", "http://127.0.0.1:1/charts", "", "dependency sub-a version 0.1.0 from http://127.0.0.1:1/charts: "},
		{"name", "@stable", "", "dependency sub-a version 0.1.0 from @stable: the repository is a name of the Helm repositories file, and none is read"},
		{"no URL", "stable", "", "dependency sub-a version 0.1.0 from stable: the repository is not a URL"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			chart := unvendored(t, map[string]string{"sub-a": tt.repo, "sub-b": srv.URL, "sub-c": srv.URL}, map[string]string{"sub-a": tt.version}, "")
			before := treeHash(t, chart)
			work := t.TempDir()
			_, _, err := FetchDependencies(context.Background(), chart, work, DependencyOptions{StallTimeout: -1})
			var de *DependencyError
			if !errors.As(err, &de) || !strings.HasPrefix(err.Error(), "chart "+chart+": "+tt.want) {
				t.Fatalf("error %v, want a DependencyError starting %q", err, "chart "+chart+": "+tt.want)
			}
			if treeHash(t, chart) != before {
				t.Error("the chart's directory changed")
			}
			if entries, _ := os.ReadDir(work); len(entries) != 0 {
				t.Errorf("a failed fetch left %d entries in its directory", len(entries))
			}
		})
	}
}

// TestFetchDependenciesBounds: the index and each dependency are bounded.
func TestFetchDependenciesBounds(t *testing.T) {
	userHelmDirs(t)
	srv, _ := depRepo(t)
	repos := map[string]string{"sub-a": srv.URL, "sub-b": srv.URL, "sub-c": srv.URL}
	chart := unvendored(t, repos, nil, "")
	var tooLarge *TooLargeError
	_, _, err := FetchDependencies(context.Background(), chart, t.TempDir(), DependencyOptions{MaxIndexSize: 100})
	if !errors.As(err, &tooLarge) || !tooLarge.Index || !strings.Contains(err.Error(), "dependency sub-a version 0.1.0 from "+srv.URL) {
		t.Errorf("a 100-byte index limit: %v", err)
	}
	_, _, err = FetchDependencies(context.Background(), chart, t.TempDir(), DependencyOptions{MaxChartSize: 100})
	if !errors.As(err, &tooLarge) || tooLarge.Index {
		t.Errorf("a 100-byte chart limit: %v", err)
	}
}

func valuesOpts(set ...string) values.Options { return values.Options{Values: set} }

func mustMetadata(t *testing.T, name, version string) *chart.Metadata {
	t.Helper()
	return &chart.Metadata{APIVersion: chart.APIVersionV2, Name: name, Version: version}
}

// TestFetchDependenciesCredentials: credentials in a dependency's
// repository URL go to the repository's origin, not to where its index
// sends the chart, and no message shows them.
func TestFetchDependenciesCredentials(t *testing.T) {
	userHelmDirs(t)
	dir := t.TempDir()
	subchart(t, dir, "sub-a", "", "")
	var leaked []string
	charts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "" {
			leaked = append(leaked, r.URL.Path)
		}
		http.FileServer(http.Dir(dir)).ServeHTTP(w, r)
	}))
	t.Cleanup(charts.Close)
	idx := repo.NewIndexFile()
	idx.MustAdd(mustMetadata(t, "sub-a", "0.1.0"), "sub-a-0.1.0.tgz", charts.URL, "sha256:0")
	index := filepath.Join(t.TempDir(), "index.yaml")
	idx.WriteFile(index, 0o644)
	authed := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u, p, ok := r.BasicAuth(); !ok || u != "user" || p != "s3cret" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		http.ServeFile(w, r, index)
	}))
	t.Cleanup(authed.Close)
	withAuth := strings.Replace(authed.URL, "http://", "http://user:s3cret@", 1)
	srv, _ := depRepo(t)
	chart := unvendored(t, map[string]string{"sub-a": withAuth, "sub-b": srv.URL, "sub-c": srv.URL}, nil, "")
	_, fetched, err := FetchDependencies(context.Background(), chart, t.TempDir(), DependencyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(leaked) > 0 {
		t.Errorf("the repository's credentials went to another origin: %v", leaked)
	}
	if fetched[0].Repository != strings.Replace(authed.URL, "http://", "http://[redacted]@", 1) && strings.Contains(fetched[0].Repository, "s3cret") {
		t.Errorf("the fetched dependency shows the credentials: %+v", fetched[0])
	}
	wrong := unvendored(t, map[string]string{"sub-a": strings.Replace(withAuth, "s3cret", "wr0ng", 1), "sub-b": srv.URL, "sub-c": srv.URL}, nil, "")
	_, _, err = FetchDependencies(context.Background(), wrong, t.TempDir(), DependencyOptions{})
	if err == nil || strings.Contains(err.Error(), "wr0ng") || !strings.Contains(err.Error(), "dependency sub-a version 0.1.0 from ") {
		t.Errorf("refused credentials: %v", err)
	}
}

// TestFetchDependenciesNamesAndPaths: "@name" and "alias:name" resolve in
// the user's repositories file (Settings), and file:// paths relative to
// the chart directory, not to its copy.
func TestFetchDependenciesNamesAndPaths(t *testing.T) {
	home := userHelmDirs(t)
	srv, _ := depRepo(t)
	settings := cli.New()
	rf := repo.NewFile()
	rf.Update(&repo.Entry{Name: "mine", URL: srv.URL})
	if err := os.MkdirAll(filepath.Dir(settings.RepositoryConfig), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := rf.WriteFile(settings.RepositoryConfig, 0o644); err != nil {
		t.Fatal(err)
	}
	chart := unvendored(t, map[string]string{"sub-a": "@mine", "sub-b": "alias:mine", "sub-c": "file://../sub-c"}, nil, "")
	if err := copyTree(filepath.Join(chartPath("parent"), "charts", "sub-c"), filepath.Join(filepath.Dir(chart), "sub-c")); err != nil {
		t.Fatal(err)
	}
	before := treeHash(t, filepath.Dir(chart))
	got, fetched, err := FetchDependencies(context.Background(), chart, t.TempDir(), DependencyOptions{Settings: settings})
	if err != nil {
		t.Fatal(err)
	}
	if fetched[0].From != srv.URL || fetched[1].From != srv.URL || fetched[2].Fetched != "0.1.0" {
		t.Errorf("fetched %+v", fetched)
	}
	opts := Options{Values: valuesOpts("sub-c.enabled=true")}
	if a, b := renderedText(t, got, opts), renderedText(t, chartPath("parent"), opts); !reflect.DeepEqual(a, b) {
		t.Errorf("the chart with fetched dependencies renders otherwise than the vendored one")
	}
	if treeHash(t, filepath.Dir(chart)) != before {
		t.Error("the chart's directory changed")
	}
	// Only the repositories file was read: the cache is the run's own.
	if entries, _ := os.ReadDir(filepath.Join(home, "helm_cache_home")); len(entries) != 0 {
		t.Errorf("the user's Helm cache was written: %v", entries)
	}
}

// TestPullSourceMirrors: an oci:// reference, a repository URL and the URL
// of a packaged chart that a source mirror covers are fetched from the
// mirror, without the original's credentials.
func TestPullSourceMirrors(t *testing.T) {
	home := userHelmDirs(t)
	reg := &ociRegistry{blobs: map[string][]byte{}, manifests: map[string][]byte{}, tags: map[string][]string{}}
	reg.add(t, "proxy/charts/hooks", "0.1.0", packaged(t, "hooks"))
	ociSrv := httptest.NewServer(reg)
	t.Cleanup(ociSrv.Close)
	ociHost := strings.TrimPrefix(ociSrv.URL, "http://")
	var auth []string
	repoSrv := chartRepo(t, "hooks")
	spy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "" {
			auth = append(auth, r.URL.Path)
		}
		http.Redirect(w, r, repoSrv.URL+r.URL.Path, http.StatusFound)
	}))
	t.Cleanup(spy.Close)
	mirrors, err := rewrite.NewSourceMirrors([]rewrite.SourceMirror{
		{Prefix: "registry.example/charts", Mirror: ociHost + "/proxy/charts"},
		{Prefix: "charts.example", Mirror: strings.TrimPrefix(spy.URL, "http://")},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		ref  string
		o    PullOptions
		want string
	}{
		{"oci://registry.example/charts/hooks", PullOptions{Version: "0.1.0", PlainHTTP: true}, "oci://" + ociHost + "/proxy/charts/hooks:0.1.0"},
		{"oci://registry.example/charts/hooks:0.1.0", PullOptions{PlainHTTP: true}, "oci://" + ociHost + "/proxy/charts/hooks:0.1.0"},
		{"hooks", PullOptions{RepoURL: "http://user:pw@charts.example"}, repoSrv.URL + "/hooks-0.1.0.tgz"},
		{"http://user:pw@charts.example/hooks-0.1.0.tgz", PullOptions{}, spy.URL + "/hooks-0.1.0.tgz"},
	} {
		tt.o.SourceMirrors = mirrors
		p, err := Pull(tt.ref, t.TempDir(), tt.o)
		if err != nil {
			t.Errorf("%s: %v", tt.ref, err)
			continue
		}
		if p.URL != tt.want || p.Name != "hooks" {
			t.Errorf("%s: %+v, want it from %s", tt.ref, p, tt.want)
		}
	}
	if len(auth) > 0 {
		t.Errorf("credentials sent: %v", auth)
	}
	assertEmpty(t, home)
}
