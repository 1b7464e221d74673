package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"
)

// helperGrace is how long a signalled command waits for the rehost-helm
// it runs to remove its temporary directories and exit, and for itself to
// wind down, before it removes the fetched charts and exits anyway.
const helperGrace = 5 * time.Second

// runHelper runs rehost-helm with args and returns its standard output and
// the helper's path. Its error message (which names the chart) follows
// prefix. With tmp set, the helper's temporary directories go there
// (TMPDIR): inside the command's own, so that they are removed with it
// even when the helper is killed.
//
// A helper that fails says why on standard error, which becomes the
// error; one that crashes (a signal, an out-of-memory kill, a Go panic or
// runtime error) is told in one line: how it ended and the line of its
// standard error that says why, not the crash dump. While it runs, SIGINT
// and SIGTERM are passed on to it (watch).
func (c *chartSource) runHelper(prefix string, args []string, stdin io.Reader, tmp string) ([]byte, string, error) {
	bin, err := findHelmHelper()
	if err != nil {
		return nil, "", err
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdin = stdin
	if tmp != "" {
		cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
		if runtime.GOOS == "windows" {
			cmd.Env = append(cmd.Env, "TMP="+tmp, "TEMP="+tmp)
		}
	}
	var stdout bytes.Buffer
	stderr := &headTail{max: maxHelperStderr}
	cmd.Stdout, cmd.Stderr = &stdout, stderr
	if err := c.start(cmd); err != nil {
		return nil, bin, fmt.Errorf("%s%s: %w", prefix, bin, err)
	}
	err = cmd.Wait()
	sig := c.finish()
	if sig != nil {
		return nil, bin, fmt.Errorf("%sstopped by %v", prefix, signalName(sig))
	}
	if err != nil {
		return nil, bin, errors.New(c.secrets.String(prefix + helperFailure(bin, err, stderr)))
	}
	return stdout.Bytes(), bin, nil
}

// helperFailure words how the helper failed: its message when it exits
// with status 1 (its errors), else one line saying how it ended.
func helperFailure(bin string, err error, stderr *headTail) string {
	var exit *exec.ExitError
	if !errors.As(err, &exit) {
		return fmt.Sprintf("%s: %v", bin, err)
	}
	if exit.ExitCode() == 1 {
		msg := strings.TrimSpace(strings.TrimPrefix(stderr.String(), helmHelper+": "))
		if msg == "" {
			msg = fmt.Sprintf("%s: %v", bin, err)
		}
		return msg
	}
	how := fmt.Sprintf("exited with status %d", exit.ExitCode())
	if sig, ok := killedBy(exit.ProcessState); ok {
		how = "was killed by " + signalName(sig)
		if sig == syscall.SIGKILL {
			how += " (the kernel's out-of-memory killer sends it, among others)"
		}
	}
	line := ""
	if l := stderr.why(); l != "" {
		line = ": " + strconv.Quote(l)
	}
	return fmt.Sprintf("%s crashed: it %s%s", bin, how, line)
}

// signalName is "SIGTERM", "SIGINT" …, or the signal's description.
func signalName(sig os.Signal) string {
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

// maxHelperStderr bounds what is kept of the helper's standard error
// (its start and its end; a crash dump can be megabytes).
const maxHelperStderr = 64 << 10

// headTail keeps the first max bytes written to it and the last line.
type headTail struct {
	max  int
	head bytes.Buffer
	n    int64     // bytes written
	tail [512]byte // the last bytes written
	t    int       // bytes in tail
}

func (h *headTail) Write(p []byte) (int, error) {
	h.n += int64(len(p))
	if room := h.max - h.head.Len(); room > 0 {
		h.head.Write(p[:min(room, len(p))])
	}
	if len(p) >= len(h.tail) {
		h.t = copy(h.tail[:], p[len(p)-len(h.tail):])
	} else {
		keep := min(h.t, len(h.tail)-len(p))
		copy(h.tail[:], h.tail[h.t-keep:h.t])
		h.t = keep + copy(h.tail[keep:], p)
	}
	return len(p), nil
}

// String is what was kept, with how much was left out.
func (h *headTail) String() string {
	if h.n <= int64(h.head.Len()) {
		return h.head.String()
	}
	s := h.head.String()
	for len(s) > 0 && !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s + fmt.Sprintf("…(%d bytes in all)", h.n)
}

// why is the line that says why a process crashed: a Go runtime's
// "fatal error: …" or "panic: …" line, else the last line, cut to 200
// bytes.
func (h *headTail) why() string {
	for _, l := range strings.Split(h.head.String(), "\n") {
		if strings.HasPrefix(l, "fatal error: ") || strings.HasPrefix(l, "panic: ") {
			return cut(strings.TrimSpace(l))
		}
	}
	tail := strings.TrimRight(string(h.tail[:h.t]), "\r\n\t ")
	if i := strings.LastIndexByte(tail, '\n'); i >= 0 {
		tail = tail[i+1:]
	}
	return cut(strings.TrimSpace(strings.TrimPrefix(tail, helmHelper+": ")))
}

func cut(s string) string {
	if len(s) <= 200 {
		return s
	}
	n := 200
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// start starts the helper and registers it, so that a signal is passed on
// to it.
func (c *chartSource) start(cmd *exec.Cmd) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.signalled != nil {
		return fmt.Errorf("stopped by %v", signalName(c.signalled))
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	c.helper = cmd.Process
	return nil
}

// finish unregisters the helper, and returns the signal that stopped the
// command, if one did.
func (c *chartSource) finish() os.Signal {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.helper = nil
	return c.signalled
}

// watch makes SIGINT and SIGTERM remove the fetched charts: the first
// one is passed on to a running helper, which removes its own temporary
// directories and exits, so that the command fails and its deferred
// cleanup runs; with no helper running, or when the command has not wound
// down after helperGrace, the charts are removed and the process exits
// with status 1. A second signal kills the process the default way.
func (c *chartSource) watch() {
	if c.signals != nil {
		return
	}
	c.signals = make(chan os.Signal, 1)
	c.unwatched = make(chan struct{})
	signal.Notify(c.signals, os.Interrupt, syscall.SIGTERM)
	go func() {
		var sig os.Signal
		select {
		case sig = <-c.signals:
		case <-c.unwatched:
			return
		}
		signal.Stop(c.signals)
		c.mu.Lock()
		c.signalled = sig
		helper := c.helper
		c.mu.Unlock()
		if helper != nil {
			helper.Signal(sig)
			select {
			case <-c.unwatched:
				return
			case <-time.After(helperGrace):
				helper.Kill()
			}
		}
		c.cleanup()
		fmt.Fprintf(c.stderr(), "rehost: stopped by %v; the fetched charts are removed\n", signalName(sig))
		c.exit(1)
	}()
}

// unwatch gives SIGINT and SIGTERM back to their default action (or to
// whoever else handles them).
func (c *chartSource) unwatch() {
	if c.signals == nil {
		return
	}
	signal.Stop(c.signals)
	c.mu.Lock()
	defer c.mu.Unlock()
	select {
	case <-c.unwatched:
	default:
		close(c.unwatched)
	}
}

func (c *chartSource) stderr() io.Writer {
	if c.cmd != nil {
		return c.cmd.ErrOrStderr()
	}
	return os.Stderr
}

func (c *chartSource) exit(code int) {
	if c.exitFunc != nil {
		c.exitFunc(code)
		return
	}
	os.Exit(code)
}
