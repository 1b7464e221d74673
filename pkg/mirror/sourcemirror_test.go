package mirror

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/rehost/rehost/pkg/rewrite"
)

// loopbackOnly is a transport that reaches loopback registries only and
// records every other host it was asked for: the machine of a mirror
// test has no route to docker.io or quay.io.
type loopbackOnly struct {
	mu    sync.Mutex
	other []string
}

func (l *loopbackOnly) RoundTrip(req *http.Request) (*http.Response, error) {
	if !loopback(req.URL.Host) {
		l.mu.Lock()
		l.other = append(l.other, req.URL.Host)
		l.mu.Unlock()
		return nil, &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("no route to host")}
	}
	return http.DefaultTransport.RoundTrip(req)
}

func (l *loopbackOnly) asked() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.other...)
}

func sourceMirrors(t *testing.T, ms ...string) *rewrite.SourceMirrors {
	t.Helper()
	var list []rewrite.SourceMirror
	for _, s := range ms {
		m, err := rewrite.ParseSourceMirror(s)
		if err != nil {
			t.Fatal(err)
		}
		list = append(list, m)
	}
	sm, err := rewrite.NewSourceMirrors(list)
	if err != nil {
		t.Fatal(err)
	}
	return sm
}

// corporateMirror is a registry holding copies of docker.io and quay.io
// images under dockerhub/ and q/, as a corporate mirror does, with a
// cosign signature tag for the docker.io image.
type corporateMirror struct {
	reg              *testRegistry
	nginx, jetstack  string // digests
	quay             string
	sig              string // the digest of nginx's signature
	nginxSig         string // the tag of nginx's signature
	longest, general string // the addresses of jetstack's image under each prefix
}

func newCorporateMirror(t *testing.T) *corporateMirror {
	c := &corporateMirror{reg: newTestRegistry(t)}
	h := c.reg.host
	c.nginx = push(t, h+"/dockerhub/library/nginx:1.25", randomIndex(t, 512, 1, "linux/amd64", "linux/arm64"))
	c.sig = tagAttach(t, h+"/dockerhub/library/nginx", c.nginx, "sig")
	c.nginxSig = fallbackTagOf(c.nginx) + ".sig"
	c.quay = push(t, h+"/q/prometheus/prometheus:v2", randomImage(t, 512, 1))
	// quay.io/jetstack/... is in its own mirror path (the longest
	// prefix), and a different image at the general one.
	c.jetstack = push(t, h+"/jetstack/cert-manager-controller:v1", randomImage(t, 512, 1))
	push(t, h+"/q/jetstack/cert-manager-controller:v1", randomImage(t, 256, 1))
	return c
}

// TestSourceMirrorCopy: images named docker.io/… and quay.io/… are read
// from the corporate mirror (longest prefix first), never from their
// registries, and copied to the same targets with the same digests;
// every name stays the source's: results, attachment sources, the
// target; Result.From says where each was read.
func TestSourceMirrorCopy(t *testing.T) {
	cm := newCorporateMirror(t)
	dst := newTestRegistry(t)
	tr := &loopbackOnly{}
	mp := mapper(t, rewrite.Config{Registry: dst.host})
	var jobs []Job
	for _, src := range []string{"nginx:1.25", "quay.io/prometheus/prometheus:v2", "quay.io/jetstack/cert-manager-controller:v1"} {
		img, err := mp.Map(src)
		if err != nil {
			t.Fatal(err)
		}
		jobs = append(jobs, Job{Source: img.Source.String(), Target: img.Target.String()})
	}
	ev := &events{}
	sm := sourceMirrors(t, "docker.io="+cm.reg.host+"/dockerhub", "quay.io/jetstack="+cm.reg.host+"/jetstack", "quay.io="+cm.reg.host+"/q")
	s := newMirror(t, Options{Transport: tr, SourceMirrors: sm, Reporter: ev}).Copy(context.Background(), jobs)
	if err := s.Err(); err != nil || s.Copied != 3 {
		t.Fatalf("%d copied: %v", s.Copied, err)
	}
	if other := tr.asked(); len(other) != 0 {
		t.Errorf("asked registries other than the mirror: %v", other)
	}
	want := map[string]struct{ digest, from string }{
		"docker.io/library/nginx:1.25":                {cm.nginx, cm.reg.host + "/dockerhub/library/nginx:1.25"},
		"quay.io/prometheus/prometheus:v2":            {cm.quay, cm.reg.host + "/q/prometheus/prometheus:v2"},
		"quay.io/jetstack/cert-manager-controller:v1": {cm.jetstack, cm.reg.host + "/jetstack/cert-manager-controller:v1"},
	}
	for _, r := range s.Results {
		w, ok := want[r.Source]
		if !ok || r.Digest != w.digest || r.From != w.from || r.Destination != r.Target || !strings.HasPrefix(r.Target, dst.host+"/") {
			t.Errorf("%s -> %s from %q: %s; want %+v", r.Source, r.Target, r.From, r.Digest, w)
		}
		if got := head(t, r.Target); got != w.digest {
			t.Errorf("%s: the target holds %q, want %s", r.Target, got, w.digest)
		}
	}
	// The signature, found in the mirror, keeps the source's name and
	// lands under the target's tag.
	nginx := s.Results[0]
	if len(nginx.Attachments) != 1 || nginx.Attachments[0].Source != "docker.io/library/nginx:"+cm.nginxSig || nginx.Attachments[0].Digest != cm.sig {
		t.Errorf("attachments %+v", nginx.Attachments)
	}
	if got := head(t, dst.host+"/library/nginx:"+cm.nginxSig); got != cm.sig {
		t.Errorf("the signature in the target: %q, want %s", got, cm.sig)
	}
	if len(ev.warnings) != 0 {
		t.Errorf("warnings: %q", ev.warnings)
	}
	// A re-run skips them all, by digest, in the mirror.
	if s := newMirror(t, Options{Transport: tr, SourceMirrors: sm}).Copy(context.Background(), jobs); s.Skipped != 3 || s.Attachments.Skipped != 1 {
		t.Errorf("re-run: %d skipped, attachments %+v: %v", s.Skipped, s.Attachments, s.Err())
	}
}

// TestSourceMirrorFallback: an image its mirror lacks (404) is read from
// its own registry, with a warning; with SourceMirrorOnly it fails,
// naming the mirror, and the source is not asked. Any other failure of
// the mirror fails the image without asking the source.
func TestSourceMirrorFallback(t *testing.T) {
	src, mirror, dst := newTestRegistry(t), newTestRegistry(t), newTestRegistry(t)
	inMirror := push(t, mirror.host+"/cache/team/cached:1", randomImage(t, 256, 1))
	push(t, src.host+"/team/cached:1", randomImage(t, 256, 1)) // another image: the mirror's must win
	onlySource := push(t, src.host+"/team/fresh:1", randomImage(t, 256, 1))
	sm := sourceMirrors(t, src.host+"="+mirror.host+"/cache")
	jobs := []Job{
		{Source: src.host + "/team/cached:1", Target: dst.host + "/team/cached:1"},
		{Source: src.host + "/team/fresh:1", Target: dst.host + "/team/fresh:1"},
	}

	ev := &events{}
	s := newMirror(t, Options{SourceMirrors: sm, Reporter: ev, Attachments: AttachmentsNone}).Copy(context.Background(), jobs)
	if err := s.Err(); err != nil || s.Copied != 2 {
		t.Fatalf("%d copied: %v", s.Copied, err)
	}
	if r := s.Results[0]; r.Digest != inMirror || r.From != mirror.host+"/cache/team/cached:1" {
		t.Errorf("cached: %s from %q, want %s from the mirror", r.Digest, r.From, inMirror)
	}
	if r := s.Results[1]; r.Digest != onlySource || r.From != "" {
		t.Errorf("fresh: %s from %q, want %s from its registry", r.Digest, r.From, onlySource)
	}
	if len(ev.warnings) != 1 || !strings.Contains(ev.warnings[0], "not in the source mirror ("+mirror.host+"/cache/team/fresh:1): read from "+src.host+"/team/fresh:1") {
		t.Errorf("warnings %q", ev.warnings)
	}

	// Mirror only: the image the mirror lacks fails; its registry is not
	// asked.
	dst2 := newTestRegistry(t)
	src.resetLog()
	jobs[1].Target = dst2.host + "/team/fresh:1"
	s = newMirror(t, Options{SourceMirrors: sm, SourceMirrorOnly: true, Attachments: AttachmentsNone}).Copy(context.Background(), jobs[1:])
	var nm *NotInMirrorError
	if s.Failed != 1 || !errors.As(s.Err(), &nm) || nm.Mirror != mirror.host+"/cache/team/fresh:1" || !notFound(nm.Err) {
		t.Errorf("mirror only: %d failed, %v", s.Failed, s.Err())
	}
	if n := src.count(http.MethodGet, "/manifests/") + src.count(http.MethodHead, "/manifests/"); n != 0 {
		t.Errorf("mirror only: the source was asked %d times", n)
	}
	if head(t, dst2.host+"/team/fresh:1") != "" {
		t.Error("mirror only: the image reached the target")
	}

	// A mirror that refuses (403: a policy, credentials) is not bypassed.
	mirror.setInject(func(r *http.Request) int {
		if strings.Contains(r.URL.Path, "/manifests/") {
			return http.StatusForbidden
		}
		return 0
	})
	src.resetLog()
	s = newMirror(t, Options{SourceMirrors: sm, Attachments: AttachmentsNone}).Copy(context.Background(), jobs[1:])
	if s.Failed != 1 || !strings.Contains(s.Err().Error(), "403") || errors.As(s.Err(), &nm) {
		t.Errorf("refusing mirror: %d failed, %v", s.Failed, s.Err())
	}
	if n := src.count(http.MethodGet, "/manifests/") + src.count(http.MethodHead, "/manifests/"); n != 0 {
		t.Errorf("refusing mirror: the source was asked %d times", n)
	}
}

// TestSourceMirrorLayout: a layout written through a mirror records the
// sources' names (images and attachments), so that it imports to the
// same targets with the same digests as one written without a mirror.
func TestSourceMirrorLayout(t *testing.T) {
	cm := newCorporateMirror(t)
	dir := filepath.Join(t.TempDir(), "bundle")
	tr := &loopbackOnly{}
	sm := sourceMirrors(t, "docker.io="+cm.reg.host+"/dockerhub")
	jobs := []Job{{Source: "docker.io/library/nginx:1.25", Target: "sea.hub:5000/library/nginx:1.25"}}
	s, err := newMirror(t, Options{Transport: tr, SourceMirrors: sm}).Export(context.Background(), jobs, dir)
	if err != nil || s.Copied != 1 || s.Attachments.Copied != 1 {
		t.Fatalf("export: %d copied, attachments %+v, %v, %v", s.Copied, s.Attachments, err, s.Err())
	}
	if r := s.Results[0]; r.From != cm.reg.host+"/dockerhub/library/nginx:1.25" {
		t.Errorf("from %q", r.From)
	}
	raw, err := os.ReadFile(filepath.Join(dir, "index.json"))
	if err != nil {
		t.Fatal(err)
	}
	var idx struct {
		Manifests []struct {
			Digest      string            `json:"digest"`
			Annotations map[string]string `json:"annotations"`
		} `json:"manifests"`
	}
	if err := json.Unmarshal(raw, &idx); err != nil {
		t.Fatal(err)
	}
	sources := map[string]string{}
	for _, d := range idx.Manifests {
		sources[d.Annotations[AnnotationSource]] = d.Digest
	}
	if sources["docker.io/library/nginx:1.25"] != cm.nginx || sources["docker.io/library/nginx:"+cm.nginxSig] != cm.sig {
		t.Errorf("layout sources %v", sources)
	}
	if strings.Contains(string(raw), cm.reg.host) {
		t.Errorf("index.json names the mirror:\n%s", raw)
	}
	dst := newTestRegistry(t)
	s, err = newMirror(t, Options{}).Import(context.Background(), dir, mapper(t, rewrite.Config{Registry: dst.host}))
	if err != nil || s.Copied != 1 {
		t.Fatalf("import: %d copied, %v, %v", s.Copied, err, s.Err())
	}
	if got := head(t, dst.host+"/library/nginx:1.25"); got != cm.nginx {
		t.Errorf("imported %q, want %s", got, cm.nginx)
	}
	if len(tr.asked()) != 0 {
		t.Errorf("asked %v", tr.asked())
	}
}

// TestSourceMirrorDryRun: the plan says where each image would be read
// from, with no request when it asks none; a digest written in the
// source is read by digest from the mirror.
func TestSourceMirrorDryRun(t *testing.T) {
	cm := newCorporateMirror(t)
	tr := &loopbackOnly{}
	sm := sourceMirrors(t, "docker.io="+cm.reg.host+"/dockerhub")
	jobs := []Job{
		{Source: "docker.io/library/nginx:1.25", Target: "sea.hub:5000/library/nginx:1.25"},
		{Source: "docker.io/library/nginx:1.25@" + cm.nginx, Target: "sea.hub:5000/library/nginx:1.25@" + cm.nginx},
		{Source: "ghcr.io/other/app:1", Target: "sea.hub:5000/other/app:1"},
	}
	cm.reg.resetLog()
	s := newMirror(t, Options{Transport: tr, SourceMirrors: sm, DryRun: true, Attachments: AttachmentsNone}).Copy(context.Background(), jobs)
	if s.Planned != 3 || len(cm.reg.reqs) != 0 || len(tr.asked()) != 0 {
		t.Fatalf("%d planned; requests %v, %v", s.Planned, cm.reg.reqs, tr.asked())
	}
	for i, want := range []string{cm.reg.host + "/dockerhub/library/nginx:1.25", cm.reg.host + "/dockerhub/library/nginx:1.25@" + cm.nginx, ""} {
		if s.Results[i].From != want {
			t.Errorf("%s: from %q, want %q", s.Results[i].Source, s.Results[i].From, want)
		}
	}
	// Pinned: the digests come from the mirror (HEAD), by digest where
	// the source has one.
	s = newMirror(t, Options{Transport: tr, SourceMirrors: sm, DryRun: true, Pin: true}).Copy(context.Background(), jobs[:2])
	if s.Err() != nil || s.Results[0].Digest != cm.nginx || s.Results[1].Digest != cm.nginx {
		t.Errorf("pinned: %+v, %v", s.Results, s.Err())
	}
	if len(tr.asked()) != 0 {
		t.Errorf("asked %v", tr.asked())
	}
	// The mirror serves the digest written in the source, or nothing.
	bad := "docker.io/library/nginx:1.25@sha256:" + strings.Repeat("0", 64)
	s = newMirror(t, Options{Transport: tr, SourceMirrors: sm, SourceMirrorOnly: true}).Copy(context.Background(), []Job{{Source: bad, Target: newTestRegistry(t).host + "/library/nginx:1.25"}})
	if s.Failed != 1 {
		t.Errorf("a digest the mirror lacks: %d failed, %v", s.Failed, s.Err())
	}
}
