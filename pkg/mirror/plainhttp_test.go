package mirror

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/registry"
)

// noticeEvents is an events Reporter that also takes notices.
type noticeEvents struct {
	events
	notices []string
	plain   []string // Notice.PlainHTTP
}

func (e *noticeEvents) Notice(n Notice) {
	e.notices = append(e.notices, n.Msg)
	if n.PlainHTTP != "" {
		e.plain = append(e.plain, n.PlainHTTP)
	}
}

// TestPlainHTTPPrivateAddress: go-containerregistry would fall back to
// plain HTTP for an RFC 1918 address; rehost refuses unless the host is
// named insecure. The private address is routed to a plain registry on
// loopback by the dialer.
func TestPlainHTTPPrivateAddress(t *testing.T) {
	src := newTestRegistry(t)
	plain := newTestRegistry(t)
	ref := src.host + "/team/app:1"
	push(t, ref, randomImage(t, 256, 1))
	const private = "10.0.0.5:5000"
	var d net.Dialer
	tr := &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		if addr == private {
			addr = plain.host
		}
		return d.DialContext(ctx, network, addr)
	}}
	jobs := []Job{{Source: ref, Target: private + "/team/app:1"}}

	ev := &noticeEvents{}
	s := newMirror(t, Options{Transport: tr, Reporter: ev, Attachments: AttachmentsNone}).Copy(context.Background(), jobs)
	err := s.Err()
	var pe *PlainHTTPError
	if s.Failed != 1 || !errors.As(err, &pe) || pe.Host != private {
		t.Fatalf("plain HTTP to a private address: %d failed, %v; want a PlainHTTPError for %s", s.Failed, err, private)
	}
	for _, want := range []string{"plain HTTP", private, "insecure", "(Options.Insecure)"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not mention %q: %v", want, err)
		}
	}
	if strings.Contains(err.Error(), "--") {
		t.Errorf("the library's error names a flag: %v", err)
	}
	for _, m := range []string{http.MethodPut, http.MethodPost, http.MethodPatch, http.MethodHead} {
		if n := plain.count(m, "."); n != 0 {
			t.Errorf("%d %s requests reached the plain registry", n, m)
		}
	}

	// Named insecure: copied.
	s = newMirror(t, Options{Transport: tr, Insecure: []string{private}}).Copy(context.Background(), jobs)
	if s.Err() != nil || s.Copied != 1 {
		t.Fatalf("insecure private address: %d copied, %v", s.Copied, s.Err())
	}
	if plain.count(http.MethodPut, "/manifests/1$") != 1 {
		t.Error("the manifest did not reach the plain registry")
	}
}

// TestPlainHTTPOtherLoopback: a plain registry on 127.0.0.2, standing in
// for a private address, needs Insecure; the one on 127.0.0.1 is allowed
// with one notice per host; a TLS registry on 127.0.0.1 gets no notice.
func TestPlainHTTPOtherLoopback(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		t.Skipf("no 127.0.0.2 on this machine: %v", err)
	}
	other := httptest.NewUnstartedServer(registry.New(registry.Logger(nopLogger())))
	other.Listener.Close()
	other.Listener = l
	other.Start()
	t.Cleanup(other.Close)
	u, _ := url.Parse(other.URL)
	host := u.Host

	src := newTestRegistry(t)
	ref := src.host + "/team/app:1"
	push(t, ref, randomImage(t, 256, 1))
	push(t, src.host+"/team/two:1", randomImage(t, 256, 1))
	jobs := []Job{{Source: ref, Target: host + "/team/app:1"}}

	s := newMirror(t, Options{Backoff: fastBackoff}).Copy(context.Background(), jobs)
	var pe *PlainHTTPError
	if s.Failed != 1 || !errors.As(s.Err(), &pe) || !strings.Contains(s.Err().Error(), "speaks plain HTTP") {
		t.Fatalf("plain registry on %s without Insecure: %d failed, %v", host, s.Failed, s.Err())
	}
	s = newMirror(t, Options{Insecure: []string{host}}).Copy(context.Background(), jobs)
	if s.Err() != nil || s.Copied != 1 {
		t.Fatalf("with Insecure: %d copied, %v", s.Copied, s.Err())
	}

	// Loopback over plain HTTP: one notice per host, however many images.
	dst := newTestRegistry(t)
	ev := &noticeEvents{}
	s = newMirror(t, Options{Reporter: ev}).Copy(context.Background(), []Job{
		{Source: ref, Target: dst.host + "/team/app:1"},
		{Source: src.host + "/team/two:1", Target: dst.host + "/team/two:1"},
	})
	if s.Err() != nil || s.Copied != 2 {
		t.Fatalf("loopback: %d copied, %v", s.Copied, s.Err())
	}
	if len(ev.notices) != 2 || !strings.Contains(ev.notices[0], "loopback") || !strings.Contains(strings.Join(ev.notices, "\n"), src.host) || !strings.Contains(strings.Join(ev.notices, "\n"), dst.host) {
		t.Errorf("notices %q, want one for each of %s and %s", ev.notices, src.host, dst.host)
	}
	if got := sorted(ev.plain...); len(got) != 2 || strings.Join(got, " ") != strings.Join(sorted(src.host, dst.host), " ") {
		t.Errorf("plain-HTTP hosts noticed %q, want %s and %s", ev.plain, src.host, dst.host)
	}
	if strings.Contains(strings.Join(ev.notices, "\n"), "--") {
		t.Errorf("a notice names a flag: %q", ev.notices)
	}
	if len(ev.warnings) != 0 {
		t.Errorf("notices must not be image warnings: %q", ev.warnings)
	}

	// TLS on loopback: no plain HTTP, no notice.
	tlsReg := newTLSRegistry(t)
	pool, err := RootCAs(tlsReg.caPEM)
	if err != nil {
		t.Fatal(err)
	}
	ev = &noticeEvents{}
	s = newMirror(t, Options{RootCAs: pool, Reporter: ev}).Copy(context.Background(), []Job{{Source: ref, Target: tlsReg.host + "/team/app:1"}})
	if s.Err() != nil || s.Copied != 1 {
		t.Fatalf("TLS: %d copied, %v", s.Copied, s.Err())
	}
	for _, n := range ev.notices {
		if strings.Contains(n, tlsReg.host) {
			t.Errorf("notice for the TLS registry: %q", n)
		}
	}
}

func TestLoopback(t *testing.T) {
	for h, want := range map[string]bool{
		"localhost:5000": true, "LOCALHOST": true, "reg.localhost:80": true, "127.0.0.1:5000": true,
		"127.0.0.2:5000": true, "[::1]:5000": true, "::1": true,
		"10.0.0.5:5000": false, "192.168.1.2": false, "172.16.0.1:443": false, "sea.hub:5000": false, "localhost.example.com": false,
	} {
		if got := loopback(h); got != want {
			t.Errorf("loopback(%q) = %v, want %v", h, got, want)
		}
	}
}
