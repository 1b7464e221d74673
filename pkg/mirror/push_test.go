package mirror

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rehost/rehost/pkg/rewrite"
)

func TestPushRoute(t *testing.T) {
	for _, c := range []struct {
		name, addr, repo string
		want, via        string
	}{
		{"sea.hub:5000", "10.0.0.5:5000", "sea.hub:5000/library/nginx", "10.0.0.5:5000/library/nginx", "10.0.0.5:5000"},
		{"sea.hub:5000", "10.0.0.5:5000/mirror", "sea.hub:5000/library/nginx", "10.0.0.5:5000/mirror/library/nginx", "10.0.0.5:5000/mirror"},
		{"sea.hub:5000/offline", "10.0.0.5:5000", "sea.hub:5000/offline/library/nginx", "10.0.0.5:5000/library/nginx", "10.0.0.5:5000"},
		{"SEA.hub:5000", "10.0.0.5:5000", "sea.hub:5000/a", "10.0.0.5:5000/a", "10.0.0.5:5000"},
		// Not under the name: requested as named.
		{"sea.hub:5000", "10.0.0.5:5000", "quay.io/x/y", "quay.io/x/y", ""},
		{"sea.hub:5000", "10.0.0.5:5000", "sea.hub:50001/x", "sea.hub:50001/x", ""},
		{"sea.hub:5000/offline", "10.0.0.5:5000", "sea.hub:5000/offline2/x", "sea.hub:5000/offline2/x", ""},
		{"sea.hub:5000/offline", "10.0.0.5:5000", "sea.hub:5000/x", "sea.hub:5000/x", ""},
		// The same address: no via.
		{"sea.hub:5000", "sea.hub:5000", "sea.hub:5000/x", "sea.hub:5000/x", ""},
	} {
		r, err := newPushRoute(&PushRegistry{Name: c.name, Address: c.addr})
		if err != nil {
			t.Fatal(err)
		}
		got, via := r.route(c.repo)
		if got != c.want || via != c.via {
			t.Errorf("%s -> %s: route(%s) = %s, %q; want %s, %q", c.name, c.addr, c.repo, got, via, c.want, c.via)
		}
	}
	var none *pushRoute
	if got, via := none.route("sea.hub:5000/x"); got != "sea.hub:5000/x" || via != "" {
		t.Errorf("no route: %s %s", got, via)
	}
	for _, p := range []PushRegistry{{Name: "", Address: "10.0.0.5:5000"}, {Name: "sea.hub:5000", Address: "https://10.0.0.5"}, {Name: "sea.hub:5000", Address: "Bad Host"}} {
		p := p
		if _, err := New(Options{PushRegistry: &p}); err == nil || !strings.Contains(err.Error(), "push registry") {
			t.Errorf("New(PushRegistry %+v): %v", p, err)
		}
	}
}

// TestPushRegistryInsecureIsTheAddress: Options.Insecure applies to the
// address the requests go to, not to the name.
func TestPushRegistryInsecureIsTheAddress(t *testing.T) {
	for _, c := range []struct {
		insecure string
		scheme   string
	}{{"push.example.net:5000", "http"}, {"sea.hub:5000", "https"}} {
		m := newMirror(t, Options{Insecure: []string{c.insecure}, PushRegistry: &PushRegistry{Name: "sea.hub:5000", Address: "push.example.net:5000"}})
		r, via, err := m.parseTarget("sea.hub:5000/library/nginx:1.25")
		if err != nil {
			t.Fatal(err)
		}
		if r.repo.String() != "push.example.net:5000/library/nginx" || r.String() != "sea.hub:5000/library/nginx:1.25" || via != "push.example.net:5000" {
			t.Errorf("parseTarget: requests %s, name %s, via %s", r.repo, r.String(), via)
		}
		if got := r.repo.Scheme(); got != c.scheme {
			t.Errorf("Insecure %s: scheme %s, want %s", c.insecure, got, c.scheme)
		}
	}
}

// TestPushRegistryCopy: with a push registry, images go to its address
// while every result names the target; a re-run skips them there.
func TestPushRegistryCopy(t *testing.T) {
	f := newFixture(t)
	jobs := f.jobs(t, rewrite.Config{Registry: "sea.hub:5000"})
	var log bytes.Buffer
	o := Options{PushRegistry: &PushRegistry{Name: "sea.hub:5000", Address: f.dst.host}, Reporter: textReport{&log}}
	s := newMirror(t, o).Copy(context.Background(), jobs)
	if err := s.Err(); err != nil || s.Copied != 3 {
		t.Fatalf("%d copied: %v", s.Copied, err)
	}
	for _, r := range s.Results {
		if !strings.HasPrefix(r.Target, "sea.hub:5000/") || r.Destination != r.Target || r.Via != f.dst.host {
			t.Errorf("%s: target %s, destination %s, via %s", r.Source, r.Target, r.Destination, r.Via)
		}
		if !strings.HasPrefix(r.Pinned(), "sea.hub:5000/") {
			t.Errorf("pinned %s", r.Pinned())
		}
		at := f.dst.host + strings.TrimPrefix(r.Target, "sea.hub:5000")
		if got := head(t, at); got != f.digests[r.Source] {
			t.Errorf("%s: %q at %s, want %s", r.Source, got, at, f.digests[r.Source])
		}
		if want := "-> " + r.Target + " via " + f.dst.host + " (sha256:"; !strings.Contains(log.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, log.String())
		}
	}
	s = newMirror(t, o).Copy(context.Background(), jobs)
	if s.Skipped != 3 {
		t.Errorf("re-run: %d skipped, %v", s.Skipped, s.Err())
	}
}

// TestPushRegistryImport: a layout written for sea.hub:5000, its chart
// relocated for it, is pushed to the address of a push registry: the
// chart is accepted (its values name what the cluster pulls).
func TestPushRegistryImport(t *testing.T) {
	f := newFixture(t)
	dir := filepath.Join(t.TempDir(), "bundle")
	mp := mapper(t, rewrite.Config{Registry: "sea.hub:5000"})
	c := newChart(t, shopArchive(t), nil)
	c.Relocated = RelocationFor(mp)
	jobs := append(f.jobs(t, rewrite.Config{Registry: "sea.hub:5000"}), ChartJob("charts/shop", c, mp.ChartsRepository()))
	if s, err := newMirror(t, Options{}).Export(context.Background(), jobs, dir); err != nil || s.Err() != nil {
		t.Fatal(err, s.Err())
	}
	o := Options{PushRegistry: &PushRegistry{Name: mp.Root(), Address: f.dst.host + "/far"}}
	s, err := newMirror(t, o).Import(context.Background(), dir, mp)
	if err != nil || s.Err() != nil || s.Copied != 3 || s.Charts.Copied != 1 {
		t.Fatalf("import: %d copied, charts %+v: %v %v", s.Copied, s.Charts, err, s.Err())
	}
	for _, r := range s.Results {
		if !strings.HasPrefix(r.Target, "sea.hub:5000/") || r.Via != f.dst.host+"/far" {
			t.Errorf("%s: target %s via %s", r.Source, r.Target, r.Via)
		}
		if head(t, f.dst.host+"/far"+strings.TrimPrefix(r.Target, "sea.hub:5000")) == "" {
			t.Errorf("%s is not at the push address", r.Target)
		}
	}
}
