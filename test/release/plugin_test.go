package release

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
)

// needHelm4 returns a Helm 4 binary: HELM4, else helm4 on PATH (as
// test/e2e finds it).
func needHelm4(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("HELM4"); p != "" {
		return p
	}
	return needTool(t, "helm4")
}

// TestHelmPlugin: the plugin tarball holds the repository's plugin with
// the release version, with fixed owners and times; the real Helm 4
// installs it the documented way (helm plugin install TARBALL
// --verify=false: the tarball is covered by the signed checksums, not by a
// PGP .prov file) and lists it, and helm template --post-renderer rehost
// then runs the release's rehost binary on every document of a chart,
// hooks included.
func TestHelmPlugin(t *testing.T) {
	r := needDist(t)
	if r.plugin == "" {
		t.Fatalf("%s: no plugin tarball rehost-VERSION.tgz", r.dir)
	}
	if want := "rehost-" + versionOf(r.version) + ".tgz"; r.plugin != want {
		t.Errorf("plugin tarball %s, want %s", r.plugin, want)
	}
	raw, err := os.ReadFile(r.path(r.plugin))
	if err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	if zr.Name != "" || !zr.ModTime.IsZero() {
		t.Errorf("%s: gzip header has name %q and time %v", r.plugin, zr.Name, zr.ModTime)
	}
	tr := tar.NewReader(zr)
	got := map[string][]byte{}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Uid != 0 || h.Gid != 0 || h.Uname != "" || h.Gname != "" {
			t.Errorf("%s: %s owned by %d:%d (%q:%q)", r.plugin, h.Name, h.Uid, h.Gid, h.Uname, h.Gname)
		}
		data, _ := io.ReadAll(tr)
		got[h.Name] = data
	}
	repoYAML, err := os.ReadFile(filepath.Join(repoRoot(), "helm-plugin", "rehost", "plugin.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	wantYAML := regexp.MustCompile(`(?m)^version: .*$`).ReplaceAll(repoYAML, []byte("version: "+versionOf(r.version)))
	if !bytes.Equal(got["rehost/plugin.yaml"], wantYAML) {
		t.Errorf("%s: rehost/plugin.yaml is\n%s\nwant the repository's with the release version:\n%s", r.plugin, got["rehost/plugin.yaml"], wantYAML)
	}

	helm4 := needHelm4(t)
	home := t.TempDir()
	bin := t.TempDir()
	a, ok := r.find("rehost", runtime.GOOS+"/"+runtime.GOARCH)
	if !ok {
		t.Fatalf("%s: no rehost archive for this machine (%s/%s), which the plugin runs", r.dir, runtime.GOOS, runtime.GOARCH)
	}
	data, _, _ := extract(t, r, a)
	if err := os.WriteFile(filepath.Join(bin, "rehost"), data, 0o755); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(),
		"PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"),
		"HELM_DATA_HOME="+filepath.Join(home, "data"),
		"HELM_CONFIG_HOME="+filepath.Join(home, "config"),
		"HELM_CACHE_HOME="+filepath.Join(home, "cache"),
		"HELM_PLUGINS="+filepath.Join(home, "data", "plugins"),
	)
	run(t, env, nil, helm4, "plugin", "install", r.path(r.plugin), "--verify=false")
	list := run(t, env, nil, helm4, "plugin", "list")
	if !regexp.MustCompile(`(?m)^rehost\s+` + regexp.QuoteMeta(versionOf(r.version)) + `\s+postrenderer/v1\b`).Match(list) {
		t.Errorf("helm plugin list does not show rehost %s of type postrenderer/v1:\n%s", versionOf(r.version), list)
	}
	out := run(t, env, nil, helm4, "template", "shop", filepath.Join(repoRoot(), "testdata", "charts", "hooks"), "--kube-version", "1.33.0", "--post-renderer", "rehost")
	images := regexp.MustCompile(`(?m)^\s*(?:- )?image:\s*"?([^"\s]+)`).FindAllSubmatch(out, -1)
	if len(images) < 2 || !bytes.Contains(out, []byte("helm.sh/hook")) {
		t.Fatalf("helm template --post-renderer rehost: want a chart with hooks and images:\n%s", out)
	}
	for _, m := range images {
		if !strings.HasPrefix(string(m[1]), "sea.hub:5000/") {
			t.Errorf("helm template --post-renderer rehost left image %s", m[1])
		}
	}
}
