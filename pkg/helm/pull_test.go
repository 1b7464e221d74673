package helm

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/rehost/rehost/pkg/rewrite"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/repo"
)

// packaged packages a test chart with Package and returns the file.
func packaged(t *testing.T, name string) string {
	t.Helper()
	ch, err := loader.Load(chartPath(name))
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), name+"-"+ch.Metadata.Version+".tgz")
	if _, err := Package(chartPath(name), out); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestPackageReproducible: packaging a chart twice, or relocating it
// twice into a .tgz, gives the same bytes, which Helm's loader reads as
// the chart.
func TestPackageReproducible(t *testing.T) {
	a, b := packaged(t, "parent"), packaged(t, "parent")
	ra, _ := os.ReadFile(a)
	rb, _ := os.ReadFile(b)
	if len(ra) == 0 || !bytes.Equal(ra, rb) {
		t.Errorf("two packagings differ (%d and %d bytes)", len(ra), len(rb))
	}
	ch, err := loader.Load(a)
	if err != nil {
		t.Fatal(err)
	}
	orig, _ := loader.Load(chartPath("parent"))
	if ch.Name() != orig.Name() || len(ch.Templates) != len(orig.Templates) || len(ch.Dependencies()) != len(orig.Dependencies()) {
		t.Errorf("the packaged chart is not the chart: %s with %d templates and %d dependencies", ch.Name(), len(ch.Templates), len(ch.Dependencies()))
	}
	cfg := rewrite.Config{Exclude: []string{"docker.io/library/busybox"}}
	var relocated [][]byte
	for i := 0; i < 2; i++ {
		out := filepath.Join(t.TempDir(), "airgap.tgz")
		if _, err := Relocate(chartPath("airgap"), out, Options{}, cfg); err != nil {
			t.Fatal(err)
		}
		raw, _ := os.ReadFile(out)
		relocated = append(relocated, raw)
	}
	if !bytes.Equal(relocated[0], relocated[1]) {
		t.Error("relocating the same chart twice gives other bytes")
	}
	if _, err := Package(chartPath("parent"), filepath.Join(t.TempDir(), "parent")); err == nil {
		t.Error("Package into a directory: no error")
	}
}

// chartRepo serves a chart repository: index.yaml (helm repo index) and
// the packaged charts, each at version 0.1.0 unless renamed.
func chartRepo(t *testing.T, charts ...string) *httptest.Server {
	t.Helper()
	dir := t.TempDir()
	for _, c := range charts {
		raw, err := os.ReadFile(packaged(t, c))
		if err != nil {
			t.Fatal(err)
		}
		ch, _ := loader.Load(chartPath(c))
		if err := os.WriteFile(filepath.Join(dir, c+"-"+ch.Metadata.Version+".tgz"), raw, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	srv := httptest.NewServer(http.FileServer(http.Dir(dir)))
	t.Cleanup(srv.Close)
	idx, err := repo.IndexDirectory(dir, srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	if err := idx.WriteFile(filepath.Join(dir, "index.yaml"), 0o644); err != nil {
		t.Fatal(err)
	}
	return srv
}

// userHelmDirs points Helm's user directories at an empty temporary
// directory and returns it, to check that a pull leaves them alone.
func userHelmDirs(t *testing.T) string {
	home := t.TempDir()
	for _, v := range []string{"HELM_CACHE_HOME", "HELM_CONFIG_HOME", "HELM_DATA_HOME"} {
		t.Setenv(v, filepath.Join(home, strings.ToLower(v)))
	}
	for _, v := range []string{"HELM_REPOSITORY_CONFIG", "HELM_REPOSITORY_CACHE", "HELM_REGISTRY_CONFIG", "HELM_PLUGINS"} {
		t.Setenv(v, "")
		os.Unsetenv(v)
	}
	return home
}

func assertEmpty(t *testing.T, dir string) {
	t.Helper()
	entries, _ := os.ReadDir(dir)
	if len(entries) != 0 {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("the user's Helm directories were written: %v", names)
	}
}

// TestPullRepo: NAME (or ALIAS/NAME) with a repository URL fetches the
// chart from the repository's index, at a version or the latest; a
// missing chart or version, or a server that is not a repository, is an
// error naming the chart, the version and the repository. The user's Helm
// directories are not touched.
func TestPullRepo(t *testing.T) {
	home := userHelmDirs(t)
	srv := chartRepo(t, "hooks", "parent")
	for _, tt := range []struct {
		ref, version string
	}{
		{"hooks", "0.1.0"},
		{"hooks", ""},
		{"myrepo/hooks", "~0.1"},
	} {
		dest := t.TempDir()
		p, err := Pull(tt.ref, dest, PullOptions{RepoURL: srv.URL, Version: tt.version})
		if err != nil {
			t.Fatalf("%s %s: %v", tt.ref, tt.version, err)
		}
		want := Pulled{Ref: tt.ref, URL: srv.URL + "/hooks-0.1.0.tgz", Path: filepath.Join(dest, "hooks-0.1.0.tgz"), Name: "hooks", Version: "0.1.0"}
		if *p != want {
			t.Errorf("%s %s: %+v, want %+v", tt.ref, tt.version, *p, want)
		}
		if _, err := Render(p.Path, Options{}); err != nil {
			t.Errorf("the pulled chart does not render: %v", err)
		}
	}
	for _, tt := range []struct {
		ref, version, repo, want string
	}{
		{"hooks", "9.9.9", srv.URL, "chart hooks version 9.9.9 in repository " + srv.URL + ": no version 9.9.9 of chart hooks in " + srv.URL + " (it has 0.1.0)"},
		{"nope", "", srv.URL, "chart nope in repository " + srv.URL + ": no chart nope in " + srv.URL},
		{"hooks", "", srv.URL + "/missing", "is not a chart repository or cannot be reached"},
		{"hooks", "", "http://127.0.0.1:1", "chart hooks in repository http://127.0.0.1:1: http://127.0.0.1:1 is not a chart repository or cannot be reached"},
		{"stable/hooks", "", "", "chart stable/hooks: "},
		{"oci://127.0.0.1:1/charts/hooks", "", srv.URL, "an oci:// reference takes no repository URL"},
	} {
		_, err := Pull(tt.ref, t.TempDir(), PullOptions{RepoURL: tt.repo, Version: tt.version})
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s %s %s: error %v, want one containing %q", tt.ref, tt.version, tt.repo, err, tt.want)
		}
	}
	assertEmpty(t, home)
}

// ociRegistry is a minimal OCI distribution server holding charts as
// `helm push` stores them, enough for Helm's registry client to pull.
type ociRegistry struct {
	mu        sync.Mutex
	blobs     map[string][]byte
	manifests map[string][]byte // "repo:tag" and "repo@digest"
	tags      map[string][]string
}

func digestOf(b []byte) string {
	h := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(h[:])
}

// add stores the packaged chart file as repo:tag.
func (r *ociRegistry) add(t *testing.T, repository, tag, file string) {
	t.Helper()
	archive, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	ch, err := loader.LoadArchive(bytes.NewReader(archive))
	if err != nil {
		t.Fatal(err)
	}
	config, _ := json.Marshal(ch.Metadata)
	manifest, _ := json.Marshal(map[string]interface{}{
		"schemaVersion": 2,
		"mediaType":     "application/vnd.oci.image.manifest.v1+json",
		"config":        map[string]interface{}{"mediaType": "application/vnd.cncf.helm.config.v1+json", "digest": digestOf(config), "size": len(config)},
		"layers":        []interface{}{map[string]interface{}{"mediaType": "application/vnd.cncf.helm.chart.content.v1.tar+gzip", "digest": digestOf(archive), "size": len(archive)}},
	})
	r.mu.Lock()
	defer r.mu.Unlock()
	r.blobs[digestOf(config)], r.blobs[digestOf(archive)] = config, archive
	r.manifests[repository+":"+tag], r.manifests[repository+"@"+digestOf(manifest)] = manifest, manifest
	r.tags[repository] = append(r.tags[repository], tag)
}

func (r *ociRegistry) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	r.mu.Lock()
	defer r.mu.Unlock()
	p := strings.TrimPrefix(req.URL.Path, "/v2/")
	switch {
	case req.URL.Path == "/v2/" || req.URL.Path == "/v2":
		w.WriteHeader(http.StatusOK)
	case strings.HasSuffix(p, "/tags/list"):
		repository := strings.TrimSuffix(p, "/tags/list")
		json.NewEncoder(w).Encode(map[string]interface{}{"name": repository, "tags": r.tags[repository]})
	case strings.Contains(p, "/manifests/"):
		repository, ref, _ := strings.Cut(p, "/manifests/")
		sep := ":"
		if strings.HasPrefix(ref, "sha256:") {
			sep = "@"
		}
		m, ok := r.manifests[repository+sep+ref]
		if !ok {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprint(w, `{"errors":[{"code":"MANIFEST_UNKNOWN","message":"manifest unknown"}]}`)
			return
		}
		w.Header().Set("Content-Type", "application/vnd.oci.image.manifest.v1+json")
		w.Header().Set("Docker-Content-Digest", digestOf(m))
		w.Header().Set("Content-Length", fmt.Sprint(len(m)))
		if req.Method != http.MethodHead {
			w.Write(m)
		}
	case strings.Contains(p, "/blobs/"):
		_, d, _ := strings.Cut(p, "/blobs/")
		b, ok := r.blobs[d]
		if !ok {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Length", fmt.Sprint(len(b)))
		w.Header().Set("Docker-Content-Digest", d)
		if req.Method != http.MethodHead {
			w.Write(b)
		}
	default:
		w.WriteHeader(http.StatusNotFound)
	}
}

// TestPullOCI: oci://host/path/name with a version, a constraint or a tag
// in the reference fetches the chart from the registry (over plain HTTP
// when asked); a version the registry does not have, or a registry that
// cannot be reached, is an error naming the chart and the version.
func TestPullOCI(t *testing.T) {
	home := userHelmDirs(t)
	reg := &ociRegistry{blobs: map[string][]byte{}, manifests: map[string][]byte{}, tags: map[string][]string{}}
	reg.add(t, "charts/hooks", "0.1.0", packaged(t, "hooks"))
	srv := httptest.NewServer(reg)
	t.Cleanup(srv.Close)
	u, _ := url.Parse(srv.URL)
	base := "oci://" + u.Host + "/charts/hooks"
	for _, tt := range []struct{ ref, version string }{
		{base, "0.1.0"},
		{base, "^0.1"},
		{base, ""},
		{base + ":0.1.0", ""},
	} {
		dest := t.TempDir()
		p, err := Pull(tt.ref, dest, PullOptions{Version: tt.version, PlainHTTP: true})
		if err != nil {
			t.Fatalf("%s %s: %v", tt.ref, tt.version, err)
		}
		want := Pulled{Ref: tt.ref, URL: base + ":0.1.0", Path: filepath.Join(dest, "hooks-0.1.0.tgz"), Name: "hooks", Version: "0.1.0"}
		if *p != want {
			t.Errorf("%s %s: %+v, want %+v", tt.ref, tt.version, *p, want)
		}
	}
	for _, tt := range []struct {
		ref, version, want string
	}{
		{base, "9.9.9", "chart " + base + " version 9.9.9: "},
		{base, "^2", "chart " + base + " version ^2: "},
		{"oci://" + u.Host + "/charts/nope", "1.0.0", "chart oci://" + u.Host + "/charts/nope version 1.0.0: "},
		{"oci://127.0.0.1:1/charts/hooks", "0.1.0", "chart oci://127.0.0.1:1/charts/hooks version 0.1.0: "},
	} {
		_, err := Pull(tt.ref, t.TempDir(), PullOptions{Version: tt.version, PlainHTTP: true})
		if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
			t.Errorf("%s %s: error %v, want one starting %q", tt.ref, tt.version, err, tt.want)
		}
	}
	// Without PlainHTTP, the registry is asked over TLS, and answers none.
	if _, err := Pull(base, t.TempDir(), PullOptions{Version: "0.1.0"}); err == nil {
		t.Error("a plain-HTTP registry reached without PlainHTTP")
	}
	assertEmpty(t, home)
}
