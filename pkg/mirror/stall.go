package mirror

import (
	"errors"
	"net/http"
	"time"

	"github.com/rehost/rehost/internal/stall"
)

// DefaultStallTimeout is Options.StallTimeout by default.
const DefaultStallTimeout = stall.DefaultTimeout

// ErrStalled is a request to a registry abandoned because the registry
// stopped answering or trickled (Options.StallTimeout): it moved less than
// 1 KiB/s over the window. The request's error is a timeout, so that it
// is retried with backoff like other timeouts.
var ErrStalled = errors.New("registry stalled")

// stallGuard abandons a request that moves less than 1 KiB/s over window
// (Options.StallTimeout), counting the request body read by the transport,
// the response headers and the response body (internal/stall, shared with
// pkg/helm's chart downloads).
func stallGuard(inner http.RoundTripper, window time.Duration) http.RoundTripper {
	return stall.Transport{Inner: inner, Window: window, Sentinel: ErrStalled}
}
