package mirror

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"
)

// DefaultStallTimeout is Options.StallTimeout by default.
const DefaultStallTimeout = 2 * time.Minute

// minRate is the slowest transfer a request may keep up: 1 KiB/s averaged
// over Options.StallTimeout.
const minRate = 1024

// ErrStalled is a request to a registry abandoned because the registry
// stopped answering or trickled (Options.StallTimeout).
var ErrStalled = errors.New("registry stalled")

// stallError is ErrStalled for one request. It is a timeout, so that the
// request is retried with backoff like other timeouts.
type stallError struct {
	method, host, path string
	window             time.Duration
}

func (e *stallError) Error() string {
	return fmt.Sprintf("%s %s%s: %v: less than %d bytes moved in %s", e.method, e.host, e.path, ErrStalled, minBytes(e.window), e.window)
}

func (e *stallError) Is(target error) bool { return target == ErrStalled }
func (e *stallError) Timeout() bool        { return true }
func (e *stallError) Temporary() bool      { return true }

// minBytes is how many bytes a request must move per window.
func minBytes(window time.Duration) int64 {
	n := int64(window.Seconds() * minRate)
	if n < 1 {
		n = 1
	}
	return n
}

// stallGuard abandons a request that moves less than minRate bytes a
// second over a window (Options.StallTimeout), counting the request body
// read by the transport, the response headers and the response body. A
// registry that stops answering, accepts an upload at a trickle or sends a
// blob at a trickle then fails the request with ErrStalled instead of
// holding the run forever.
type stallGuard struct {
	inner  http.RoundTripper
	window time.Duration
}

func (g stallGuard) RoundTrip(req *http.Request) (*http.Response, error) {
	if g.window <= 0 {
		return g.inner.RoundTrip(req)
	}
	ctx, cancel := context.WithCancel(req.Context())
	w := &watch{cancel: cancel, min: minBytes(g.window), err: &stallError{method: req.Method, host: req.URL.Host, path: req.URL.Path, window: g.window}}
	w.mu.Lock()
	w.timer = time.AfterFunc(g.window, w.tick(g.window))
	w.mu.Unlock()
	r := req.WithContext(ctx)
	if req.Body != nil && req.Body != http.NoBody {
		r.Body = &watchedBody{ReadCloser: req.Body, w: w, request: true}
	}
	resp, err := g.inner.RoundTrip(r)
	if err != nil {
		w.stop()
		if w.fired() {
			return nil, w.err
		}
		return nil, err
	}
	w.moved(minBytes(g.window)) // the headers came: a new window for the body
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
	err       *stallError
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
		// A request that spent most of the window waiting for its own
		// body waits for whoever supplies it (the source of a copy,
		// which has its own watch), not for this registry.
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
