//go:build unix

package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// exitBound is how long a signalled rehost may take to exit: generous,
// it tells an exit from a hang.
const exitBound = 10 * time.Second

// buildRehost builds the rehost binary for tests that send it signals.
func buildRehost(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("go not on PATH: %v", err)
		}
		t.Skipf("go not on PATH: %v", err)
	}
	bin := filepath.Join(t.TempDir(), "rehost")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// stallOnce answers requests that match with nothing while stalling is
// set, and closes hit the first time it does; the rest go to the registry.
type stallOnce struct {
	match    func(*http.Request) bool
	stalling atomic.Bool
	hit      chan struct{}
	once     sync.Once
}

func newStall(match func(*http.Request) bool) *stallOnce {
	s := &stallOnce{match: match, hit: make(chan struct{})}
	s.stalling.Store(true)
	return s
}

func (s *stallOnce) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.stalling.Load() && s.match(r) {
			s.once.Do(func() { close(s.hit) })
			io.Copy(io.Discard, r.Body)
			<-r.Context().Done() // until rehost goes away
			return
		}
		next.ServeHTTP(w, r)
	})
}

// started is a running rehost.
type started struct {
	cmd    *exec.Cmd
	stderr *bytes.Buffer
	done   chan error
}

func start(t *testing.T, bin string, stdin io.Reader, args ...string) *started {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Stdin = stdin
	var errOut bytes.Buffer
	cmd.Stderr = &errOut
	cmd.Env = append(os.Environ(), "DOCKER_CONFIG="+t.TempDir())
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &started{cmd: cmd, stderr: &errOut, done: make(chan error, 1)}
	go func() { s.done <- cmd.Wait() }()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			<-s.done
		}
	})
	return s
}

// await waits for c or fails the test after d.
func await(t *testing.T, c <-chan struct{}, d time.Duration, what string) {
	t.Helper()
	select {
	case <-c:
	case <-time.After(d):
		t.Fatalf("%s did not happen within %s", what, d)
	}
}

// signalAndWait sends sig and returns the exit error, failing the test if
// rehost has not exited within exitBound.
func (s *started) signalAndWait(t *testing.T, sig os.Signal) error {
	t.Helper()
	if err := s.cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-s.done:
		return err
	case <-time.After(exitBound):
		s.cmd.Process.Kill()
		<-s.done
		t.Fatalf("rehost still running %s after %v; stderr:\n%s", exitBound, sig, s.stderr)
		return nil
	}
}

func exitCodeOf(err error) int {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	if err == nil {
		return 0
	}
	return -2
}

// TestMirrorSignals runs the rehost binary against registries that stall
// and sends it SIGINT or SIGTERM: it exits promptly with status 1 and says
// it was stopped, leaving a layout that lists only complete images and
// that a second run completes.
func TestMirrorSignals(t *testing.T) {
	bin := buildRehost(t)

	t.Run("SIGINT while writing a layout, then resume", func(t *testing.T) {
		stall := newStall(func(r *http.Request) bool {
			return r.Method == http.MethodGet && strings.Contains(r.URL.Path, "/team/b/blobs/")
		})
		src := loopbackRegistry(t, stall.wrap)
		pushRandom(t, src+"/team/a:1")
		pushRandom(t, src+"/team/b:1")
		list := src + "/team/a:1\n" + src + "/team/b:1\n"
		dir := filepath.Join(t.TempDir(), "bundle")
		args := []string{"mirror", "--image-list", "-", "--to-oci", dir, "--attachments", "none", "--progress", "plain", "--jobs", "1"}

		run := start(t, bin, strings.NewReader(list), args...)
		await(t, stall.hit, 30*time.Second, "the blob request")
		err := run.signalAndWait(t, os.Interrupt)
		errOut := run.stderr.String()
		if code := exitCodeOf(err); code != 1 {
			t.Errorf("exit status %d (%v), want 1; stderr:\n%s", code, err, errOut)
		}
		if !strings.Contains(errOut, "rehost: mirror stopped (interrupt signal received): 1 of 2 images done") || strings.Contains(errOut, "did not stop within") {
			t.Errorf("stderr does not say the run stopped on the signal:\n%s", errOut)
		}
		// The layout lists the complete image only, and keeps no partial
		// file.
		im := readIndexJSON(t, dir)
		if len(im.Manifests) != 1 || im.Manifests[0].Annotations["dev.rehost.source"] != src+"/team/a:1" {
			t.Errorf("index.json after the signal: %+v", im.Manifests)
		}
		filepath.WalkDir(dir, func(p string, _ os.DirEntry, _ error) error {
			if strings.HasSuffix(p, ".tmp") {
				t.Errorf("left behind: %s", p)
			}
			return nil
		})

		// The same command again finishes the job.
		stall.stalling.Store(false)
		again := start(t, bin, strings.NewReader(list), args...)
		select {
		case err = <-again.done:
		case <-time.After(60 * time.Second):
			t.Fatal("the second run hung")
		}
		if err != nil || !strings.Contains(again.stderr.String(), "1 copied, 1 skipped, 0 failed") {
			t.Fatalf("second run: %v\n%s", err, again.stderr)
		}
		// And the layout is whole: every blob verifies on the way out.
		dst := loopbackRegistry(t, nil)
		if out, err := exec.Command(bin, "mirror", "--from-oci", dir, "--registry", dst, "--progress", "plain").CombinedOutput(); err != nil {
			t.Errorf("--from-oci of the resumed layout: %v\n%s", err, out)
		}
	})

	t.Run("SIGINT while writing an archive", func(t *testing.T) {
		stall := newStall(func(r *http.Request) bool {
			return r.Method == http.MethodGet && strings.Contains(r.URL.Path, "/team/b/blobs/")
		})
		src := loopbackRegistry(t, stall.wrap)
		pushRandom(t, src+"/team/a:1")
		pushRandom(t, src+"/team/b:1")
		dir := t.TempDir()
		path := filepath.Join(dir, "bundle.tar")
		run := start(t, bin, strings.NewReader(src+"/team/a:1\n"+src+"/team/b:1\n"), "mirror", "--image-list", "-", "--to-archive", path, "--part-size", "1MiB", "--attachments", "none", "--progress", "plain", "--jobs", "1")
		await(t, stall.hit, 30*time.Second, "the blob request")
		err := run.signalAndWait(t, os.Interrupt)
		errOut := run.stderr.String()
		if code := exitCodeOf(err); code != 1 || !hasFacts(errOut, "rehost: mirror stopped (interrupt signal received): ", path+" is not written") {
			t.Errorf("exit status %d (%v); stderr:\n%s", code, err, errOut)
		}
		if es, _ := os.ReadDir(dir); len(es) != 0 {
			t.Errorf("left behind: %v", es)
		}
	})

	t.Run("SIGTERM while pushing a layout", func(t *testing.T) {
		dir, _, _ := cliBundle(t)
		stall := newStall(func(r *http.Request) bool {
			return strings.Contains(r.URL.Path, "/blobs/uploads/")
		})
		dst := loopbackRegistry(t, stall.wrap)
		run := start(t, bin, nil, "mirror", "--from-oci", dir, "--registry", dst, "--progress", "plain")
		await(t, stall.hit, 30*time.Second, "the upload request")
		err := run.signalAndWait(t, syscall.SIGTERM)
		errOut := run.stderr.String()
		if code := exitCodeOf(err); code != 1 {
			t.Errorf("exit status %d (%v), want 1; stderr:\n%s", code, err, errOut)
		}
		if !strings.Contains(errOut, "rehost: mirror stopped (terminated signal received): 0 of 1 images done") {
			t.Errorf("stderr does not say the run stopped on the signal:\n%s", errOut)
		}
	})

	t.Run("SIGINT while reading the inputs", func(t *testing.T) {
		// stdin stays open: rehost waits for the image list. Nothing is
		// written at that stage, and the signal stops it the default way.
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		defer w.Close()
		run := start(t, bin, r, "mirror", "--image-list", "-", "--to-oci", filepath.Join(t.TempDir(), "bundle"))
		r.Close()
		w.Write([]byte("nginx:1\n"))
		time.Sleep(200 * time.Millisecond) // let it reach the read; not a timing assertion
		err = run.signalAndWait(t, os.Interrupt)
		if err == nil {
			t.Errorf("exit status 0 after SIGINT; stderr:\n%s", run.stderr)
		}
	})
}

// TestInterruptible: the first signal cancels the context with the signal
// as its cause; a run that does not wind down within the grace period is
// ended (exit 1, with a message); one that does is not.
func TestInterruptible(t *testing.T) {
	for _, windsDown := range []bool{false, true} {
		var errOut bytes.Buffer
		exited := make(chan int, 1)
		grace := 50 * time.Millisecond
		if windsDown {
			grace = time.Second // stop comes well before it
		}
		ctx, stop := interruptible(context.Background(), &errOut, grace, func(code int) { exited <- code })
		if err := syscall.Kill(os.Getpid(), syscall.SIGINT); err != nil {
			t.Fatal(err)
		}
		await(t, ctx.Done(), exitBound, "the cancellation")
		if c := interruption(ctx); c == nil || !strings.Contains(c.Error(), "interrupt") {
			t.Errorf("cause %v", c)
		}
		if windsDown {
			stop()
			select {
			case code := <-exited:
				t.Errorf("exit(%d) after the run wound down", code)
			case <-time.After(grace + grace/2):
			}
			continue
		}
		select {
		case code := <-exited:
			if code != 1 || !strings.Contains(errOut.String(), "did not stop within 50ms: exiting") {
				t.Errorf("exit(%d), stderr %q", code, errOut.String())
			}
		case <-time.After(exitBound):
			t.Error("no exit after the grace period")
		}
		stop()
	}
	// Without a signal, stop leaves no interruption.
	ctx, stop := interruptible(context.Background(), io.Discard, time.Millisecond, func(int) { t.Error("exit without a signal") })
	stop()
	if interruption(ctx) != nil {
		t.Errorf("interruption %v without a signal", interruption(ctx))
	}
}
