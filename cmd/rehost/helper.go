package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
	"time"

	"github.com/rehost/rehost/cmd/rehost/internal/helmexec"
)

// helperGrace is how long a signalled command waits for the rehost-helm
// it runs to remove its temporary directories and exit, and for itself to
// wind down, before it removes the fetched charts and exits anyway.
const helperGrace = 5 * time.Second

// helmClient is the command's client of rehost-helm: signals are passed
// on to the helper while it runs (watch), and the credentials of the
// chart references are kept out of its messages.
func (c *chartSource) helmClient() (*helmexec.Client, error) {
	bin, err := findHelmHelper()
	if err != nil {
		return nil, err
	}
	return &helmexec.Client{Path: bin, Start: c.start, Stopped: c.finish, Redact: c.redact}, nil
}

// runHelper runs rehost-helm with args and returns its standard output and
// the helper's path. Its error message (which names the chart) follows
// prefix. With tmp set, the helper's temporary directories go there
// (TMPDIR): inside the command's own, so that they are removed with it
// even when the helper is killed.
//
// A helper that fails says why on standard error, which becomes the
// error; one that crashes (a signal, an out-of-memory kill, a Go panic or
// runtime error) is told in one line (helmexec.CrashError). While it
// runs, SIGINT and SIGTERM are passed on to it (watch).
func (c *chartSource) runHelper(prefix string, args []string, stdin io.Reader, tmp string) ([]byte, string, error) {
	hc, err := c.helmClient()
	if err != nil {
		return nil, "", err
	}
	out, err := hc.Run(args, stdin, tmp)
	if err != nil {
		return nil, hc.Path, helperError(prefix, err)
	}
	return out, hc.Path, nil
}

// helperError words an error of the rehost-helm client after prefix,
// which names the chart: a helper of another release is told how to get
// the right one.
func helperError(prefix string, err error) error {
	var format *helmexec.FormatError
	if errors.As(err, &format) {
		return fmt.Errorf("%s%w: install the rehost-helm of the same release as rehost (%s)", prefix, err, installHint(helmHelper))
	}
	return fmt.Errorf("%s%w", prefix, err)
}

// start starts the helper and registers it, so that a signal is passed on
// to it.
func (c *chartSource) start(cmd *exec.Cmd) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.signalled != nil {
		return fmt.Errorf("stopped by %v", helmexec.SignalName(c.signalled))
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
		fmt.Fprintf(c.stderr(), "rehost: stopped by %v; the fetched charts are removed\n", helmexec.SignalName(sig))
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
