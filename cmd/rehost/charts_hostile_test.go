//go:build linux

package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"fmt"
	"net/http"
	"net/http/httptest"
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
