//go:build unix

package main

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The hostile chart servers' tests run the real rehost-helm binary, so
// that its peak memory can be read from the kernel (the rusage of a
// waited-for child) rather than guessed.
var (
	binOnce sync.Once
	binDir  string
	binPath string
	binErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// helperBinary builds rehost-helm once for the package's tests.
func helperBinary(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("go not on PATH: %v", err)
		}
		t.Skipf("go not on PATH: %v", err)
	}
	binOnce.Do(func() {
		if binDir, binErr = os.MkdirTemp("", "rehost-helm-test-bin-*"); binErr != nil {
			return
		}
		binPath = filepath.Join(binDir, "rehost-helm")
		if out, err := exec.Command("go", "build", "-o", binPath, ".").CombinedOutput(); err != nil {
			binErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binPath
}

// hostileServer serves chart downloads that never end, are too large, trickle
// or break off; it counts the bytes it managed to send.
type hostileServer struct {
	*httptest.Server
	hit chan string // the path of each request
}

const (
	declaredIndex = 400 * 1000 * 1000 // the size the oversized index declares
	endlessDigest = "sha256:0000000000000000000000000000000000000000000000000000000000000001"
)

func newHostileServer(t *testing.T) *hostileServer {
	h := &hostileServer{hit: make(chan string, 16)}
	h.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case h.hit <- r.URL.Path:
		default:
		}
		switch r.URL.Path {
		case "/endless/x-1.0.0.tgz":
			// A gzip header, then bytes without end.
			w.Header().Set("Content-Type", "application/gzip")
			buf := bytes.Repeat([]byte("\x1f\x8b\x08\x00rehost-endless-"), 4096)
			for {
				if _, err := w.Write(buf); err != nil {
					return
				}
			}
		case "/index-declared/index.yaml", "/index-chunked/index.yaml":
			// An index that says it is 400 MB, or says nothing and keeps
			// going: generated as it is sent, never stored.
			if strings.HasPrefix(r.URL.Path, "/index-declared/") {
				w.Header().Set("Content-Length", strconv.Itoa(declaredIndex))
			}
			writeIndex(w, declaredIndex)
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
		case "/cut/x-1.0.0.tgz":
			// Declares 1 MiB, sends 64 KiB, closes the connection.
			w.Header().Set("Content-Length", strconv.Itoa(1<<20))
			w.WriteHeader(http.StatusOK)
			w.Write(bytes.Repeat([]byte{0x1f}, 64<<10))
			w.(http.Flusher).Flush()
			conn, _, err := http.NewResponseController(w).Hijack()
			if err == nil {
				conn.Close()
			}
		case "/v2/":
		case "/v2/charts/x/manifests/1.0.0":
			// A chart whose content is a 1 TiB blob, sent without end.
			w.Header().Set("Content-Type", "application/vnd.oci.image.manifest.v1+json")
			fmt.Fprintf(w, `{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json",
"config":{"mediaType":"application/vnd.cncf.helm.config.v1+json","digest":"%s","size":1099511627776},
"layers":[{"mediaType":"application/vnd.cncf.helm.chart.content.v1.tar+gzip","digest":"%s","size":1099511627776}]}`, endlessDigest, endlessDigest)
		case "/v2/charts/x/blobs/" + endlessDigest:
			buf := bytes.Repeat([]byte("rehost-endless-"), 4096)
			for {
				if _, err := w.Write(buf); err != nil {
					return
				}
			}
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(h.Close)
	return h
}

// writeIndex writes a chart repository index of n bytes, entry by entry,
// until the client goes away.
func writeIndex(w http.ResponseWriter, n int) {
	var b bytes.Buffer
	b.WriteString("apiVersion: v1\nentries:\n")
	sent := 0
	for i := 0; sent < n; i++ {
		fmt.Fprintf(&b, "  chart-%08d:\n  - name: chart-%08d\n    version: 1.0.0\n    apiVersion: v2\n    urls:\n    - chart-%08d-1.0.0.tgz\n    digest: %064x\n", i, i, i, i)
		if b.Len() < 64<<10 && sent+b.Len() < n {
			continue
		}
		p := b.Bytes()
		if sent+len(p) > n {
			p = p[:n-sent]
		}
		if _, err := w.Write(p); err != nil {
			return
		}
		sent += len(p)
		b.Reset()
	}
}

// pullRun is one run of rehost-helm pull.
type pullRun struct {
	code    int
	stderr  string
	took    time.Duration
	peakRSS int64 // bytes
}

// runPull runs rehost-helm pull with args, with private temporary and
// Helm directories (tmp), and returns what it did.
func runPull(t *testing.T, tmp string, args ...string) pullRun {
	t.Helper()
	home := t.TempDir()
	cmd := exec.Command(helperBinary(t), append([]string{"pull", "--dest", t.TempDir()}, args...)...)
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp, "HELM_CACHE_HOME="+home+"/cache", "HELM_CONFIG_HOME="+home+"/config", "HELM_DATA_HOME="+home+"/data", "DOCKER_CONFIG="+home+"/docker")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	start := time.Now()
	err := cmd.Run()
	r := pullRun{code: cmd.ProcessState.ExitCode(), stderr: stderr.String(), took: time.Since(start), peakRSS: maxRSS(cmd.ProcessState)}
	if err != nil && r.code < 0 {
		t.Errorf("rehost-helm %s: %v\n%s", args, err, r.stderr)
	}
	return r
}

// maxRSS is the peak resident set size of a waited-for process.
func maxRSS(ps *os.ProcessState) int64 {
	ru, ok := ps.SysUsage().(*syscall.Rusage)
	if !ok {
		return -1
	}
	if runtime.GOOS == "darwin" {
		return int64(ru.Maxrss) // bytes
	}
	return int64(ru.Maxrss) << 10 // KiB
}

func leftIn(dir string) []string {
	var names []string
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// TestPullHostileServers: a chart server that sends a .tgz without end, an
// index that declares 400 MB or sends it without declaring it, an OCI
// registry whose chart blob declares 1 TiB and never ends, a chart at a
// byte a second, or a chart cut off mid-body: rehost-helm pull refuses
// each with one line naming the URL and the limit (or the stall), within a
// bounded time, at a bounded peak memory whatever the input, leaving no
// temporary directory. The limits are the defaults (64 MiB for a chart
// download, 32 MiB for an index), except the stall timeout (1s instead of
// 2m). The helper itself (Helm linked in) peaks at about 70 MiB; an HTTP
// download adds at most its limit (rehost fills Helm's buffer in one
// allocation); an OCI chart's blobs, which share the limit, about twice
// it, up to three times (Helm's registry client reads each blob into a
// buffer that doubles as it fills).
func TestPullHostileServers(t *testing.T) {
	srv := newHostileServer(t)
	host := strings.TrimPrefix(srv.URL, "http://")
	const (
		timeBound = 60 * time.Second
		httpBound = 192 << 20
		ociBound  = 320 << 20
	)
	for _, tt := range []struct {
		name  string
		args  []string
		want  string
		bound int64
	}{
		{"endless chart", []string{srv.URL + "/endless/x-1.0.0.tgz"}, "chart " + srv.URL + "/endless/x-1.0.0.tgz: GET " + srv.URL + "/endless/x-1.0.0.tgz: the chart's downloads are larger than the limit of 64 MiB (--max-chart-size)", httpBound},
		{"declared 400 MB index", []string{"--repo", srv.URL + "/index-declared", "x"}, "GET " + srv.URL + "/index-declared/index.yaml: the repository index is 381.5 MiB, more than the limit of 32 MiB (--max-index-size)", httpBound},
		{"endless index", []string{"--repo", srv.URL + "/index-chunked", "x"}, "GET " + srv.URL + "/index-chunked/index.yaml: the repository index is larger than the limit of 32 MiB (--max-index-size)", httpBound},
		{"endless OCI blob", []string{"--plain-http", "oci://" + host + "/charts/x:1.0.0"}, "GET " + srv.URL + "/v2/charts/x/blobs/" + endlessDigest + ": the chart's downloads are larger than the limit of 64 MiB (--max-chart-size)", ociBound},
		{"trickle", []string{srv.URL + "/trickle/x-1.0.0.tgz"}, "GET " + host + "/trickle/x-1.0.0.tgz: server stalled: less than 1024 bytes moved in 1s (--stall-timeout)", httpBound},
		{"cut off", []string{srv.URL + "/cut/x-1.0.0.tgz"}, "unexpected EOF", httpBound},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tmp := t.TempDir()
			r := runPull(t, tmp, append(tt.args, "--stall-timeout", "1s")...)
			t.Logf("%s: exit %d after %s, peak RSS %.1f MiB", tt.name, r.code, r.took.Round(time.Millisecond), float64(r.peakRSS)/(1<<20))
			if r.code != 1 || !strings.Contains(r.stderr, tt.want) || strings.Count(r.stderr, "\n") != 1 {
				t.Errorf("exit %d, stderr %q, want one line with %q", r.code, r.stderr, tt.want)
			}
			if r.took > timeBound {
				t.Errorf("took %s, more than %s", r.took, timeBound)
			}
			if r.peakRSS > tt.bound {
				t.Errorf("peak RSS %d MiB, more than %d MiB", r.peakRSS>>20, tt.bound>>20)
			}
			if left := leftIn(tmp); len(left) > 0 {
				t.Errorf("left in TMPDIR: %v", left)
			}
		})
	}
}

// TestPullSignals: SIGTERM or SIGINT ends a pull at once, with one line
// naming the signal, and its temporary directories are removed.
func TestPullSignals(t *testing.T) {
	srv := newHostileServer(t)
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		tmp := t.TempDir()
		home := t.TempDir()
		cmd := exec.Command(helperBinary(t), "pull", "--dest", t.TempDir(), "--stall-timeout", "1h", srv.URL+"/trickle/x-1.0.0.tgz")
		cmd.Env = append(os.Environ(), "TMPDIR="+tmp, "HELM_CACHE_HOME="+home, "HELM_CONFIG_HOME="+home, "HELM_DATA_HOME="+home)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		select {
		case <-srv.hit:
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatal("no request within 30s")
		}
		if len(leftIn(tmp)) == 0 {
			t.Errorf("%v: no temporary directory while the pull runs: the test proves nothing", sig)
		}
		cmd.Process.Signal(sig)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
			t.Fatalf("%v: still running 10s after the signal", sig)
		}
		want := map[syscall.Signal]string{syscall.SIGTERM: "terminated signal received", syscall.SIGINT: "interrupt signal received"}[sig]
		if code := cmd.ProcessState.ExitCode(); code != 1 || !strings.Contains(stderr.String(), want) || strings.Count(stderr.String(), "\n") != 1 {
			t.Errorf("%v: exit %d, stderr %q, want one line with %q", sig, code, stderr.String(), want)
		}
		if left := leftIn(tmp); len(left) > 0 {
			t.Errorf("%v: left in TMPDIR: %v", sig, left)
		}
	}
}
