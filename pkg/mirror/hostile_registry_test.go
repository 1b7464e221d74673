package mirror

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/rehost/rehost/pkg/rewrite"
)

// Credentials of the hostile registry, and the token its token server
// hands out: none may appear in anything rehost prints.
const (
	robotUser     = "robot"
	robotPassword = "pw-SECRET-5551212"
	robotToken    = "tok-SECRET-1234567890abcdef"
	queryToken    = "qs-SECRET-987654"
)

var robotBasic = base64.StdEncoding.EncodeToString([]byte(robotUser + ":" + robotPassword))

// staticKeychain gives the same credentials for every registry.
type staticKeychain struct{ auth authn.Authenticator }

func (k staticKeychain) Resolve(authn.Resource) (authn.Authenticator, error) { return k.auth, nil }

// echoRegistry is an in-memory registry behind a token server; requests
// that deny selects get an error whose body echoes the request's
// Authorization header, and whatever else body says.
func echoRegistry(t *testing.T, deny func(*http.Request) bool, body func(r *http.Request) (contentType, text string)) *testRegistry {
	t.Helper()
	var reg *testRegistry
	inner := registry.New(registry.Logger(discardLogger()))
	reg = serveRegistry(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/token" {
			if u, p, ok := r.BasicAuth(); !ok || u != robotUser || p != robotPassword {
				w.WriteHeader(http.StatusUnauthorized)
				return
			}
			fmt.Fprintf(w, `{"token":%q,"access_token":%q}`, robotToken, robotToken)
			return
		}
		if r.Header.Get("Authorization") != "Bearer "+robotToken {
			w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer realm="http://%s/token",service="hostile"`, reg.host))
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		if deny(r) {
			io.Copy(io.Discard, r.Body)
			ct, text := body(r)
			w.Header().Set("Content-Type", ct)
			w.WriteHeader(http.StatusForbidden)
			io.WriteString(w, text)
			return
		}
		inner.ServeHTTP(w, r)
	}))
	return reg
}

// TestHostileRegistrySecrets: a registry whose error bodies echo the
// request's headers, credentials in URLs and form fields, and terminal
// escapes: rehost prints none of the credentials (Authorization header
// values, the token, the password, a token= query value), as the source
// of a copy or as the destination of an import; the error still says what
// happened.
func TestHostileRegistrySecrets(t *testing.T) {
	bodies := map[string]func(r *http.Request) (string, string){
		"plain echo": func(r *http.Request) (string, string) {
			a := r.Header.Get("Authorization")
			return "text/plain", "denied\nAuthorization: " + a + "\nAuthorization: " + a + "\n"
		},
		"json echo": func(r *http.Request) (string, string) {
			a := r.Header.Get("Authorization")
			return "application/json", fmt.Sprintf(`{"errors":[{"code":"DENIED","message":"request had Authorization: %s; see https://%s:%s@example.com/x?token=%s&x=1","detail":{"authorization":%q,"password":%q}}]}`,
				a, robotUser, robotPassword, queryToken, a, robotPassword)
		},
		"credentials anywhere": func(r *http.Request) (string, string) {
			return "text/plain", fmt.Sprintf("basic header was Basic %s, token %s, password=%s, raw %s, escapes \x1b]0;owned\x07\x1b[2J", robotBasic, robotToken, robotPassword, robotPassword)
		},
	}
	auth := authn.FromConfig(authn.AuthConfig{Username: robotUser, Password: robotPassword})
	for name, body := range bodies {
		t.Run("source/"+name, func(t *testing.T) {
			src := echoRegistry(t, func(r *http.Request) bool {
				return strings.Contains(r.URL.Path, "/manifests/") && r.Method == http.MethodGet
			}, body)
			dst := newTestRegistry(t)
			var out bytes.Buffer
			m := newMirror(t, Options{Keychain: staticKeychain{auth}, Reporter: textReport{&out}, Attachments: AttachmentsNone})
			var s Summary
			within(t, hang, func() {
				s = m.Copy(context.Background(), []Job{{Source: src.host + "/team/app:1", Target: dst.host + "/team/app:1"}})
			})
			checkScrubbed(t, s, out.String())
		})
		t.Run("destination/"+name, func(t *testing.T) {
			b := newBundle(t)
			b.dst = echoRegistry(t, func(r *http.Request) bool {
				return r.Method == http.MethodPost && strings.Contains(r.URL.Path, "/blobs/uploads/")
			}, body)
			var out bytes.Buffer
			m := newMirror(t, Options{Keychain: staticKeychain{auth}, Reporter: textReport{&out}, Attachments: AttachmentsNone})
			var s Summary
			var err error
			within(t, hang, func() {
				s, err = m.Import(context.Background(), b.dir, mapper(t, rewrite.Config{Registry: b.dst.host}))
			})
			if err != nil {
				t.Fatal(err)
			}
			checkScrubbed(t, s, out.String())
		})
	}
}

// checkScrubbed checks that a run failed with 403, and that neither its
// errors nor its report hold a credential or a raw escape.
func checkScrubbed(t *testing.T, s Summary, report string) {
	t.Helper()
	if s.Failed == 0 {
		t.Fatal("the run did not fail")
	}
	for what, text := range map[string]string{"error": s.Err().Error(), "report": report} {
		for _, secret := range []string{robotPassword, robotToken, robotBasic, queryToken, "\x1b"} {
			if strings.Contains(text, secret) {
				t.Errorf("the %s holds %q:\n%s", what, secret, text)
			}
		}
		if !strings.Contains(text, "403") && !strings.Contains(text, "DENIED") {
			t.Errorf("the %s does not say the registry refused (403):\n%s", what, text)
		}
		if !strings.Contains(text, redacted) {
			t.Errorf("the %s shows no %s:\n%s", what, redacted, text)
		}
	}
}

// quickBackoff retries once: requests and uploads are both retried, so
// attempts multiply.
var quickBackoff = remote.Backoff{Duration: time.Millisecond, Factor: 2, Steps: 2}

// misbehaving is how a hostile registry serves a blob.
type misbehaving func(w http.ResponseWriter, r *http.Request, blob []byte)

var misbehaviours = map[string]misbehaving{
	// No answer at all.
	"stalls before the headers": func(w http.ResponseWriter, r *http.Request, _ []byte) {
		<-r.Context().Done()
	},
	// The headers, a few bytes, then nothing.
	"stalls mid-body": func(w http.ResponseWriter, r *http.Request, blob []byte) {
		w.Header().Set("Content-Length", strconv.Itoa(len(blob)))
		w.Write(blob[:10])
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	},
	// A byte every 10 ms: never idle, never done.
	"trickles": func(w http.ResponseWriter, r *http.Request, blob []byte) {
		w.Header().Set("Content-Length", strconv.Itoa(len(blob)))
		for i := 0; i < len(blob); i++ {
			if _, err := w.Write(blob[i : i+1]); err != nil {
				return
			}
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
				return
			case <-time.After(10 * time.Millisecond):
			}
		}
	},
	// Half the blob, then the connection is closed.
	"truncates": func(w http.ResponseWriter, r *http.Request, blob []byte) {
		w.Header().Set("Content-Length", strconv.Itoa(len(blob)))
		w.Write(blob[:len(blob)/2])
		w.(http.Flusher).Flush()
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			conn.Close()
		}
	},
}

// slowRegistry is an in-memory registry that serves the blob with digest
// blob as misbehave says.
func slowRegistry(t *testing.T, blob string, content []byte, misbehave misbehaving) *testRegistry {
	t.Helper()
	inner := registry.New(registry.Logger(discardLogger()))
	return serveRegistry(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/blobs/"+blob) {
			misbehave(w, r, content)
			return
		}
		inner.ServeHTTP(w, r)
	}))
}

// TestHostileRegistrySlowBlobs: a source registry that stalls, trickles or
// truncates a blob makes the image fail with an error naming the blob,
// promptly (a short StallTimeout, as tests may set), whether the blob goes
// into a layout or to another registry; the layout keeps no partial file
// and lists no image, the destination registry gets no manifest.
func TestHostileRegistrySlowBlobs(t *testing.T) {
	img := randomImage(t, 64<<10, 2)
	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	h, _ := layers[1].Digest()
	rc, err := layers[1].Compressed()
	if err != nil {
		t.Fatal(err)
	}
	content, _ := io.ReadAll(rc)
	for name, misbehave := range misbehaviours {
		for _, dest := range []string{"layout", "registry"} {
			t.Run(name+"/"+dest, func(t *testing.T) {
				src := slowRegistry(t, h.String(), content, misbehave)
				dst := newTestRegistry(t)
				push(t, src.host+"/team/app:1", img)
				job := Job{Source: src.host + "/team/app:1", Target: dst.host + "/team/app:1"}
				// Short enough for a test, long enough for a loaded machine
				// not to stall the registries that behave.
				m := newMirror(t, Options{StallTimeout: 500 * time.Millisecond, Attachments: AttachmentsNone, Backoff: quickBackoff})
				dir := filepath.Join(t.TempDir(), "bundle")
				var s Summary
				var err error
				within(t, hang, func() {
					if dest == "layout" {
						s, err = m.Export(context.Background(), []Job{job}, dir)
					} else {
						s = m.Copy(context.Background(), []Job{job})
					}
				})
				if err != nil {
					t.Fatal(err)
				}
				if s.Failed != 1 {
					t.Fatalf("%d failed, want 1", s.Failed)
				}
				fail := s.Err()
				t.Log(fail)
				if name == "truncates" {
					if !strings.Contains(fail.Error(), "unexpected EOF") {
						t.Errorf("error %q does not say the blob was cut short", fail)
					}
				} else if !errors.Is(fail, ErrStalled) {
					t.Errorf("error %q is not %q", fail, ErrStalled)
				}
				if !strings.Contains(fail.Error(), h.String()) {
					t.Errorf("error %q does not name the blob %s", fail, h)
				}
				if dest == "layout" {
					for _, p := range tree(t, dir) {
						if strings.HasSuffix(p, ".tmp") || strings.HasSuffix(p, h.Hex) {
							t.Errorf("the layout keeps %s", p)
						}
					}
					if n := len(layoutIndex(t, dir).Manifests); n != 0 {
						t.Errorf("index.json lists %d images", n)
					}
				} else if head(t, job.Target) != "" {
					t.Error("the destination got the image")
				}
			})
		}
	}
}

// TestHostileRegistryStalledManifest: a registry that never answers a
// manifest request fails the image with ErrStalled, naming the request.
func TestHostileRegistryStalledManifest(t *testing.T) {
	inner := registry.New(registry.Logger(discardLogger()))
	src := serveRegistry(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.Contains(r.URL.Path, "/manifests/") {
			<-r.Context().Done()
			return
		}
		inner.ServeHTTP(w, r)
	}))
	dst := newTestRegistry(t)
	m := newMirror(t, Options{StallTimeout: 300 * time.Millisecond})
	var s Summary
	within(t, hang, func() {
		s = m.Copy(context.Background(), []Job{{Source: src.host + "/team/app:1", Target: dst.host + "/team/app:1"}})
	})
	wantErr(t, s.Err(), ErrStalled, src.host, "/v2/team/app/manifests/1")
}

func discardLogger() *log.Logger { return log.New(io.Discard, "", 0) }
