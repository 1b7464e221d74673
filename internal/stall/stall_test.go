package stall

import (
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

var errTest = errors.New("test server stalled")

// TestTransport: a server that sends nothing, or its body at a trickle, is
// abandoned after about a window with an *Error naming the request; one
// that sends promptly, or a window of zero, is left alone.
func TestTransport(t *testing.T) {
	const window = 200 * time.Millisecond
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/silent":
			<-r.Context().Done()
		case "/trickle":
			w.WriteHeader(http.StatusOK)
			for i := 0; i < 20; i++ {
				if _, err := w.Write([]byte("x")); err != nil {
					return
				}
				w.(http.Flusher).Flush()
				select {
				case <-r.Context().Done():
					return
				case <-time.After(50 * time.Millisecond):
				}
			}
		default:
			io.WriteString(w, strings.Repeat("x", 1<<20))
		}
	}))
	defer srv.Close()
	for _, tt := range []struct {
		path   string
		window time.Duration
		stall  bool
	}{
		{"/silent", window, true},
		{"/trickle", window, true},
		{"/fast", window, false},
		{"/trickle", 0, false},
	} {
		c := &http.Client{Transport: Transport{Inner: http.DefaultTransport, Window: tt.window, Sentinel: errTest}}
		start := time.Now()
		resp, err := c.Get(srv.URL + tt.path)
		if err == nil {
			_, err = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		took := time.Since(start)
		if !tt.stall {
			if err != nil {
				t.Errorf("%s window %s: %v", tt.path, tt.window, err)
			}
			continue
		}
		var se *Error
		if !errors.Is(err, errTest) || !errors.As(err, &se) || se.Path != tt.path || se.Method != http.MethodGet {
			t.Errorf("%s: error %v, want a stall of GET %s", tt.path, err, tt.path)
		}
		var ne net.Error
		if !errors.As(err, &ne) || !ne.Timeout() {
			t.Errorf("%s: error %v is not a timeout", tt.path, err)
		}
		if took < window || took > 10*window+2*time.Second {
			t.Errorf("%s: abandoned after %s, want about %s", tt.path, took, window)
		}
		if want := "less than 204 bytes moved in 200ms"; err != nil && !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %q does not say %q", tt.path, err, want)
		}
	}
}
