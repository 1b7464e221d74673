package mirror

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"syscall"

	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
)

// RootCAs returns the system certificate pool with the PEM certificates of
// pem added: the trust for a registry signed by a private CA (sealer's
// registry, say).
func RootCAs(pem []byte) (*x509.CertPool, error) {
	pool, err := x509.SystemCertPool()
	if err != nil || pool == nil {
		pool = x509.NewCertPool()
	}
	if !pool.AppendCertsFromPEM(pem) {
		return nil, errors.New("no PEM certificate found")
	}
	return pool, nil
}

// hostSet is a set of registry hosts ("host[:port]"), compared without case.
type hostSet map[string]bool

func newHostSet(hosts []string) hostSet {
	s := hostSet{}
	for _, h := range hosts {
		s[strings.ToLower(h)] = true
	}
	return s
}

func (s hostSet) has(h string) bool { return s[strings.ToLower(h)] }

// baseTransport is the HTTP transport under go-containerregistry's own
// wrappers (authentication, retries): the default transport with the
// configured CA pool, and certificate verification off for insecure hosts.
func baseTransport(o Options, insecure hostSet) http.RoundTripper {
	if o.Transport != nil {
		return o.Transport
	}
	secure := remote.DefaultTransport.(*http.Transport).Clone()
	secure.TLSClientConfig = &tls.Config{RootCAs: o.RootCAs, MinVersion: tls.VersionTLS12}
	if len(insecure) == 0 {
		return secure
	}
	unverified := secure.Clone()
	unverified.TLSClientConfig = &tls.Config{InsecureSkipVerify: true} //nolint:gosec // the user asked for it, for these hosts only
	return &hostRouter{insecure: insecure, secure: secure, unverified: unverified}
}

// hostRouter sends requests for insecure hosts through a transport that
// does not verify certificates, and all others through the secure one.
type hostRouter struct {
	insecure           hostSet
	secure, unverified http.RoundTripper
}

func (h *hostRouter) RoundTrip(req *http.Request) (*http.Response, error) {
	if h.insecure.has(req.URL.Host) {
		return h.unverified.RoundTrip(req)
	}
	return h.secure.RoundTrip(req)
}

// counter counts the bytes transferred for one job. It travels in the
// request context, which go-containerregistry passes down to every request
// it makes for the job.
type counter struct {
	n         atomic.Int64
	downloads bool // count response bodies (the destination is a layout)
	report    func(int64)
}

func (c *counter) add(n int) {
	if n > 0 {
		c.n.Add(int64(n))
		c.report(int64(n))
	}
}

type counterKey struct{}

func withCounter(ctx context.Context, c *counter) context.Context {
	return context.WithValue(ctx, counterKey{}, c)
}

// countingTransport counts request bodies (uploads) and, for jobs that
// download into a layout, response bodies.
type countingTransport struct{ inner http.RoundTripper }

func (t countingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	c, _ := req.Context().Value(counterKey{}).(*counter)
	if c == nil {
		return t.inner.RoundTrip(req)
	}
	if req.Body != nil && req.Body != http.NoBody {
		r := req.Clone(req.Context())
		r.Body = &countingBody{ReadCloser: req.Body, c: c}
		req = r
	}
	resp, err := t.inner.RoundTrip(req)
	if err == nil && c.downloads && req.Method == http.MethodGet && resp.Body != nil {
		resp.Body = &countingBody{ReadCloser: resp.Body, c: c}
	}
	return resp, err
}

type countingBody struct {
	io.ReadCloser
	c *counter
}

func (b *countingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.c.add(n)
	return n, err
}

// retryable reports whether a request that failed with err is worth
// retrying: 408, 429 and 5xx responses, and connection errors (refused,
// reset, broken pipe, timeouts, truncated bodies). go-containerregistry
// calls it for every request and every blob upload.
func retryable(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var te *transport.Error
	if errors.As(err, &te) {
		return te.StatusCode == http.StatusRequestTimeout || te.StatusCode == http.StatusTooManyRequests || te.StatusCode >= 500 || te.Temporary()
	}
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF),
		errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET),
		errors.Is(err, syscall.ECONNABORTED), errors.Is(err, syscall.EPIPE),
		errors.Is(err, net.ErrClosed):
		return true
	}
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// retryStatusCodes are the response codes go-containerregistry retries.
var retryStatusCodes = []int{
	http.StatusRequestTimeout, http.StatusTooManyRequests,
	http.StatusInternalServerError, http.StatusBadGateway,
	http.StatusServiceUnavailable, http.StatusGatewayTimeout,
}
