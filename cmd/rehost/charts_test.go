package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rehost/rehost/pkg/mirror"
)

// TestChartReference: which arguments name a chart to fetch. A local path
// is a path first, as with Helm; REPO/NAME is a reference only with the
// user's Helm configuration, where repositories have names.
func TestChartReference(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "charts", "shop"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	for _, tt := range []struct {
		arg        string
		repo       string
		userConfig bool
		want       bool
	}{
		{arg: "oci://ghcr.io/x/shop", want: true},
		{arg: "https://charts.example/shop-1.0.0.tgz", want: true},
		{arg: "http://127.0.0.1:8080/shop-1.0.0.tgz", want: true},
		{arg: "-"},
		{arg: "charts/shop"}, // exists
		{arg: "charts/shop", repo: "https://charts.example"}, // exists: still a path
		{arg: "shop", repo: "https://charts.example", want: true},
		{arg: "myrepo/shop", repo: "https://charts.example", want: true},
		{arg: "./shop", repo: "https://charts.example"},
		{arg: "/abs/shop", repo: "https://charts.example"},
		{arg: "stable/shop"}, // a missing path, without the user's repositories
		{arg: "stable/shop", userConfig: true, want: true},
		{arg: "a/b/shop", userConfig: true},
		{arg: "./stable/shop", userConfig: true},
		{arg: "shop", userConfig: true},
	} {
		c := &chartSource{repo: tt.repo, userConfig: tt.userConfig}
		if got := c.isRef(tt.arg); got != tt.want {
			t.Errorf("isRef(%q) with repo %q, user config %t = %t, want %t", tt.arg, tt.repo, tt.userConfig, got, tt.want)
		}
	}
}

// TestChartReferenceHelper: a reference is fetched by rehost-helm pull
// with the chart source flags; its error is rehost-helm's, which names
// the chart, after "fetching"; a plain-HTTP registry gets a hint.
func TestChartReferenceHelper(t *testing.T) {
	helperErr := `chart oci://127.0.0.1:5000/charts/shop version 1.2.0: Get "https://127.0.0.1:5000/v2/": http: server gave HTTP response to HTTPS client`
	record := fakeHelper(t, helperErr, 1, `{"format":1,"plainHTTP":true}`)
	_, errOut, code := rehost(t, "", "images", "oci://127.0.0.1:5000/charts/shop", "--version", "1.2.0", "--helm-user-config")
	// One line: rehost-helm's error as it gave it, after "fetching", then
	// the hint's flag.
	if code != 1 || strings.Count(errOut, "\n") != 1 || !hasFacts(errOut, "rehost: fetching "+helperErr, "--plain-http") {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
	args, _ := os.ReadFile(record)
	lines := strings.Split(string(args), "\n")
	if len(lines) < 9 || lines[0] != "pull" || !strings.HasPrefix(lines[1], "--dest=") || strings.Join(lines[2:9], " ") != "--max-chart-size=67108864 --max-index-size=33554432 --stall-timeout=2m0s --version=1.2.0 --helm-user-config -- oci://127.0.0.1:5000/charts/shop" {
		t.Errorf("rehost-helm arguments:\n%s", args)
	}

	// The limits, as given.
	record = fakeHelper(t, "chart shop: boom", 1)
	rehost(t, "", "images", "oci://127.0.0.1:5000/charts/shop", "--max-chart-size", "1GiB", "--max-index-size", "10MB", "--stall-timeout", "5s")
	args, _ = os.ReadFile(record)
	if !strings.Contains(string(args), "\n--max-chart-size=1073741824\n--max-index-size=10000000\n--stall-timeout=5s\n") {
		t.Errorf("rehost-helm arguments:\n%s", args)
	}
	for _, bad := range [][]string{{"--max-chart-size", "lots"}, {"--stall-timeout", "0s"}} {
		_, errOut, code := rehost(t, "", append([]string{"images", "oci://127.0.0.1:5000/charts/shop"}, bad...)...)
		if code != 1 || !strings.Contains(errOut, bad[0]) {
			t.Errorf("%q: exit %d, stderr %q", bad, code, errOut)
		}
	}

	record = fakeHelper(t, "chart shop in repository http://charts.example: no chart shop in http://charts.example", 1)
	_, errOut, code = rehost(t, "", "values", "shop", "--repo", "http://charts.example", "--plain-http")
	if code != 1 || strings.Count(errOut, "\n") != 1 || !hasFacts(errOut, "rehost: fetching chart shop in repository http://charts.example: no chart shop in http://charts.example") {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
	args, _ = os.ReadFile(record)
	if !strings.Contains(string(args), "--repo=http://charts.example\n--plain-http\n--\nshop\n") {
		t.Errorf("rehost-helm arguments:\n%s", args)
	}
}

// TestChartSourceFlagsWithoutReference: the chart reference flags warn
// when no input is a reference.
func TestChartSourceFlagsWithoutReference(t *testing.T) {
	_, errOut, code := rehost(t, "image: nginx:1\n", "images", "--version", "1.0.0", "--plain-http")
	if code != 0 || !hasFacts(errOut, "rehost: warning: ", "--version, --plain-http", "chart references") {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
}

func TestMirrorChartsFlags(t *testing.T) {
	_, errOut, code := rehost(t, "nginx:1\n", "mirror", "--image-list", "-", "--dry-run", "--charts", "relocate")
	if code == 0 || !strings.Contains(errOut, "--charts relocate: want relocated, as-is or none") {
		t.Errorf("--charts relocate: exit %d, stderr %q", code, errOut)
	}
	_, errOut, code = rehost(t, "", "mirror", "--from-oci", t.TempDir(), "--charts", "none")
	if code == 0 || strings.Count(errOut, "\n") != 1 || !hasFacts(errOut, "--from-oci", "--charts") {
		t.Errorf("--from-oci --charts: exit %d, stderr %q", code, errOut)
	}
	_, errOut, code = rehost(t, "nginx:1\n", "mirror", "--image-list", "-", "--dry-run", "--charts-path", "Helm")
	if code == 0 || !strings.Contains(errOut, `--charts-path: "Helm"`) {
		t.Errorf("--charts-path Helm: exit %d, stderr %q", code, errOut)
	}
	help, _, _ := rehost(t, "", "mirror", "--help")
	for _, want := range []string{"--charts string", "--charts-path", "--allow-partial", "<registry>/<charts-path>/<name>:<version>", "--repo", "--version"} {
		if !strings.Contains(help, want) {
			t.Errorf("mirror --help does not mention %q", want)
		}
	}
	if strings.Contains(help, "--no-chart-sources") {
		t.Error("mirror --help offers --no-chart-sources, which mirror does not use")
	}
}

// TestMirrorChartFailures: failed charts are counted and listed apart from
// images, each named as a chart.
func TestMirrorChartFailures(t *testing.T) {
	boom := errors.New("403 Forbidden")
	s := mirror.Summary{
		Results: []mirror.Result{
			{Job: mirror.Job{Source: "docker.io/library/nginx:1", Target: "r/library/nginx:1"}, Destination: "r/library/nginx:1", Status: mirror.Copied},
			{Job: mirror.Job{Source: "charts/shop", Target: "r/charts/shop:1.2.0", Chart: &mirror.Chart{Name: "shop", Version: "1.2.0"}}, Destination: "r/charts/shop:1.2.0", Status: mirror.Failed, Err: boom},
		},
		Copied: 1,
		Charts: mirror.Counts{Failed: 1},
	}
	want := "mirror: 1 of 1 charts failed:\n  chart charts/shop -> r/charts/shop:1.2.0: 403 Forbidden"
	if got := failures(s).Error(); got != want {
		t.Errorf("failures:\n%s\nwant:\n%s", got, want)
	}
	s.Results[0].Status, s.Results[0].Err, s.Copied, s.Failed = mirror.Failed, boom, 0, 1
	if got := failures(s).Error(); !strings.HasPrefix(got, "mirror: 1 of 1 images and 1 of 1 charts failed:\n  docker.io/library/nginx:1 -> r/library/nginx:1: 403 Forbidden\n  chart charts/shop") {
		t.Errorf("failures:\n%s", got)
	}
}

// scriptHelper puts on PATH a rehost-helm that runs the shell script body.
func scriptHelper(t *testing.T, body string) {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, helmHelper), []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
}

// TestHelperCrash: a helper that crashes (a Go runtime's crash dump and
// status 2, a kill by a signal) is told in one line, with the line of its
// standard error that says why; a helper that fails says so in its own
// words (status 1), cut when it writes megabytes.
func TestHelperCrash(t *testing.T) {
	if _, err := os.Stat("/bin/sh"); err != nil {
		t.Skip("no /bin/sh")
	}
	dump := `fatal error: runtime: out of memory

runtime stack:
runtime.throw({0x1f3b6e1?, 0x2000?})
	/usr/local/go/src/runtime/panic.go:1101 +0x48
goroutine 1 gp=0xc000002380 m=0 mp=0x2d7a0e0 [running]:
bytes.growSlice({0xc0b8a00000, 0x7ffffe00, 0x80000000}, 0x200)
	/usr/local/go/src/bytes/buffer.go:249 +0x8e
`
	for _, tt := range []struct {
		name, script, want string
	}{
		{"out of memory", "cat >&2 <<'EOF'\n" + dump + "EOF\nexit 2\n", `rehost-helm crashed: it exited with status 2: "fatal error: runtime: out of memory"` + "\n"},
		{"panic", "printf 'panic: runtime error: index out of range [3] with length 3\\n\\ngoroutine 1 [running]:\\nmain.main()\\n' >&2\nexit 2\n", `rehost-helm crashed: it exited with status 2: "panic: runtime error: index out of range [3] with length 3"` + "\n"},
		{"killed", "echo 'reading index.yaml' >&2\nkill -9 $$\n", `rehost-helm crashed: it was killed by SIGKILL (the kernel's out-of-memory killer sends it, among others): "reading index.yaml"` + "\n"},
		{"silent kill", "kill -TERM $$\n", "rehost-helm crashed: it was killed by SIGTERM\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			scriptHelper(t, tt.script)
			_, errOut, code := rehost(t, "", "images", "oci://127.0.0.1:5000/charts/shop")
			if code != 1 || !strings.HasPrefix(errOut, "rehost: fetching ") || !strings.HasSuffix(errOut, tt.want) || strings.Count(errOut, "\n") != 1 {
				t.Errorf("exit %d, stderr %q, want one line ending %q", code, errOut, tt.want)
			}
		})
	}

	// Status 1 is the helper's own error, kept whole up to 64 KiB.
	scriptHelper(t, "printf 'rehost-helm: chart shop: ' >&2\nhead -c 3000000 /dev/zero | tr '\\0' x >&2\nexit 1\n")
	_, errOut, code := rehost(t, "", "images", "oci://127.0.0.1:5000/charts/shop")
	if code != 1 || len(errOut) > 70<<10 || !strings.HasPrefix(errOut, "rehost: fetching chart shop: xxx") || !strings.HasSuffix(errOut, "…(3000025 bytes in all)\n") {
		t.Errorf("exit %d, %d bytes on stderr, ending %q", code, len(errOut), errOut[max(0, len(errOut)-60):])
	}
}
