//go:build unix

package helmexec

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rehost/rehost/pkg/rendered"
)

// script returns a client of a helper that runs the shell script body.
func script(t *testing.T, body string) *Client {
	t.Helper()
	p := filepath.Join(t.TempDir(), Name)
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	return &Client{Path: p}
}

func TestRender(t *testing.T) {
	c := script(t, `echo '{"format":3,"name":"app","manifests":[{"name":"app/templates/a.yaml","content":"kind: Pod"}]}'`)
	got, err := c.Render(nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got.Name != "app" || len(got.Manifests) != 1 || got.Manifests[0].Content != "kind: Pod" {
		t.Errorf("got %+v", got)
	}
}

// TestFormatMismatch: output of another release's helper is a
// FormatError naming both formats, for every kind of output.
func TestFormatMismatch(t *testing.T) {
	c := script(t, `echo '{"format":99}'`)
	for name, tt := range map[string]struct {
		run  func() error
		want int
	}{
		"render": {func() error { _, err := c.Render(nil, nil, nil); return err }, rendered.Format},
		"render, draft asked": {func() error {
			_, err := c.Render(nil, nil, func(*rendered.Draft) { t.Error("draft of another format taken") })
			return err
		}, rendered.Format},
		"airgap":     {func() error { _, err := c.Airgap(nil, nil); return err }, rendered.AirgapFormat},
		"chart file": {func() error { _, err := c.ChartFile(nil, ""); return err }, rendered.ChartFileFormat},
	} {
		err := tt.run()
		var f *FormatError
		if !errors.As(err, &f) || f.Got != 99 || f.Want != tt.want || f.Helper != c.Path {
			t.Errorf("%s: %v (%T)", name, err, err)
			continue
		}
		if want := fmt.Sprintf("%s writes format 99, this rehost reads format %d", c.Path, tt.want); err.Error() != want {
			t.Errorf("%s: %q, want %q", name, err, want)
		}
	}
}

// TestRenderDraft: asked for a draft (rendered.DraftEnv), a helper writes
// it before the chart; it is passed on as soon as it is read, while the
// helper still runs, and the chart after it is decoded as before. The
// output of a helper of another release is a FormatError, draft or not;
// one that fails after its draft says why, with the facts it wrote.
func TestRenderDraft(t *testing.T) {
	const chart = `{"format":3,"name":"app","manifests":[{"name":"app/templates/a.yaml","content":"kind: Pod","line":3}]}`
	// The draft's header, then its contents (rendered.Draft.Write).
	const draft = `{"format":3,"draft":[{"name":"app/templates/a.yaml","line":3,"size":9}]}` + "\n" + "kind: Pod"
	// After its draft, the chart leaves out the content the draft holds.
	const drafted = `{"format":3,"name":"app","manifests":[{"name":"app/templates/a.yaml","line":3,"drafted":1}]}`
	// The helper waits for the draft to be read (the file rehost's side
	// creates) before it writes the chart.
	sync := filepath.Join(t.TempDir(), "read")
	c := script(t, `[ "$`+rendered.DraftEnv+`" = 1 ] || exit 3
echo '`+draft+`'
i=0; while [ ! -e `+sync+` ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i+1)); done
[ -e `+sync+` ] || exit 4
echo '`+drafted+`'
`)
	var got *rendered.Draft
	ch, err := c.Render(nil, nil, func(d *rendered.Draft) {
		got = d
		os.WriteFile(sync, nil, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	if got == nil || len(got.Manifests) != 1 || got.Manifests[0].Line != 3 || got.Manifests[0].Content != "kind: Pod" {
		t.Errorf("draft %+v", got)
	}
	if ch.Name != "app" || len(ch.Manifests) != 1 || ch.Manifests[0].Line != 3 || ch.Manifests[0].Content != "kind: Pod" || ch.Manifests[0].Drafted != 0 {
		t.Errorf("chart %+v", ch)
	}

	// A chart that refers to a draft it did not write, or to a document
	// the draft does not have, is an OutputError.
	for name, out := range map[string]string{
		"no draft":          drafted,
		"beyond the draft":  draft + "\n" + `{"format":3,"name":"app","manifests":[{"name":"app/templates/a.yaml","line":3,"drafted":2}]}`,
		"another line":      draft + "\n" + `{"format":3,"name":"app","manifests":[{"name":"app/templates/a.yaml","line":4,"drafted":1}]}`,
		"content and draft": draft + "\n" + `{"format":3,"name":"app","manifests":[{"name":"app/templates/a.yaml","content":"kind: Job","line":3,"drafted":1}]}`,
	} {
		c := script(t, `printf '%s\n' '`+out+`'`)
		_, err := c.Render(nil, nil, func(*rendered.Draft) {})
		var o *OutputError
		if !errors.As(err, &o) || !strings.Contains(err.Error(), "draft") {
			t.Errorf("%s: %v (%T)", name, err, err)
		}
	}

	// Not asked: no draft, even when the user's environment asks for one.
	c = script(t, `[ -z "$`+rendered.DraftEnv+`" ] || exit 3
echo '`+chart+`'`)
	if ch, err := c.Render(nil, nil, nil); err != nil || ch.Name != "app" {
		t.Errorf("without a draft: %+v, %v", ch, err)
	}
	t.Setenv(rendered.DraftEnv, "1")
	if ch, err := c.Render(nil, nil, nil); err != nil || ch.Name != "app" {
		t.Errorf("without a draft, %s=1 in the environment: %+v, %v", rendered.DraftEnv, ch, err)
	}

	// A helper of the release before drafts ignores the variable and
	// writes format 1; one of the release before charts left out what
	// their draft holds writes format 2; one of a later release writes its
	// own draft.
	for _, out := range []string{
		`{"format":1,"name":"app","manifests":[]}`,
		`{"format":2,"draft":[]}` + "\n" + `{"format":2,"name":"app","manifests":[]}`,
		`{"format":4,"draft":[]}` + "\n" + `{"format":4,"name":"app","manifests":[]}`,
	} {
		c := script(t, `printf '`+out+`\n'`)
		_, err := c.Render(nil, nil, func(*rendered.Draft) { t.Errorf("%s: draft taken", out) })
		var f *FormatError
		if !errors.As(err, &f) || f.Want != rendered.Format {
			t.Errorf("%s: %v (%T)", out, err, err)
		}
	}

	// A failure after the draft: the message, and the facts written
	// after the draft.
	c = script(t, `echo '`+draft+`'
echo 'rehost-helm: boom' >&2
echo '{"format":1,"plainHTTP":true}'
exit 1
`)
	_, err = c.Render(nil, nil, func(*rendered.Draft) {})
	var f *FailedError
	if !errors.As(err, &f) || err.Error() != "boom" || !f.Failure.PlainHTTP {
		t.Errorf("%v (%T %+v)", err, err, f)
	}
}

func TestOutputError(t *testing.T) {
	c := script(t, `echo 'not json'`)
	_, err := c.Airgap(nil, nil)
	var o *OutputError
	if !errors.As(err, &o) || !strings.HasPrefix(err.Error(), "reading the output of "+c.Path+": invalid character") {
		t.Errorf("%v (%T)", err, err)
	}
}

// TestCrash: a crash is one line: how the helper ended and the line of
// its standard error that says why, never the dump.
func TestCrash(t *testing.T) {
	dump := "panic: runtime error: index out of range [3] with length 3\n\ngoroutine 1 [running]:\nmain.main()\n\t/src/main.go:12 +0x1d\nexit status 2\n"
	tests := []struct {
		name, body string
		status     int
		signal     os.Signal
		want       string
	}{
		{"panic", "cat >&2 <<'EOF'\n" + dump + "EOF\nexit 2\n", 2, nil, `crashed: it exited with status 2: "panic: runtime error: index out of range [3] with length 3"`},
		{"killed", "echo 'reading index.yaml' >&2\nkill -9 $$\n", -1, syscall.SIGKILL, `crashed: it was killed by SIGKILL (the kernel's out-of-memory killer sends it, among others): "reading index.yaml"`},
		{"silent", "kill -TERM $$\n", -1, syscall.SIGTERM, "crashed: it was killed by SIGTERM"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := script(t, tt.body)
			_, err := c.Run(nil, nil, "")
			var crash *CrashError
			if !errors.As(err, &crash) || crash.Status != tt.status || crash.Signal != tt.signal {
				t.Fatalf("%v (%T %+v)", err, err, crash)
			}
			if want := c.Path + " " + tt.want; err.Error() != want || strings.Contains(err.Error(), "\n") {
				t.Errorf("%q, want %q", err, want)
			}
		})
	}
}

// TestFailed: a helper that fails (status 1) is a FailedError with its
// message, its name cut, credentials redacted, and the facts it wrote on
// standard output.
func TestFailed(t *testing.T) {
	c := script(t, `echo 'rehost-helm: chart oci://u:s3cret@r/x: Get "https://r/v2/": http: server gave HTTP response to HTTPS client' >&2
echo '{"format":1,"plainHTTP":true}'
exit 1
`)
	c.Redact = func(s string) string { return strings.ReplaceAll(s, "s3cret", "[redacted]") }
	_, err := c.ChartFile([]string{"pull"}, "")
	var f *FailedError
	if !errors.As(err, &f) || !f.Failure.PlainHTTP {
		t.Fatalf("%v (%T %+v)", err, err, f)
	}
	if want := `chart oci://u:[redacted]@r/x: Get "https://r/v2/": http: server gave HTTP response to HTTPS client`; err.Error() != want {
		t.Errorf("%q, want %q", err, want)
	}

	// No facts, or facts of another format: none taken; no message: the
	// exit status.
	for _, body := range []string{"echo 'rehost-helm: boom' >&2\nexit 1\n", "echo 'rehost-helm: boom' >&2\necho '{\"format\":2,\"plainHTTP\":true}'\nexit 1\n", "exit 1\n"} {
		c := script(t, body)
		_, err := c.Run(nil, nil, "")
		if !errors.As(err, &f) || f.Failure != (rendered.Failure{}) {
			t.Errorf("%q: %v (%T %+v)", body, err, err, f)
		}
		if want := "boom"; body == "exit 1\n" {
			if want = c.Path + ": exit status 1"; err.Error() != want {
				t.Errorf("%q: %q, want %q", body, err, want)
			}
		} else if err.Error() != want {
			t.Errorf("%q: %q, want %q", body, err, want)
		}
	}
}

// TestStopped: a signal that stopped the command while the helper ran
// wins over how the helper ended; one before it starts is a RunError.
func TestStopped(t *testing.T) {
	c := script(t, "exit 3\n")
	c.Stopped = func() os.Signal { return syscall.SIGTERM }
	_, err := c.Run(nil, nil, "")
	var s *StoppedError
	if !errors.As(err, &s) || err.Error() != "stopped by SIGTERM" {
		t.Errorf("%v (%T)", err, err)
	}
	c.Start = func(*exec.Cmd) error { return errors.New("stopped by SIGINT") }
	_, err = c.Run(nil, nil, "")
	var r *RunError
	if !errors.As(err, &r) || err.Error() != c.Path+": stopped by SIGINT" {
		t.Errorf("%v (%T)", err, err)
	}
}

// TestTempDir: with tmp set, the helper's TMPDIR is tmp.
func TestTempDir(t *testing.T) {
	tmp := t.TempDir()
	c := script(t, `printf '%s' "$TMPDIR"`)
	out, err := c.Run(nil, nil, tmp)
	if err != nil || string(out) != tmp {
		t.Errorf("%q, %v", out, err)
	}
}

// TestRenderOneProcessor: from the draft until the helper exits, this
// process runs on one processor, and on as many as before after it; the
// chart written after the draft arrives whole, however large (here 3 MB,
// more than the pipe holds).
func TestRenderOneProcessor(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(3))
	// The draft's header, then its contents (rendered.Draft.Write).
	const draft = `{"format":3,"draft":[{"name":"app/templates/a.yaml","line":3,"size":9}]}` + "\n" + "kind: Pod"
	sync := filepath.Join(t.TempDir(), "read")
	big := strings.Repeat("x", 3<<20)
	c := script(t, `echo '`+draft+`'
i=0; while [ ! -e `+sync+` ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i+1)); done
printf '{"format":3,"name":"app","manifests":[{"name":"app/templates/a.yaml","content":"%s"}]}\n' "$(head -c 3145728 /dev/zero | tr '\0' x)"
`)
	during, atExit := 0, 0
	c.Stopped = func() os.Signal { // once the helper has exited, before its chart is decoded
		atExit = runtime.GOMAXPROCS(0)
		return nil
	}
	ch, err := c.Render(nil, nil, func(*rendered.Draft) {
		// Still one processor a moment later, while the helper runs.
		time.Sleep(20 * time.Millisecond)
		during = runtime.GOMAXPROCS(0)
		os.WriteFile(sync, nil, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	if during != 1 {
		t.Errorf("GOMAXPROCS %d while the helper ran after its draft, want 1", during)
	}
	if atExit != 3 {
		t.Errorf("GOMAXPROCS %d once the helper exited, want 3 as before", atExit)
	}
	if after := runtime.GOMAXPROCS(0); after != 3 {
		t.Errorf("GOMAXPROCS %d after the helper, want 3 as before", after)
	}
	if len(ch.Manifests) != 1 || ch.Manifests[0].Content != big {
		t.Errorf("the chart after the draft: %d manifests", len(ch.Manifests))
	}

	// A Start that starts the helper and fails: its draft may still be
	// read, and the processors are as before once Render returns.
	c = script(t, `echo '`+draft+`'`)
	c.Start = func(cmd *exec.Cmd) error {
		if err := cmd.Start(); err != nil {
			return err
		}
		go cmd.Wait()
		return errors.New("not registered")
	}
	read := make(chan struct{})
	_, err = c.Render(nil, nil, func(*rendered.Draft) { close(read) })
	var re *RunError
	if !errors.As(err, &re) {
		t.Errorf("a Start that failed: %v (%T)", err, err)
	}
	select {
	case <-read:
	default:
		t.Error("the draft of a helper started by a failing Start was not read")
	}
	if after := runtime.GOMAXPROCS(0); after != 3 {
		t.Errorf("GOMAXPROCS %d after a Start that failed, want 3 as before", after)
	}
}

// TestOneProcessor: started and ended in either order, the number of
// processors is what it was before once both happened.
func TestOneProcessor(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(3))
	var p oneProcessor
	p.start()
	if n := runtime.GOMAXPROCS(0); n != 1 {
		t.Errorf("started: %d processors, want 1", n)
	}
	p.start() // once only: what it restores is still 3
	p.end()
	if n := runtime.GOMAXPROCS(0); n != 3 {
		t.Errorf("ended: %d processors, want 3", n)
	}
	var late oneProcessor
	late.end()
	late.start() // the helper ended before its draft was read
	if n := runtime.GOMAXPROCS(0); n != 3 {
		t.Errorf("started after the end: %d processors, want 3", n)
	}
}
