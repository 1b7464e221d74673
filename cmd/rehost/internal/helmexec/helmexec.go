// Package helmexec is rehost's client of the rehost-helm helper: it runs
// the helper, decodes the JSON it writes (pkg/rendered's Chart, Airgap,
// ChartFile and, on failure, Failure), checks the format version, and
// returns failures as typed errors for the command to word. It adds no
// text of the command's own: prefixes naming the chart and flag hints are
// the command's.
package helmexec

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"sync"
	"syscall"

	"github.com/rehost/rehost/pkg/rendered"
)

// Name is the helper's name.
const Name = "rehost-helm"

// Client runs the helper at Path.
type Client struct {
	// Path is the helper's path.
	Path string
	// Start starts the helper's process (default (*exec.Cmd).Start); the
	// command's registers it to pass signals on to it.
	Start func(*exec.Cmd) error
	// Stopped is called once the helper has exited and returns the signal
	// that stopped the command meanwhile, if one did (default none).
	Stopped func() os.Signal
	// Redact removes credentials from the helper's messages (default
	// none).
	Redact func(string) string
}

// Run runs the helper with args and returns its standard output. With tmp
// set, the helper's temporary directories go there (TMPDIR). Its errors
// are *RunError, *StoppedError, *FailedError and *CrashError.
func (c *Client) Run(args []string, stdin io.Reader, tmp string) ([]byte, error) {
	out, _, err := c.run(args, stdin, tmp, nil)
	return out, err
}

// run is Run; with draft set, the helper is asked for a rendered.Draft
// (rendered.DraftEnv), which is passed to draft as soon as it is read,
// while the helper still works, and returned with the output that
// follows it. Output that does not start with a Draft of this format is
// returned whole, with no draft.
//
// While the helper works after its draft, this process runs on one
// processor (runtime.GOMAXPROCS), the one Helm's sort leaves idle: with
// more, Go's garbage collector would take every other one this process
// leaves idle, and slow the helper down. The helper writes into a pipe
// of its own (growPipe): a reader on one busy processor runs only every
// few milliseconds, and a helper writing into a pipe of 64 KiB waited for
// it after each 64 KiB (a draft of 20,000 Pods is 4 MB).
func (c *Client) run(args []string, stdin io.Reader, tmp string, draft func(*rendered.Draft)) ([]byte, *rendered.Draft, error) {
	cmd := exec.Command(c.Path, args...)
	cmd.Stdin = stdin
	var env []string
	if tmp != "" {
		env = append(env, "TMPDIR="+tmp)
		if runtime.GOOS == "windows" {
			env = append(env, "TMP="+tmp, "TEMP="+tmp)
		}
	}
	// Asked for or not (a draft the user's environment asks for would
	// come before an output that does not expect it).
	if draft != nil {
		env = append(env, rendered.DraftEnv+"=1")
	} else {
		env = append(env, rendered.DraftEnv+"=")
	}
	cmd.Env = append(os.Environ(), env...)
	var stdout bytes.Buffer
	stderr := &headTail{max: maxStderr}
	cmd.Stdout, cmd.Stderr = &stdout, stderr
	var (
		pw    *os.File         // the helper's end of its pipe, until it starts
		read  chan readDrafted // the draft, once the output is read
		procs oneProcessor
	)
	if draft != nil {
		pr, w, err := os.Pipe()
		if err != nil {
			return nil, nil, &RunError{Helper: c.Path, Err: err}
		}
		growPipe(w)
		pw, cmd.Stdout = w, w
		read = make(chan readDrafted, 1)
		go func() {
			defer pr.Close()
			r := io.TeeReader(pr, &stdout)
			var rd readDrafted
			if d, n, err := rendered.ReadDraft(r); err == nil {
				procs.start()
				draft(d)
				rd = readDrafted{draft: d, n: n}
			}
			io.Copy(io.Discard, r)
			read <- rd
		}()
	}
	// wait ends the reading of the output and returns the output after
	// the draft, and the draft.
	wait := func() ([]byte, *rendered.Draft) {
		if read == nil {
			return stdout.Bytes(), nil
		}
		rd := <-read // the reader has written all it read
		return stdout.Bytes()[rd.n:], rd.draft
	}
	start := cmd.Start
	if c.Start != nil {
		start = func() error { return c.Start(cmd) }
	}
	err := start()
	if pw != nil {
		pw.Close() // the helper has its own copy: its exit ends the output
	}
	if err != nil {
		procs.end() // a Start that started it may have let it write a draft
		wait()
		return nil, nil, &RunError{Helper: c.Path, Err: err}
	}
	err = cmd.Wait()
	procs.end()
	out, d := wait()
	if c.Stopped != nil {
		if sig := c.Stopped(); sig != nil {
			return nil, nil, &StoppedError{Signal: sig}
		}
	}
	if err != nil {
		return nil, nil, c.failure(err, out, stderr)
	}
	return out, d, nil
}

// oneProcessor runs this process on one processor from start until end,
// whichever comes first: a start after the end does nothing. The number
// restored is the one before (fixed: Go no longer follows a change of the
// CPU limit, as it would not after any GOMAXPROCS call).
type oneProcessor struct {
	mu    sync.Mutex
	saved int // the number of processors before start, 0 when not started
	ended bool
}

func (p *oneProcessor) start() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.ended && p.saved == 0 {
		p.saved = runtime.GOMAXPROCS(1)
	}
}

func (p *oneProcessor) end() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.ended = true
	if p.saved > 0 {
		runtime.GOMAXPROCS(p.saved)
	}
}

// readDrafted is the draft the helper's output starts with, and its
// length there (none: nil and 0).
type readDrafted struct {
	draft *rendered.Draft
	n     int64
}

// Render runs the helper to render a chart (rendered.Chart). With draft
// set, the helper is asked for the documents of the chart's templates
// first (rendered.Draft), which are passed to draft as soon as they are
// read, while the helper still works: the Draft of a helper that ends in
// an error too. The chart that follows leaves out the contents the draft
// holds (rendered.Manifest.Drafted); they are put back, and a chart that
// refers to a draft it did not write is an *OutputError.
func (c *Client) Render(args []string, stdin io.Reader, draft func(*rendered.Draft)) (*rendered.Chart, error) {
	var out rendered.Chart
	raw, d, err := c.run(args, stdin, "", draft)
	if err != nil {
		return nil, err
	}
	if err := c.unmarshal(raw, &out, func() int { return out.Format }, rendered.Format); err != nil {
		return nil, err
	}
	// The contents the draft holds are left out of the chart.
	if err := out.Undraft(d); err != nil {
		return nil, &OutputError{Helper: c.Path, Err: err}
	}
	return &out, nil
}

// Airgap runs the helper's values or relocate (rendered.Airgap).
func (c *Client) Airgap(args []string, stdin io.Reader) (*rendered.Airgap, error) {
	var out rendered.Airgap
	if err := c.decode(args, stdin, "", &out, func() int { return out.Format }, rendered.AirgapFormat); err != nil {
		return nil, err
	}
	return &out, nil
}

// ChartFile runs the helper's pull or package (rendered.ChartFile), its
// temporary directories in tmp when set.
func (c *Client) ChartFile(args []string, tmp string) (*rendered.ChartFile, error) {
	var out rendered.ChartFile
	if err := c.decode(args, nil, tmp, &out, func() int { return out.Format }, rendered.ChartFileFormat); err != nil {
		return nil, err
	}
	return &out, nil
}

// Dependencies runs the helper's dependencies (rendered.Dependencies),
// its temporary directories in tmp when set.
func (c *Client) Dependencies(args []string, tmp string) (*rendered.Dependencies, error) {
	var out rendered.Dependencies
	if err := c.decode(args, nil, tmp, &out, func() int { return out.Format }, rendered.DependenciesFormat); err != nil {
		return nil, err
	}
	return &out, nil
}

// decode runs the helper and decodes its output into v, whose format
// must be want. Its errors are Run's, *OutputError and *FormatError.
func (c *Client) decode(args []string, stdin io.Reader, tmp string, v interface{}, format func() int, want int) error {
	out, err := c.Run(args, stdin, tmp)
	if err != nil {
		return err
	}
	return c.unmarshal(out, v, format, want)
}

// unmarshal decodes the helper's output into v, whose format must be
// want. Output of another format that does not decode (a helper of a
// later release writing more than one value) is a *FormatError too.
func (c *Client) unmarshal(out []byte, v interface{}, format func() int, want int) error {
	if err := json.Unmarshal(out, v); err != nil {
		var first struct {
			Format int `json:"format"`
		}
		if json.NewDecoder(bytes.NewReader(out)).Decode(&first) == nil && first.Format != want {
			return &FormatError{Helper: c.Path, Got: first.Format, Want: want}
		}
		return &OutputError{Helper: c.Path, Err: err}
	}
	if got := format(); got != want {
		return &FormatError{Helper: c.Path, Got: got, Want: want}
	}
	return nil
}

func (c *Client) redact(s string) string {
	if c.Redact == nil {
		return s
	}
	return c.Redact(s)
}

// failure is the error of a helper that did not exit 0: its message when
// it exits with status 1 (its errors), with the facts of the Failure it
// wrote, else how it ended.
func (c *Client) failure(err error, stdout []byte, stderr *headTail) error {
	var exit *exec.ExitError
	if !errors.As(err, &exit) {
		return &RunError{Helper: c.Path, Err: err}
	}
	if exit.ExitCode() == 1 {
		f := &FailedError{Helper: c.Path, Message: c.redact(trimName(stderr.String()))}
		if f.Message == "" {
			f.Message = c.redact(fmt.Sprintf("%s: %v", c.Path, err))
		}
		var facts rendered.Failure
		if json.Unmarshal(stdout, &facts) == nil && facts.Format == rendered.FailureFormat {
			f.Failure = facts
		}
		return f
	}
	crash := &CrashError{Helper: c.Path, Status: exit.ExitCode(), Line: c.redact(stderr.why())}
	if sig, ok := killedBy(exit.ProcessState); ok {
		crash.Signal = sig
	}
	return crash
}

// RunError is a helper that could not be run (not started, or not waited
// for).
type RunError struct {
	Helper string
	Err    error
}

func (e *RunError) Error() string { return e.Helper + ": " + e.Err.Error() }
func (e *RunError) Unwrap() error { return e.Err }

// StoppedError is a command stopped by a signal while the helper ran.
type StoppedError struct{ Signal os.Signal }

func (e *StoppedError) Error() string { return "stopped by " + SignalName(e.Signal) }

// FailedError is a helper that failed and said why (exit status 1).
type FailedError struct {
	Helper string
	// Message is what it wrote on standard error, without its name.
	Message string
	// Failure are the facts it wrote about the failure; the zero value
	// when it wrote none.
	Failure rendered.Failure
}

func (e *FailedError) Error() string { return e.Message }

// CrashError is a helper that crashed: a signal, an out-of-memory kill, a
// Go panic or runtime error. It is told in one line: how it ended and the
// line of its standard error that says why, not the crash dump.
type CrashError struct {
	Helper string
	// Status is its exit status (-1 when killed by Signal).
	Status int
	Signal os.Signal
	// Line is the line of its standard error that says why, or "".
	Line string
}

func (e *CrashError) Error() string {
	how := fmt.Sprintf("exited with status %d", e.Status)
	if e.Signal != nil {
		how = "was killed by " + SignalName(e.Signal)
		if e.Signal == syscall.SIGKILL {
			how += " (the kernel's out-of-memory killer sends it, among others)"
		}
	}
	line := ""
	if e.Line != "" {
		line = ": " + strconv.Quote(e.Line)
	}
	return fmt.Sprintf("%s crashed: it %s%s", e.Helper, how, line)
}

// OutputError is output of the helper that does not decode.
type OutputError struct {
	Helper string
	Err    error
}

func (e *OutputError) Error() string {
	return "reading the output of " + e.Helper + ": " + e.Err.Error()
}
func (e *OutputError) Unwrap() error { return e.Err }

// FormatError is output of a helper of another release: it writes format
// Got, this rehost reads Want.
type FormatError struct {
	Helper    string
	Got, Want int
}

func (e *FormatError) Error() string {
	return fmt.Sprintf("%s writes format %d, this rehost reads format %d", e.Helper, e.Got, e.Want)
}

// SignalName is "SIGTERM", "SIGINT" …, or the signal's description.
func SignalName(sig os.Signal) string {
	switch sig {
	case os.Interrupt:
		return "SIGINT"
	case syscall.SIGTERM:
		return "SIGTERM"
	case syscall.SIGKILL:
		return "SIGKILL"
	}
	return sig.String()
}
