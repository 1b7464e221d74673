package mirror

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
	"github.com/google/go-containerregistry/pkg/v1/types"
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

// plainGuard refuses plain HTTP to registry hosts that were not named
// insecure. go-containerregistry falls back to plain HTTP for localhost,
// loopback and private (RFC 1918) addresses; credentials would then cross
// a network unencrypted without anyone asking for it. Loopback stays
// allowed (the traffic never leaves the machine), with one notice per
// host.
type plainGuard struct {
	inner http.RoundTripper
	m     *Mirror
}

// PlainHTTPError is a refused plain-HTTP request, or a registry that
// answered a TLS request in plain HTTP. Its message ends with the remedy
// in this package's terms, "(Options.Insecure)": a front end adds its own
// (rehost mirror names --insecure and --insecure-source).
type PlainHTTPError struct {
	// Host is the registry ("host[:port]").
	Host string
	// Err is the TLS failure when the registry answered in plain HTTP
	// (http.ErrSchemeMismatch); nil when a plain-HTTP request was refused.
	Err error
}

func (e *PlainHTTPError) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("%v: registry %s speaks plain HTTP, which is used only for hosts named insecure (Options.Insecure)", e.Err, e.Host)
	}
	return fmt.Sprintf("plain HTTP to %s refused: TLS is required unless the host is named insecure (Options.Insecure)", e.Host)
}

func (e *PlainHTTPError) Unwrap() error { return e.Err }

func (g plainGuard) RoundTrip(req *http.Request) (*http.Response, error) {
	host := req.URL.Host
	if req.URL.Scheme == "http" && !g.m.insecure.has(host) {
		if !loopback(host) {
			if req.Body != nil {
				req.Body.Close()
			}
			return nil, &PlainHTTPError{Host: host}
		}
		if _, done := g.m.notified.LoadOrStore(strings.ToLower(host), true); !done {
			g.m.notice(Notice{
				Msg:       fmt.Sprintf("%s is reached over plain HTTP: it is a loopback address (any other registry needs TLS or to be named insecure)", host),
				PlainHTTP: host,
			})
		}
	}
	resp, err := g.inner.RoundTrip(req)
	var rh tls.RecordHeaderError
	if err != nil && req.URL.Scheme == "https" && errors.As(err, &rh) && string(rh.RecordHeader[:]) == "HTTP/" {
		return nil, &PlainHTTPError{Host: host, Err: http.ErrSchemeMismatch}
	}
	return resp, err
}

// loopback reports whether a registry host ("host[:port]") is a loopback
// address or a localhost name.
func loopback(hostport string) bool {
	h := hostport
	if host, _, err := net.SplitHostPort(hostport); err == nil {
		h = host
	}
	h = strings.ToLower(strings.Trim(h, "[]"))
	if h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
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

// uncounted is ctx for requests whose bytes are not the image's, such as
// listing tags and referrers.
func uncounted(ctx context.Context) context.Context {
	if ctx.Value(counterKey{}) == nil {
		return ctx
	}
	return context.WithValue(ctx, counterKey{}, (*counter)(nil))
}

// countingTransport counts request bodies (uploads) and, for jobs that
// download into a layout, response bodies. It also notes, per registry
// host, whether the OCI 1.1 referrers API answered (go-containerregistry
// asks it before it falls back to the referrers tag schema), so that later
// images need not ask again.
type countingTransport struct {
	inner   http.RoundTripper
	api     *sync.Map // host -> bool
	secrets *secrets  // notes the Authorization headers sent
}

// referrersPath is the path of the referrers API.
var referrersPath = regexp.MustCompile(`^/v2/.+/referrers/[a-z0-9+._-]+:[a-zA-Z0-9=_-]+$`)

func (t countingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if t.secrets != nil {
		t.secrets.header(req.Header.Get("Authorization"))
	}
	resp, err := t.roundTrip(req)
	if err == nil && t.api != nil && req.Method == http.MethodGet && referrersPath.MatchString(req.URL.Path) {
		host := strings.ToLower(req.URL.Host)
		switch {
		case resp.StatusCode == http.StatusOK && resp.Header.Get("Content-Type") == string(types.OCIImageIndex):
			t.api.Store(host, true)
		case resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusBadRequest || resp.StatusCode == http.StatusNotAcceptable:
			t.api.Store(host, false)
		}
	}
	return resp, err
}

func (t countingTransport) roundTrip(req *http.Request) (*http.Response, error) {
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
