package helm

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync/atomic"

	"github.com/rehost/rehost/internal/bytesize"
	"github.com/rehost/rehost/internal/redact"
	"github.com/rehost/rehost/pkg/rendered"
	"helm.sh/helm/v3/pkg/repo"
)

// Limits of Pull by default (PullOptions).
const (
	// DefaultMaxChartSize bounds what is downloaded for a chart, all
	// together: the packaged chart and its provenance file, or an OCI
	// chart's manifest, tag list, config and layers. It is pkg/mirror's
	// bound on a chart it pushes; Helm's loader refuses a chart larger
	// than 100 MiB unpacked anyway.
	DefaultMaxChartSize = rendered.DefaultMaxChartSize
	// DefaultMaxIndexSize bounds a chart repository's index.yaml. Helm
	// reads an index whole and parses it twice, at about 30 times its size
	// in memory (a 16 MiB index: about 550 MB at the peak), so the bound is
	// lower than a chart's; the largest public indexes are a few MiB to a
	// few tens of MiB.
	DefaultMaxIndexSize = rendered.DefaultMaxIndexSize
	// DefaultStallTimeout is how long a chart download may move less than
	// 1 KiB/s (waiting for an answer included) before it is abandoned.
	DefaultStallTimeout = rendered.DefaultStallTimeout
)

// ErrStalled is wrapped by the error of a chart download abandoned because
// the server stopped answering or trickled (PullOptions.StallTimeout).
var ErrStalled = errors.New("server stalled")

// TooLargeError is a download refused because it is larger than its limit
// (PullOptions.MaxChartSize, MaxIndexSize): its declared size is, or more
// than the limit was sent.
type TooLargeError struct {
	// URL is what was requested, credentials redacted.
	URL string
	// Index says the download is a repository's index.yaml; otherwise it
	// is part of a chart's downloads (the packaged chart, its provenance
	// file, an OCI manifest or blob), which the limit bounds together.
	Index bool
	// Limit is the limit in bytes.
	Limit int64
	// Declared is the size the server declared (Content-Length), or -1
	// when it declared none and sent more than the limit allowed.
	Declared int64
	// Before is what the chart's earlier downloads took of the limit.
	Before int64
}

func (e *TooLargeError) Error() string {
	switch {
	case e.Index && e.Declared >= 0:
		return fmt.Sprintf("GET %s: the repository index is %s, more than the limit of %s", e.URL, bytesize.Format(e.Declared), bytesize.Format(e.Limit))
	case e.Index:
		return fmt.Sprintf("GET %s: the repository index is larger than the limit of %s", e.URL, bytesize.Format(e.Limit))
	case e.Declared >= 0 && e.Before > 0:
		return fmt.Sprintf("GET %s: %s, after %s downloaded for the chart, is more than the limit of %s", e.URL, bytesize.Format(e.Declared), bytesize.Format(e.Before), bytesize.Format(e.Limit))
	case e.Declared >= 0:
		return fmt.Sprintf("GET %s: the chart download is %s, more than the limit of %s", e.URL, bytesize.Format(e.Declared), bytesize.Format(e.Limit))
	}
	return fmt.Sprintf("GET %s: the chart's downloads are larger than the limit of %s", e.URL, bytesize.Format(e.Limit))
}

// budget is what the downloads of one kind (the chart's, the index) may
// read together.
type budget struct {
	limit int64
	used  atomic.Int64
}

// fetchTransport is the transport of every request of a Pull, under Helm's
// getters and registry client:
//
//   - the response bodies are bounded together (a chart's .tgz and .prov,
//     or its OCI manifest, config and layers, which Helm's registry client
//     fetches concurrently), and a declared size above what is left is
//     refused before the body is read (TooLargeError);
//   - the requests end when ctx ends (a signal, in rehost-helm);
//   - a redirect to another origin (scheme, host and port) than the
//     request's first drops its Authorization header: Go's client keeps
//     it for any port and scheme of the same host name;
//   - every Authorization header sent is noted in secrets, so that
//     messages are scrubbed of it.
type fetchTransport struct {
	inner   http.RoundTripper
	budget  *budget
	index   bool
	ctx     context.Context
	secrets *redact.Secrets
}

func (t *fetchTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Header.Get("Authorization") != "" && origin(first(req).URL) != origin(req.URL) {
		req = req.Clone(req.Context())
		req.Header.Del("Authorization")
	}
	t.secrets.AddHeader(req.Header.Get("Authorization"))
	ctx, cancel := context.WithCancel(req.Context())
	stop := context.AfterFunc(t.ctx, cancel)
	done := func() {
		stop()
		cancel()
	}
	// An error once ctx has ended is ctx's.
	ended := func(err error) error {
		if err != nil && err != io.EOF && t.ctx.Err() != nil {
			return fmt.Errorf("%s %s: %w", req.Method, redact.URLs(req.URL.String()), context.Cause(t.ctx))
		}
		return err
	}
	resp, err := t.inner.RoundTrip(req.WithContext(ctx))
	if err != nil {
		done()
		return nil, ended(err)
	}
	tooLarge := &TooLargeError{URL: redact.URLs(req.URL.String()), Index: t.index, Limit: t.budget.limit, Declared: -1}
	if used := t.budget.used.Load(); resp.ContentLength > t.budget.limit-used {
		resp.Body.Close()
		done()
		tooLarge.Declared, tooLarge.Before = resp.ContentLength, used
		return nil, tooLarge
	}
	resp.Body = &limitedBody{rc: resp.Body, budget: t.budget, size: resp.ContentLength, err: tooLarge, done: done, ended: ended}
	return resp, nil
}

// first is the first request of the redirects that led to req.
func first(req *http.Request) *http.Request {
	for req.Response != nil && req.Response.Request != nil {
		req = req.Response.Request
	}
	return req
}

// origin is the scheme, host and port of u: "https://charts.example:443".
func origin(u *url.URL) string {
	port := u.Port()
	if port == "" {
		switch strings.ToLower(u.Scheme) {
		case "http":
			port = "80"
		case "https":
			port = "443"
		}
	}
	return strings.ToLower(u.Scheme) + "://" + net.JoinHostPort(strings.ToLower(u.Hostname()), port)
}

// sameOrigin says whether two URLs have the same origin.
func sameOrigin(a, b string) bool {
	ua, err := url.Parse(a)
	if err != nil {
		return false
	}
	ub, err := url.Parse(b)
	return err == nil && origin(ua) == origin(ub)
}

// limitedBody fails with err once its budget is spent; size is the
// declared size, or -1.
type limitedBody struct {
	rc     io.ReadCloser
	budget *budget
	over   bool
	size   int64
	err    error
	done   func()
	ended  func(error) error
}

func (b *limitedBody) Read(p []byte) (int, error) {
	if b.over {
		return 0, b.err
	}
	n, err := b.rc.Read(p)
	err = b.ended(err)
	if n > 0 {
		if over := b.budget.used.Add(int64(n)) - b.budget.limit; over > 0 {
			b.over = true
			return max(0, n-int(over)), b.err
		}
	}
	return n, err
}

// WriteTo reads the body into w. Helm's getters copy a body into a
// bytes.Buffer (io.Copy, which prefers the source's WriteTo), which
// doubles its capacity as it fills: up to five times a body's size in
// memory at once. Into a bytes.Buffer, WriteTo grows the buffer once to the
// declared size, or reads an undeclared body in chunks first and grows it
// once to their total: at most twice the body's size, once the limit when
// the body is larger.
func (b *limitedBody) WriteTo(w io.Writer) (int64, error) {
	buf, ok := w.(*bytes.Buffer)
	if !ok {
		return io.Copy(w, struct{ io.Reader }{b})
	}
	if b.size >= 0 {
		buf.Grow(int(b.size) + bytes.MinRead) // ReadFrom wants MinRead free to see the end
		return buf.ReadFrom(struct{ io.Reader }{b})
	}
	const chunk = 256 << 10
	var (
		chunks [][]byte
		total  int64
		err    error
	)
	for err == nil {
		c := make([]byte, chunk)
		var n int
		n, err = io.ReadFull(b, c)
		if n > 0 {
			chunks = append(chunks, c[:n])
			total += int64(n)
		}
	}
	if err != io.EOF && err != io.ErrUnexpectedEOF {
		return 0, err
	}
	buf.Grow(int(total))
	for _, c := range chunks {
		buf.Write(c)
	}
	return total, nil
}

func (b *limitedBody) Close() error {
	err := b.rc.Close()
	b.done()
	return err
}

// shell is an http.Transport for Helm's HTTP getter (getter.WithTransport
// takes no other type) that hands every http and https request to rt.
func shell(rt http.RoundTripper) *http.Transport {
	// A non-nil TLSNextProto keeps the shell from configuring HTTP/2,
	// which would register "https" itself.
	t := &http.Transport{TLSNextProto: map[string]func(string, *tls.Conn) http.RoundTripper{}}
	t.RegisterProtocol("http", rt)
	t.RegisterProtocol("https", rt)
	return t
}

// originTransports sends each request with the TLS settings of the
// repository at its origin (caFile, certFile and keyFile,
// insecure_skip_tls_verify of the Helm repositories file), or with the
// defaults: Helm's getter applies them only when it makes its own
// transport, which would not be bounded.
type originTransports struct {
	byOrigin map[string]*http.Transport
	fallback *http.Transport
}

func (o *originTransports) RoundTrip(req *http.Request) (*http.Response, error) {
	if t, ok := o.byOrigin[origin(req.URL)]; ok {
		return t.RoundTrip(req)
	}
	return o.fallback.RoundTrip(req)
}

// baseTransport is what Helm's HTTP getter makes (proxies from the
// environment, no transparent decompression).
func baseTransport() *http.Transport {
	return &http.Transport{Proxy: http.ProxyFromEnvironment, DisableCompression: true}
}

// newOriginTransports reads the TLS settings of the repositories file at
// path (none when it does not exist).
func newOriginTransports(path string) (*originTransports, error) {
	o := &originTransports{byOrigin: map[string]*http.Transport{}, fallback: baseTransport()}
	if path == "" {
		return o, nil
	}
	f, err := repo.LoadFile(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return o, nil
		}
		return nil, err
	}
	for _, e := range f.Repositories {
		if e.CAFile == "" && e.CertFile == "" && e.KeyFile == "" && !e.InsecureSkipTLSverify {
			continue
		}
		u, err := url.Parse(e.URL)
		if err != nil {
			continue // Helm refuses it when it is used
		}
		cfg, err := tlsConfig(e)
		if err != nil {
			return nil, fmt.Errorf("repository %s (%s): %w", e.Name, redact.URLs(e.URL), err)
		}
		t := baseTransport()
		t.TLSClientConfig = cfg
		o.byOrigin[origin(u)] = t
	}
	return o, nil
}

// tlsConfig is the TLS configuration of a repository entry, as Helm's
// getter makes it: the CA file as the only roots, the client certificate.
func tlsConfig(e *repo.Entry) (*tls.Config, error) {
	cfg := &tls.Config{InsecureSkipVerify: e.InsecureSkipTLSverify} //nolint:gosec // the user's repository configuration asks for it
	if e.CertFile != "" && e.KeyFile != "" {
		cert, err := tls.LoadX509KeyPair(e.CertFile, e.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("client certificate: %w", err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	if e.CAFile != "" {
		pem, err := os.ReadFile(e.CAFile)
		if err != nil {
			return nil, fmt.Errorf("CA file: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("CA file %s: no certificate in it", e.CAFile)
		}
		cfg.RootCAs = pool
	}
	return cfg, nil
}
