package helm

import (
	"context"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/repo"
)

// repoFiles writes into dir the packaged charts and an index.yaml whose
// chart URLs are under base.
func repoFiles(t *testing.T, dir, base string, charts ...string) {
	t.Helper()
	for _, c := range charts {
		raw, err := os.ReadFile(packaged(t, c))
		if err != nil {
			t.Fatal(err)
		}
		ch, _ := loader.Load(chartPath(c))
		if err := os.WriteFile(filepath.Join(dir, c+"-"+ch.Metadata.Version+".tgz"), raw, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	idx, err := repo.IndexDirectory(dir, base)
	if err != nil {
		t.Fatal(err)
	}
	if err := idx.WriteFile(filepath.Join(dir, "index.yaml"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// chunked serves the files of dir without a Content-Length.
func chunked(dir string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f, err := os.Open(filepath.Join(dir, filepath.FromSlash(strings.TrimPrefix(r.URL.Path, "/"))))
		if err != nil {
			http.NotFound(w, r)
			return
		}
		defer f.Close()
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		io.Copy(w, f)
	})
}

// privateTemp points os.TempDir at a new directory for the test and
// returns it, to check that nothing is left in it.
func privateTemp(t *testing.T) string {
	dir := t.TempDir()
	t.Setenv("TMPDIR", dir)
	return dir
}

func assertNoTemp(t *testing.T, dir string) {
	t.Helper()
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		t.Errorf("left in the temporary directory: %s", e.Name())
	}
}

// TestPullLimits: a repository index or a chart larger than its limit is
// refused with a TooLargeError naming the URL and the limit, whether the
// server declares the size or not; exactly at the limit, it is fetched.
func TestPullLimits(t *testing.T) {
	tmp := privateTemp(t)
	for _, declared := range []bool{true, false} {
		dir := t.TempDir()
		var h http.Handler = http.FileServer(http.Dir(dir))
		if !declared {
			h = chunked(dir)
		}
		srv := httptest.NewServer(h)
		repoFiles(t, dir, srv.URL, "hooks")
		st, _ := os.Stat(filepath.Join(dir, "index.yaml"))
		index := st.Size()
		st, _ = os.Stat(filepath.Join(dir, "hooks-0.1.0.tgz"))
		chart := st.Size()

		if _, err := Pull("hooks", t.TempDir(), PullOptions{RepoURL: srv.URL, MaxIndexSize: index, MaxChartSize: chart}); err != nil {
			t.Errorf("declared %t: at the limits: %v", declared, err)
		}
		for _, tt := range []struct {
			o     PullOptions
			url   string
			index bool
			limit int64
		}{
			{PullOptions{MaxIndexSize: index - 1}, srv.URL + "/index.yaml", true, index - 1},
			{PullOptions{MaxChartSize: chart - 1}, srv.URL + "/hooks-0.1.0.tgz", false, chart - 1},
		} {
			tt.o.RepoURL = srv.URL
			_, err := Pull("hooks", t.TempDir(), tt.o)
			var e *TooLargeError
			if !errors.As(err, &e) {
				t.Errorf("declared %t, limit %d: error %v, want a *TooLargeError", declared, tt.limit, err)
				continue
			}
			want := TooLargeError{URL: tt.url, Index: tt.index, Limit: tt.limit, Declared: -1}
			if declared {
				want.Declared = tt.limit + 1
			}
			if *e != want {
				t.Errorf("declared %t: %+v, want %+v", declared, *e, want)
			}
			if !strings.HasPrefix(err.Error(), "chart hooks in repository "+srv.URL+": GET "+tt.url+": the ") {
				t.Errorf("message %q", err)
			}
		}
		srv.Close()
	}
	assertNoTemp(t, tmp)
}

// trickle answers at a byte a second until the client goes.
func trickle(w http.ResponseWriter, r *http.Request) {
	w.WriteHeader(http.StatusOK)
	for {
		if _, err := w.Write([]byte{0x1f}); err != nil {
			return
		}
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
			return
		case <-time.After(time.Second):
		}
	}
}

// TestPullStalls: a chart, an index or an OCI registry that trickles or
// says nothing is abandoned after about the stall timeout, with an error
// wrapping ErrStalled that names the request; no temporary directory is
// left.
func TestPullStalls(t *testing.T) {
	tmp := privateTemp(t)
	silent := func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case strings.HasPrefix(r.URL.Path, "/silent/"), strings.HasPrefix(r.URL.Path, "/v2/"):
			silent(w, r)
		default:
			trickle(w, r)
		}
	}))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	const window = 300 * time.Millisecond
	for _, tt := range []struct{ ref, repo, path string }{
		{srv.URL + "/x-1.0.0.tgz", "", "/x-1.0.0.tgz"},
		{"x", srv.URL + "/silent", "/silent/index.yaml"},
		{"x", srv.URL, "/index.yaml"},
		{"oci://" + host + "/charts/x:1.0.0", "", "/v2/charts/x/manifests/1.0.0"},
	} {
		start := time.Now()
		_, err := Pull(tt.ref, t.TempDir(), PullOptions{RepoURL: tt.repo, StallTimeout: window, PlainHTTP: true})
		took := time.Since(start)
		if !errors.Is(err, ErrStalled) || !strings.Contains(err.Error(), "GET "+host+tt.path+": server stalled: less than 307 bytes moved in 300ms") {
			t.Errorf("%s %s: error %v, want a stall of GET %s", tt.ref, tt.repo, err, tt.path)
		}
		if took > 20*window {
			t.Errorf("%s %s: ended after %s", tt.ref, tt.repo, took)
		}
	}
	assertNoTemp(t, tmp)
}

// TestPullContext: ending the context ends the downloads; the error wraps
// its cause and no temporary directory is left.
func TestPullContext(t *testing.T) {
	tmp := privateTemp(t)
	hit := make(chan struct{}, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hit <- struct{}{}
		trickle(w, r)
	}))
	defer srv.Close()
	cause := errors.New("the test is over")
	ctx, cancel := context.WithCancelCause(context.Background())
	go func() {
		<-hit
		cancel(cause)
	}()
	start := time.Now()
	_, err := PullContext(ctx, "x", t.TempDir(), PullOptions{RepoURL: srv.URL})
	if !errors.Is(err, cause) || time.Since(start) > 10*time.Second {
		t.Errorf("error %v after %s, want %v at once", err, time.Since(start), cause)
	}
	assertNoTemp(t, tmp)
}

// endlessBlob is an OCI registry whose chart manifest declares a 1 TiB
// layer, which it sends without end.
func endlessBlob(w http.ResponseWriter, r *http.Request) {
	const digest = "sha256:0000000000000000000000000000000000000000000000000000000000000001"
	switch {
	case r.URL.Path == "/v2/":
	case strings.Contains(r.URL.Path, "/manifests/"):
		w.Header().Set("Content-Type", "application/vnd.oci.image.manifest.v1+json")
		fmt.Fprintf(w, `{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json",
"config":{"mediaType":"application/vnd.cncf.helm.config.v1+json","digest":"%s","size":1099511627776},
"layers":[{"mediaType":"application/vnd.cncf.helm.chart.content.v1.tar+gzip","digest":"%s","size":1099511627776}]}`, digest, digest)
	default:
		buf := make([]byte, 64<<10)
		for {
			if _, err := w.Write(buf); err != nil {
				return
			}
		}
	}
}

// TestPullOCILimit: an OCI blob larger than MaxChartSize is refused.
func TestPullOCILimit(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(endlessBlob))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	_, err := Pull("oci://"+host+"/charts/x:1.0.0", t.TempDir(), PullOptions{PlainHTTP: true, MaxChartSize: 1 << 20})
	var e *TooLargeError
	if !errors.As(err, &e) || e.Index || e.Limit != 1<<20 || !strings.Contains(e.URL, host+"/v2/charts/x/blobs/sha256:") {
		t.Errorf("error %v, want a *TooLargeError of the blob", err)
	}
}

// recorder serves a chart repository whose charts redirect to another
// server (another port), and records the Authorization header each
// request brings.
type recorder struct {
	mu   sync.Mutex
	auth map[string]string // path -> Authorization
}

func (r *recorder) note(req *http.Request) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.auth[req.URL.Path] = req.Header.Get("Authorization")
}

func (r *recorder) get(path string) (string, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	v, ok := r.auth[path]
	return v, ok
}

// TestPullCredentials: credentials in a repository URL are sent to the
// repository's origin only: a chart the index puts on another port, or a
// redirect to another port, gets none; the same holds for a repository of
// the user's Helm configuration. No message and no result holds them.
func TestPullCredentials(t *testing.T) {
	const user, pass = "robot", "s3cret-pass"
	basic := "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+pass))
	rec := &recorder{auth: map[string]string{}}
	dir := t.TempDir()
	files := http.FileServer(http.Dir(dir))
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec.note(r)
		files.ServeHTTP(w, r)
	}))
	defer other.Close()
	main := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec.note(r)
		if r.Header.Get("Authorization") != basic {
			w.Header().Set("WWW-Authenticate", `Basic realm="charts"`)
			http.Error(w, "401 "+r.Header.Get("Authorization"), http.StatusUnauthorized)
			return
		}
		switch {
		case strings.HasPrefix(r.URL.Path, "/moved/"):
			http.Redirect(w, r, other.URL+"/"+strings.TrimPrefix(r.URL.Path, "/moved/"), http.StatusFound)
		case r.URL.Path == "/index.yaml":
			// hooks here, parent through a redirect to the other port,
			// airgap on the other port.
			raw, _ := os.ReadFile(filepath.Join(dir, "index.yaml"))
			s := strings.Replace(string(raw), "BASE/hooks", "hooks", 1)
			s = strings.Replace(s, "BASE/parent", "moved/parent", 1)
			s = strings.Replace(s, "BASE/airgap", other.URL+"/airgap", 1)
			io.WriteString(w, s)
		default:
			files.ServeHTTP(w, r)
		}
	}))
	defer main.Close()
	repoFiles(t, dir, "BASE", "hooks", "parent", "airgap")
	u, _ := url.Parse(main.URL)
	u.User = url.UserPassword(user, pass)
	withCreds := u.String()

	for _, name := range []string{"hooks", "parent", "airgap"} {
		p, err := Pull(name, t.TempDir(), PullOptions{RepoURL: withCreds})
		if err != nil {
			t.Errorf("%s: %v", name, err)
		}
		if p != nil && (strings.Contains(p.URL, pass) || strings.Contains(p.Ref, pass)) {
			t.Errorf("%s: the result holds the password: %+v", name, p)
		}
	}
	if got, _ := rec.get("/index.yaml"); got != basic {
		t.Errorf("the index was asked with %q, want the repository's credentials", got)
	}
	if got, _ := rec.get("/hooks-0.1.0.tgz"); got != basic {
		t.Errorf("the chart on the repository's origin was asked with %q, want its credentials", got)
	}
	for _, path := range []string{"/parent-0.1.0.tgz", "/airgap-0.3.0.tgz"} {
		if got, ok := rec.get(path); !ok || got != "" {
			t.Errorf("%s on another port: asked %t, with Authorization %q; want asked, with none", path, ok, got)
		}
	}

	// Errors: the credentials appear nowhere, not even where the server
	// echoes them.
	for _, tt := range []struct{ ref, repo string }{
		{"nope", withCreds},
		{"hooks", strings.Replace(withCreds, pass, "wrong-password", 1)},
		{withCreds + "/missing-1.0.0.tgz", ""},
	} {
		_, err := Pull(tt.ref, t.TempDir(), PullOptions{RepoURL: tt.repo})
		if err == nil {
			t.Errorf("%s %s: no error", tt.ref, tt.repo)
			continue
		}
		msg := err.Error()
		for _, secret := range []string{pass, "wrong-password", strings.TrimPrefix(basic, "Basic ")} {
			if strings.Contains(msg, secret) {
				t.Errorf("%s: the message holds a credential: %s", tt.ref, msg)
			}
		}
		if !strings.Contains(msg, "[redacted]") {
			t.Errorf("%s: %q does not say where the credentials were", tt.ref, msg)
		}
	}

	// A repository of the user's configuration: Helm's getter sends its
	// credentials for the chart, and the redirect to the other port drops
	// them.
	home := t.TempDir()
	settings := privateSettings(home)
	rf := repo.NewFile()
	rf.Update(&repo.Entry{Name: "mine", URL: main.URL, Username: user, Password: pass})
	if err := rf.WriteFile(settings.RepositoryConfig, 0o600); err != nil {
		t.Fatal(err)
	}
	index := must(io.ReadAll(must(http.Get(other.URL + "/index.yaml")).Body))
	cached := strings.Replace(string(index), "BASE/parent", main.URL+"/moved/parent", 1)
	os.MkdirAll(settings.RepositoryCache, 0o755)
	if err := os.WriteFile(filepath.Join(settings.RepositoryCache, "mine-index.yaml"), []byte(cached), 0o644); err != nil {
		t.Fatal(err)
	}
	rec.auth = map[string]string{}
	if _, err := Pull("mine/parent", t.TempDir(), PullOptions{Settings: settings}); err != nil {
		t.Fatal(err)
	}
	if got, _ := rec.get("/moved/parent-0.1.0.tgz"); got != basic {
		t.Errorf("the user's repository was asked with %q, want its credentials", got)
	}
	if got, ok := rec.get("/parent-0.1.0.tgz"); !ok || got != "" {
		t.Errorf("redirect to another port: asked %t, with Authorization %q; want asked, with none", ok, got)
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// TestPullUserTLS: the CA file of a repository of the user's Helm
// configuration is used for its origin (Helm's getter would apply it, but
// rehost gives the getter its own bounded transport).
func TestPullUserTLS(t *testing.T) {
	dir := t.TempDir()
	srv := httptest.NewTLSServer(http.FileServer(http.Dir(dir)))
	defer srv.Close()
	repoFiles(t, dir, srv.URL, "hooks")
	home := t.TempDir()
	settings := privateSettings(home)
	ca := filepath.Join(home, "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o644); err != nil {
		t.Fatal(err)
	}
	index, _ := os.ReadFile(filepath.Join(dir, "index.yaml"))
	os.MkdirAll(settings.RepositoryCache, 0o755)
	if err := os.WriteFile(filepath.Join(settings.RepositoryCache, "tls-index.yaml"), index, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, withCA := range []bool{false, true} {
		e := &repo.Entry{Name: "tls", URL: srv.URL}
		if withCA {
			e.CAFile = ca
		}
		rf := repo.NewFile()
		rf.Update(e)
		if err := rf.WriteFile(settings.RepositoryConfig, 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := Pull("tls/hooks", t.TempDir(), PullOptions{Settings: settings})
		if withCA && err != nil {
			t.Errorf("with the repository's CA file: %v", err)
		}
		if !withCA && (err == nil || !strings.Contains(err.Error(), "certificate")) {
			t.Errorf("without a CA file: error %v, want one about the certificate", err)
		}
	}
}
