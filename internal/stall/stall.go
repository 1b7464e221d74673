// Package stall abandons HTTP requests that stop moving: a server that does
// not answer, takes an upload at a trickle or sends its answer at a
// trickle fails the request instead of holding a run forever. It is shared
// by the modules that fetch over HTTP (pkg/mirror's registry requests,
// pkg/helm's chart downloads), which cannot import each other.
package stall

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"
)

// DefaultTimeout is the window of a Transport by default in rehost
// (--stall-timeout).
const DefaultTimeout = 2 * time.Minute

// MinRate is the slowest transfer a request may keep up: 1 KiB/s averaged
// over the window.
const MinRate = 1024

// Error is a request abandoned because it moved less than MinBytes(Window)
// bytes in a window. It is a timeout (net.Error), so that callers that
// retry timeouts retry it; errors.Is(err, Sentinel) holds for the
// Transport's sentinel.
type Error struct {
	Method, Host, Path string
	Window             time.Duration
	Sentinel           error
}

func (e *Error) Error() string {
	return fmt.Sprintf("%s %s%s: %v: less than %d bytes moved in %s", e.Method, e.Host, e.Path, e.Sentinel, MinBytes(e.Window), e.Window)
}

func (e *Error) Is(target error) bool { return e.Sentinel != nil && target == e.Sentinel }
func (e *Error) Timeout() bool        { return true }
func (e *Error) Temporary() bool      { return true }

// MinBytes is how many bytes a request must move per window.
func MinBytes(window time.Duration) int64 {
	n := int64(window.Seconds() * MinRate)
	if n < 1 {
		n = 1
	}
	return n
}

// Transport abandons a request that moves less than MinRate bytes a second
// over Window, counting the request body read by the inner transport, the
// response headers and the response body. Its error is an *Error wrapping
// Sentinel. A Window of zero or less turns the check off.
//
// A request that spends most of a window waiting for its own body (a copy
// whose source is slow) is not abandoned: it waits for whoever supplies
// the body, which has its own watch.
type Transport struct {
	Inner    http.RoundTripper
	Window   time.Duration
	Sentinel error
}

func (g Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if g.Window <= 0 {
		return g.Inner.RoundTrip(req)
	}
	ctx, cancel := context.WithCancel(req.Context())
	w := &watch{cancel: cancel, min: MinBytes(g.Window), err: &Error{Method: req.Method, Host: req.URL.Host, Path: req.URL.Path, Window: g.Window, Sentinel: g.Sentinel}}
	w.mu.Lock()
	w.timer = time.AfterFunc(g.Window, w.tick(g.Window))
	w.mu.Unlock()
	r := req.WithContext(ctx)
	if req.Body != nil && req.Body != http.NoBody {
		r.Body = &watchedBody{ReadCloser: req.Body, w: w, request: true}
	}
	resp, err := g.Inner.RoundTrip(r)
	if err != nil {
		w.stop()
		if w.fired() {
			return nil, w.err
		}
		return nil, err
	}
	w.moved(MinBytes(g.Window)) // the headers came: a new window for the body
	resp.Body = &watchedBody{ReadCloser: resp.Body, w: w, response: true}
	return resp, nil
}

// watch counts the bytes a request moves and cancels it when a window
// passes with too few.
type watch struct {
	mu        sync.Mutex
	n         int64         // bytes moved in this window
	reading   int           // reads of the request body under way
	readStart time.Time     // when the first of them started
	inRead    time.Duration // time spent reading the request body in this window
	min       int64
	done      bool
	stall     bool
	timer     *time.Timer
	cancel    context.CancelFunc
	err       *Error
}

func (w *watch) moved(n int64) {
	w.mu.Lock()
	w.n += n
	w.mu.Unlock()
}

func (w *watch) tick(window time.Duration) func() {
	return func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		if w.done {
			return
		}
		inRead := w.inRead
		if w.reading > 0 {
			now := time.Now()
			inRead += now.Sub(w.readStart)
			w.readStart = now
		}
		if w.n < w.min && inRead < window/2 {
			w.stall, w.done = true, true
			w.cancel()
			return
		}
		w.n, w.inRead = 0, 0
		w.timer.Reset(window)
	}
}

// startRead and endRead bracket a read of the request body.
func (w *watch) startRead() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.reading == 0 {
		w.readStart = time.Now()
	}
	w.reading++
}

func (w *watch) endRead() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.reading--
	if w.reading == 0 {
		w.inRead += time.Since(w.readStart)
	}
}

func (w *watch) fired() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.stall
}

// stop ends the watch and releases the request's context.
func (w *watch) stop() {
	w.mu.Lock()
	w.done = true
	w.mu.Unlock()
	w.timer.Stop()
	w.cancel()
}

// watchedBody counts what goes through a request or response body; a
// response body's errors become the stall error once the watch fired.
type watchedBody struct {
	io.ReadCloser
	w                 *watch
	request, response bool
}

func (b *watchedBody) Read(p []byte) (int, error) {
	if b.request {
		b.w.startRead()
		defer b.w.endRead()
	}
	n, err := b.ReadCloser.Read(p)
	b.w.moved(int64(n))
	if err != nil && err != io.EOF && b.w.fired() {
		err = b.w.err
	}
	return n, err
}

func (b *watchedBody) Close() error {
	err := b.ReadCloser.Close()
	if b.response {
		b.w.stop()
	}
	return err
}
