//go:build linux

package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The chart fetch tests run the real rehost and rehost-helm, side by side,
// against loopback chart servers, each with a private TMPDIR.
var (
	bothOnce sync.Once
	bothDir  string
	bothErr  error
)

// buildBoth builds rehost and rehost-helm into one directory, once for the
// package's tests; rehost finds the helper beside itself.
func buildBoth(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("go not on PATH: %v", err)
		}
		t.Skipf("go not on PATH: %v", err)
	}
	bothOnce.Do(func() {
		if bothDir, bothErr = os.MkdirTemp("", "rehost-test-bin-*"); bothErr != nil {
			return
		}
		afterTests = append(afterTests, func() { os.RemoveAll(bothDir) })
		if out, err := exec.Command("go", "build", "-o", bothDir+string(os.PathSeparator), ".", "../rehost-helm").CombinedOutput(); err != nil {
			bothErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if bothErr != nil {
		t.Fatal(bothErr)
	}
	return filepath.Join(bothDir, "rehost")
}

// chartServer serves a chart without end, or at a byte a second, and
// tells each request on hit.
func chartServer(t *testing.T) (*httptest.Server, chan string) {
	hit := make(chan string, 16)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case hit <- r.URL.Path:
		default:
		}
		switch r.URL.Path {
		case "/endless/x-1.0.0.tgz":
			buf := bytes.Repeat([]byte("\x1f\x8b\x08\x00endless"), 8192)
			for {
				if _, err := w.Write(buf); err != nil {
					return
				}
			}
		case "/trickle/x-1.0.0.tgz":
			w.WriteHeader(http.StatusOK)
			for {
				if _, err := w.Write([]byte{0x1f}); err != nil {
					return
				}
				w.(http.Flusher).Flush()
				select {
				case <-r.Context().Done():
					return
				case <-time.After(time.Second):
				}
			}
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv, hit
}

// rehostCmd is rehost with a private TMPDIR (returned) and Helm and
// Docker directories.
func rehostCmd(t *testing.T, args ...string) (*exec.Cmd, string, *bytes.Buffer) {
	bin := buildBoth(t)
	tmp, home := t.TempDir(), t.TempDir()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp, "HELM_CACHE_HOME="+home+"/cache", "HELM_CONFIG_HOME="+home+"/config", "HELM_DATA_HOME="+home+"/data", "DOCKER_CONFIG="+home+"/docker")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	t.Cleanup(func() {
		if cmd.Process != nil && cmd.ProcessState == nil {
			for _, kid := range children(cmd.Process.Pid) {
				syscall.Kill(kid, syscall.SIGKILL)
			}
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	return cmd, tmp, &stderr
}

// leftIn lists what is in dir, at any depth below the first level too.
func leftIn(dir string) []string {
	var out []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if p != dir {
			out = append(out, strings.TrimPrefix(p, dir+"/"))
		}
		return nil
	})
	return out
}

// children are the processes whose parent is pid (started by any of its
// threads).
func children(pid int) []int {
	tasks, _ := filepath.Glob("/proc/" + strconv.Itoa(pid) + "/task/*/children")
	var out []int
	for _, task := range tasks {
		raw, _ := os.ReadFile(task)
		for _, f := range strings.Fields(string(raw)) {
			if n, err := strconv.Atoi(f); err == nil {
				out = append(out, n)
			}
		}
	}
	return out
}

// waitExit waits for cmd, killing it and failing the test after d.
func waitExit(t *testing.T, cmd *exec.Cmd, d time.Duration) {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(d):
		cmd.Process.Kill()
		<-done
		t.Fatalf("still running after %s", d)
	}
}

// TestChartFetchLimits: a chart that never ends is refused with one line
// that names the URL, the limit and the flag, and nothing is left in
// TMPDIR.
func TestChartFetchLimits(t *testing.T) {
	srv, _ := chartServer(t)
	cmd, tmp, stderr := rehostCmd(t, "images", "--max-chart-size", "8MiB", srv.URL+"/endless/x-1.0.0.tgz")
	cmd.Start()
	waitExit(t, cmd, 60*time.Second)
	want := "rehost: fetching chart " + srv.URL + "/endless/x-1.0.0.tgz: GET " + srv.URL + "/endless/x-1.0.0.tgz: the chart's downloads are larger than the limit of 8 MiB (--max-chart-size)\n"
	if code := cmd.ProcessState.ExitCode(); code != 1 || stderr.String() != want {
		t.Errorf("exit %d, stderr %q, want %q", code, stderr, want)
	}
	if left := leftIn(tmp); len(left) > 0 {
		t.Errorf("left in TMPDIR: %v", left)
	}
}

// TestChartFetchSignals: SIGTERM or SIGINT to rehost while rehost-helm
// fetches a chart is passed on to the helper; both exit promptly, rehost
// with one line, and neither leaves a temporary directory. A helper killed
// outright (as by the kernel's out-of-memory killer) is told in one line,
// and its temporary directories, inside rehost's, are removed with them.
func TestChartFetchSignals(t *testing.T) {
	srv, hit := chartServer(t)
	for _, tt := range []struct {
		name   string
		signal func(rehost, helper int)
		want   string
	}{
		{"SIGTERM", func(rehost, _ int) { syscall.Kill(rehost, syscall.SIGTERM) }, "rehost: fetching stopped by SIGTERM\n"},
		{"SIGINT", func(rehost, _ int) { syscall.Kill(rehost, syscall.SIGINT) }, "rehost: fetching stopped by SIGINT\n"},
		{"helper killed", func(_, helper int) { syscall.Kill(helper, syscall.SIGKILL) }, "rehost-helm crashed: it was killed by SIGKILL (the kernel's out-of-memory killer sends it, among others)\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cmd, tmp, stderr := rehostCmd(t, "images", srv.URL+"/trickle/x-1.0.0.tgz")
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			select {
			case <-hit:
			case <-time.After(60 * time.Second):
				cmd.Process.Kill()
				cmd.Wait()
				t.Fatal("no request within 60s")
			}
			kids := children(cmd.Process.Pid)
			if len(kids) != 1 {
				t.Fatalf("rehost has children %v, want one rehost-helm", kids)
			}
			var helperDirs []string
			for _, l := range leftIn(tmp) {
				if strings.Contains(l, "rehost-helm-") {
					helperDirs = append(helperDirs, l)
				}
			}
			if len(helperDirs) == 0 {
				t.Errorf("no temporary directory of the helper in TMPDIR while it fetches (%v): the test proves nothing", leftIn(tmp))
			}
			start := time.Now()
			tt.signal(cmd.Process.Pid, kids[0])
			waitExit(t, cmd, 15*time.Second)
			t.Logf("exited %s after the signal", time.Since(start).Round(time.Millisecond))
			if code := cmd.ProcessState.ExitCode(); code != 1 || !strings.HasSuffix(stderr.String(), tt.want) || strings.Count(stderr.String(), "\n") != 1 {
				t.Errorf("exit %d, stderr %q, want one line ending %q", code, stderr, tt.want)
			}
			if left := leftIn(tmp); len(left) > 0 {
				t.Errorf("left in TMPDIR: %v", left)
			}
			if err := syscall.Kill(kids[0], 0); err == nil {
				t.Errorf("rehost-helm %d still runs", kids[0])
			}
		})
	}
}

// TestChartSourceSignalIdle: a signal while no helper runs removes the
// fetched charts at once and exits with status 1, saying so.
func TestChartSourceSignalIdle(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	fakeHelper(t, "", 0)
	var stderr bytes.Buffer
	exited := make(chan int, 1)
	c := &chartSource{cmd: newRootCmd(nil, &stderr, &stderr), exitFunc: func(code int) { exited <- code }}
	c.cmd.SetErr(&stderr)
	dir, err := c.tempDir()
	if err != nil {
		t.Fatal(err)
	}
	syscall.Kill(os.Getpid(), syscall.SIGTERM)
	select {
	case code := <-exited:
		if code != 1 || stderr.String() != "rehost: stopped by SIGTERM; the fetched charts are removed\n" {
			t.Errorf("exit %d, stderr %q", code, stderr.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no exit 10s after SIGTERM")
	}
	if _, err := os.Stat(filepath.Dir(dir)); !os.IsNotExist(err) {
		t.Errorf("the fetched charts are still there: %v", err)
	}
	// A command that starts a helper after the signal does not.
	if _, _, err := c.runHelper("fetching ", []string{"pull"}, nil, ""); err == nil || !strings.Contains(err.Error(), "stopped by SIGTERM") {
		t.Errorf("a helper started after the signal: %v", err)
	}
}

// TestChartTwoDirectories: a packaged chart with a/Chart.yaml (innocent
// 1.0.0) and b/Chart.yaml (evil 6.6.6), which Helm's loader reads as evil,
// is refused by images and by mirror --charts as-is, naming the file and
// the two directories; nothing is pushed or listed.
func TestChartTwoDirectories(t *testing.T) {
	dir := t.TempDir()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for _, f := range []struct{ name, content string }{
		{"a/Chart.yaml", "apiVersion: v2\nname: innocent\nversion: 1.0.0\n"},
		{"a/templates/pod.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: web}\nspec:\n  containers: [{name: c, image: nginx:1}]\n"},
		{"b/Chart.yaml", "apiVersion: v2\nname: evil\nversion: 6.6.6\n"},
		{"b/templates/pod.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: evil}\nspec:\n  containers: [{name: c, image: evil.example/miner:6.6.6}]\n"},
	} {
		tw.WriteHeader(&tar.Header{Name: f.name, Mode: 0o644, Size: int64(len(f.content)), Typeflag: tar.TypeReg})
		tw.Write([]byte(f.content))
	}
	tw.Close()
	zw.Close()
	chart := filepath.Join(dir, "innocent-1.0.0.tgz")
	if err := os.WriteFile(chart, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"images", chart},
		{"mirror", "--charts", "as-is", "--to-oci", filepath.Join(dir, "layout"), chart},
	} {
		cmd, _, stderr := rehostCmd(t, args...)
		var stdout bytes.Buffer
		cmd.Stdout = &stdout
		cmd.Run()
		if code := cmd.ProcessState.ExitCode(); code != 1 || !strings.Contains(stderr.String(), chart) || !strings.Contains(stderr.String(), `two top-level directories, "a" and "b"`) || strings.Contains(stdout.String(), "miner") {
			t.Errorf("%s: exit %d, stdout %q, stderr %q", args[0], code, stdout.String(), stderr.String())
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "layout")); !os.IsNotExist(err) {
		t.Errorf("mirror wrote the layout: %v", err)
	}
}

// credentialServers is a chart repository that wants Basic credentials
// and sends its chart "moved" to another port, and that other server;
// both record the Authorization header of each request by path.
type credentialServers struct {
	repo, other *httptest.Server
	mu          sync.Mutex
	auth        map[string][]string // "repo /path" or "other /path" -> Authorization headers
}

const (
	credUser = "robot"
	credPass = "s3cret-pass"
)

func newCredentialServers(t *testing.T) *credentialServers {
	c := &credentialServers{auth: map[string][]string{}}
	chart := tgzFiles(t,
		"app/Chart.yaml", "apiVersion: v2\nname: app\nversion: 1.0.0\n",
		"app/templates/pod.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: web}\nspec:\n  containers: [{name: c, image: nginx:1.27}]\n")
	moved := tgzFiles(t,
		"moved/Chart.yaml", "apiVersion: v2\nname: moved\nversion: 1.0.0\n",
		"moved/templates/pod.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: web}\nspec:\n  containers: [{name: c, image: redis:7}]\n")
	basic := "Basic " + base64.StdEncoding.EncodeToString([]byte(credUser+":"+credPass))
	note := func(who string, r *http.Request) {
		c.mu.Lock()
		defer c.mu.Unlock()
		c.auth[who+" "+r.URL.Path] = append(c.auth[who+" "+r.URL.Path], r.Header.Get("Authorization"))
	}
	c.other = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		note("other", r)
		if r.URL.Path == "/moved-1.0.0.tgz" {
			w.Write(moved)
			return
		}
		http.NotFound(w, r)
	}))
	t.Cleanup(c.other.Close)
	c.repo = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		note("repo", r)
		if r.Header.Get("Authorization") != basic {
			// A hostile or careless server echoes what it got.
			http.Error(w, "denied: "+r.Header.Get("Authorization"), http.StatusUnauthorized)
			return
		}
		switch r.URL.Path {
		case "/index.yaml":
			fmt.Fprintf(w, "apiVersion: v1\nentries:\n  app:\n  - name: app\n    version: 1.0.0\n    apiVersion: v2\n    urls: [app-1.0.0.tgz]\n  moved:\n  - name: moved\n    version: 1.0.0\n    apiVersion: v2\n    urls: [go/moved-1.0.0.tgz]\n")
		case "/app-1.0.0.tgz":
			w.Write(chart)
		case "/go/moved-1.0.0.tgz":
			http.Redirect(w, r, c.other.URL+"/moved-1.0.0.tgz", http.StatusFound)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(c.repo.Close)
	return c
}

func (c *credentialServers) got(key string) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.auth[key]
}

func tgzFiles(t *testing.T, files ...string) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for i := 0; i+1 < len(files); i += 2 {
		tw.WriteHeader(&tar.Header{Name: files[i], Mode: 0o644, Size: int64(len(files[i+1])), Typeflag: tar.TypeReg})
		tw.Write([]byte(files[i+1]))
	}
	tw.Close()
	zw.Close()
	return buf.Bytes()
}

// TestChartCredentials: credentials in --repo reach the repository's
// origin, not the other port a chart is redirected to; the user's Helm
// repositories' credentials likewise; and no message or output shows
// them (they were printed twice in an error).
func TestChartCredentials(t *testing.T) {
	c := newCredentialServers(t)
	u, _ := url.Parse(c.repo.URL)
	u.User = url.UserPassword(credUser, credPass)
	repo := u.String()
	basic := "Basic " + base64.StdEncoding.EncodeToString([]byte(credUser+":"+credPass))
	secrets := []string{credPass, strings.TrimPrefix(basic, "Basic ")}
	check := func(what, out string) {
		t.Helper()
		for _, s := range secrets {
			if strings.Contains(out, s) {
				t.Errorf("%s shows a credential:\n%s", what, out)
			}
		}
	}
	// -o json and the dry-run plan name the chart by its URL, without
	// credentials.
	for _, tt := range []struct {
		args []string
		code int
		want string // in stderr
	}{
		{[]string{"images", "-o", "json", "app", "--repo", repo}, 0, ""},
		{[]string{"images", "moved", "--repo", repo}, 0, ""},
		{[]string{"images", "nope", "--repo", repo}, 1, "rehost: fetching chart nope in repository http://[redacted]@" + u.Host + ": no chart nope in http://" + u.Host + "\n"},
		{[]string{"images", "app", "--repo", strings.Replace(repo, credPass, "wrong-password", 1)}, 1, "http://[redacted]@" + u.Host + ": http://" + u.Host + " is not a chart repository or cannot be reached: failed to fetch http://" + u.Host + "/index.yaml : 401 Unauthorized\n"},
		{[]string{"mirror", "--dry-run", "--attachments", "none", "--registry", "127.0.0.1:1", "--charts", "as-is", "app", "--repo", repo}, 0, ""},
	} {
		cmd, _, stderr := rehostCmd(t, tt.args...)
		var stdout bytes.Buffer
		cmd.Stdout = &stdout
		cmd.Run()
		if code := cmd.ProcessState.ExitCode(); code != tt.code || !strings.Contains(stderr.String(), tt.want) {
			t.Errorf("rehost %s: exit %d, stderr %q, want %d and %q", tt.args[0], code, stderr, tt.code, tt.want)
		}
		check("stdout", stdout.String())
		check("stderr", stderr.String())
	}
	if got := c.got("repo /app-1.0.0.tgz"); len(got) == 0 || got[0] != basic {
		t.Errorf("the chart on the repository's origin was asked with %q, want its credentials", got)
	}
	if got := c.got("other /moved-1.0.0.tgz"); len(got) == 0 || got[0] != "" {
		t.Errorf("the chart redirected to another port was asked with %q, want no credentials", got)
	}

	// The user's Helm repositories: credentials from repositories.yaml.
	cmd, _, stderr := rehostCmd(t, "images", "--helm-user-config", "mine/moved")
	home := t.TempDir()
	repos := fmt.Sprintf("apiVersion: \"\"\ngenerated: \"0001-01-01T00:00:00Z\"\nrepositories:\n- name: mine\n  url: %s\n  username: %s\n  password: %s\n", c.repo.URL, credUser, credPass)
	index := fmt.Sprintf("apiVersion: v1\nentries:\n  moved:\n  - name: moved\n    version: 1.0.0\n    apiVersion: v2\n    urls: [%s/go/moved-1.0.0.tgz]\n", c.repo.URL)
	for name, content := range map[string]string{"config/repositories.yaml": repos, "cache/repository/mine-index.yaml": index} {
		p := filepath.Join(home, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cmd.Env = append(cmd.Env, "HELM_CONFIG_HOME="+home+"/config", "HELM_CACHE_HOME="+home+"/cache")
	c.mu.Lock()
	c.auth = map[string][]string{}
	c.mu.Unlock()
	if err := cmd.Run(); err != nil {
		t.Fatalf("--helm-user-config: %v\n%s", err, stderr)
	}
	if got := c.got("repo /go/moved-1.0.0.tgz"); len(got) == 0 || got[0] != basic {
		t.Errorf("the user's repository was asked with %q, want its credentials", got)
	}
	if got := c.got("other /moved-1.0.0.tgz"); len(got) == 0 || got[0] != "" {
		t.Errorf("the redirect to another port was asked with %q, want no credentials", got)
	}
}
