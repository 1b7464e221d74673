package report

import (
	"errors"
	"flag"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rehost/rehost/pkg/mirror"
)

var update = flag.Bool("update", false, "rewrite the golden files of testdata/")

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to write it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs:\n got %q\nwant %q", name, got, want)
	}
}

// scriptedRun plays the events of a run that meets every line a
// reporter draws to r: a notice, warnings, images copied, skipped and
// failed (a refused plain-HTTP request among them), attachments in each
// state, a chart, a push through another address, the parts of an
// archive checked and written, and a summary. clock, when given, is
// advanced between events.
func scriptedRun(r mirror.Reporter, clock *time.Time) {
	tick := func(d time.Duration) {
		if clock != nil {
			*clock = clock.Add(d)
		}
	}
	d1 := "sha256:4c0fdaa8b6341bfdeca5f18f7837462c80cff90527ee35ef185571e1c327beac"
	d2 := "sha256:e422889e156ebea83856b6ff973bfe0c86bce867d80def228044eeecf925592b"
	nginx := mirror.Job{Source: "docker.io/library/nginx:1.25", Target: "sea.hub:5000/library/nginx:1.25"}
	redis := mirror.Job{Source: "docker.io/library/redis:7.2", Target: "sea.hub:5000/library/redis:7.2"}
	plainSrc := mirror.Job{Source: "10.0.0.5:5000/team/app:1", Target: "sea.hub:5000/team/app:1"}
	odd := mirror.Job{Source: "quay.io/x/\x1b[31mred:1", Target: "sea.hub:5000/x/red:1"}
	long := mirror.Job{Source: "registry.example.com/" + strings.Repeat("very-long-path/", 8) + "image:1.0", Target: "sea.hub:5000/long:1"}
	chart := mirror.Job{Source: "charts/shop", Target: "sea.hub:5000/charts/shop:0.1.0", Chart: &mirror.Chart{Name: "shop", Version: "0.1.0"}}

	pr, _ := r.(mirror.PartReporter)
	if pr != nil {
		pr.CheckProgress(mirror.CheckProgress{Checksums: "b.tar.sha256", Total: 3 << 20, Files: 2})
		tick(150 * time.Millisecond)
		pr.CheckProgress(mirror.CheckProgress{Checksums: "b.tar.sha256", Bytes: 1 << 20, Total: 3 << 20, Files: 2})
		tick(150 * time.Millisecond)
		pr.CheckProgress(mirror.CheckProgress{Checksums: "b.tar.sha256", Bytes: 2 << 20, Total: 3 << 20, Checked: 1, Files: 2, File: "b.tar.part000"})
		pr.CheckProgress(mirror.CheckProgress{Checksums: "b.tar.sha256", Bytes: 3 << 20, Total: 3 << 20, Checked: 2, Files: 2, File: "b.tar.part001"})
	}
	r.Begin(6)
	if n, ok := r.(mirror.Noticer); ok {
		n.Notice(mirror.Notice{Msg: "127.0.0.1:5000 is reached over plain HTTP: it is a loopback address (any other registry needs TLS or to be named insecure)", PlainHTTP: "127.0.0.1:5000"})
	}
	r.Start(nginx)
	r.Start(redis)
	r.Start(long)
	tick(50 * time.Millisecond)
	r.Transferred(1 << 20) // within 100ms: no redraw
	tick(60 * time.Millisecond)
	r.Transferred(3 << 20)
	r.Warn(nginx, "platform filter keeps 1 of 2 manifests: the index digest changes from "+d1+" to "+d2)
	r.Done(mirror.Result{Job: nginx, Destination: nginx.Target, Status: mirror.Copied, Digest: d1, Bytes: 70_567_000, Attachments: []mirror.Attachment{
		{Kind: mirror.Signature, Source: "docker.io/library/nginx:sha256-4c0f.sig", Destination: "sea.hub:5000/library/nginx:sha256-4c0f.sig", Status: mirror.Copied, Digest: d2},
		{Kind: mirror.Attestation, Source: "docker.io/library/nginx:sha256-4c0f.att", Destination: "sea.hub:5000/library/nginx:sha256-4c0f.att", Status: mirror.Skipped, Digest: d2},
		{Kind: mirror.SBOM, Source: "docker.io/library/nginx:sha256-4c0f.sbom", Destination: "sea.hub:5000/library/nginx:sha256-4c0f.sbom", Status: mirror.Failed, Err: errors.New("PUT: 500 boom")},
	}})
	r.Done(mirror.Result{Job: redis, Destination: redis.Target, Status: mirror.Skipped, Digest: d2})
	r.Start(plainSrc)
	refused := &url.Error{Op: "Get", URL: "http://10.0.0.5:5000/v2/", Err: &mirror.PlainHTTPError{Host: "10.0.0.5:5000"}}
	r.Done(mirror.Result{Job: plainSrc, Destination: plainSrc.Target, Status: mirror.Failed, Err: refused})
	r.Start(odd)
	mismatch := &url.Error{Op: "Get", URL: "https://quay.io/v2/", Err: &mirror.PlainHTTPError{Host: "quay.io", Err: http.ErrSchemeMismatch}}
	r.Done(mirror.Result{Job: odd, Destination: odd.Target, Status: mirror.Failed, Err: fmt.Errorf("reading: %w", mismatch)})
	r.Done(mirror.Result{Job: long, Destination: long.Target, Via: "10.0.0.5:5000", Status: mirror.Copied, Digest: d1, Bytes: 1536})
	r.Start(chart)
	r.Done(mirror.Result{Job: chart, Destination: chart.Target, Status: mirror.Copied, Digest: d2, Bytes: 2048})
	tick(time.Second)
	r.End(mirror.Summary{Copied: 2, Skipped: 1, Failed: 2, Bytes: 70_570_584, Elapsed: 2345 * time.Millisecond,
		Attachments: mirror.Counts{Copied: 1, Skipped: 1, Failed: 1}, Charts: mirror.Counts{Copied: 1}, ListedAttachments: true})
	if pr != nil {
		pr.PartWritten("b.tar.part000", 2<<20)
		pr.PartWritten("b.tar.sha256", 100)
	}
}

// TestReportersGolden pins the bytes the line and terminal reporters
// write for a run that meets every line they draw.
func TestReportersGolden(t *testing.T) {
	var line strings.Builder
	scriptedRun(NewLine(&line), nil)
	golden(t, "report-line.golden", line.String())

	var term strings.Builder
	clock := time.Unix(0, 0)
	tr := newTerminal(&term, func() time.Time { return clock })
	scriptedRun(tr, &clock)
	golden(t, "report-terminal.golden", term.String())
}

// TestSummaryLinesGolden pins the summary line of each kind of run.
func TestSummaryLinesGolden(t *testing.T) {
	var b strings.Builder
	for _, s := range []mirror.Summary{
		{},
		{Copied: 3, Skipped: 1, Failed: 1, Bytes: 2048, Elapsed: 1234 * time.Millisecond},
		{Copied: 3, Bytes: 5 << 30, Elapsed: 90 * time.Second, ListedAttachments: true, Attachments: mirror.Counts{Copied: 4, Skipped: 2}},
		{Copied: 1, Charts: mirror.Counts{Copied: 1, Skipped: 2, Failed: 1}},
		{Planned: 4, DryRun: true},
		{Planned: 4, Failed: 1, DryRun: true, ListedAttachments: true, Attachments: mirror.Counts{Planned: 7, Failed: 2}},
		{Planned: 2, DryRun: true, Charts: mirror.Counts{Planned: 1, Failed: 1}},
		{Planned: 2}, // planned and nothing copied: a dry run
		{Copied: 2, Skipped: 1, Bytes: 4096, Elapsed: time.Second, Shard: mirror.Shard{Index: 1, Count: 3}, Elsewhere: 5},
		{Planned: 2, DryRun: true, Shard: mirror.Shard{Index: 0, Count: 3}, Elsewhere: 4},
		{Shard: mirror.Shard{Index: 2, Count: 3}, Elsewhere: 1}, // nothing in this shard
		{Copied: 1, Shard: mirror.Shard{Index: 0, Count: 1}},    // one shard: the whole run
	} {
		fmt.Fprintln(&b, SummaryLine(s))
	}
	golden(t, "summary-lines.golden", b.String())
}

// TestWritePlanGolden pins the plan of a dry run.
func TestWritePlanGolden(t *testing.T) {
	d := "sha256:4c0fdaa8b6341bfdeca5f18f7837462c80cff90527ee35ef185571e1c327beac"
	s := mirror.Summary{DryRun: true, ListedAttachments: true, Results: []mirror.Result{
		{Job: mirror.Job{Source: "docker.io/library/nginx:1.25", Target: "sea.hub:5000/library/nginx:1.25"}, Destination: "sea.hub:5000/library/nginx:1.25", Status: mirror.Planned, Attachments: []mirror.Attachment{
			{Kind: mirror.Signature, Source: "docker.io/library/nginx:sha256-4c0f.sig", Destination: "sea.hub:5000/library/nginx:sha256-4c0f.sig", Status: mirror.Planned, Digest: d},
			{Kind: mirror.SBOM, Source: "docker.io/library/nginx:sha256-4c0f.sbom", Destination: "sea.hub:5000/library/nginx:sha256-4c0f.sbom", Status: mirror.Failed, Err: errors.New("HEAD: 404")},
		}},
		{Job: mirror.Job{Source: "quay.io/x/y:1@" + d, Target: "sea.hub:5000/x/y:1@" + d}, Destination: "oci:bundle", Status: mirror.Planned, Digest: d},
		{Job: mirror.Job{Source: "quay.io/x/gone:1", Target: "sea.hub:5000/x/gone:1"}, Destination: "sea.hub:5000/x/gone:1", Status: mirror.Failed, Err: errors.New("HEAD: 404")},
		{Job: mirror.Job{Source: "charts/shop", Target: "sea.hub:5000/charts/shop:0.1.0", Chart: &mirror.Chart{Name: "shop"}}, Destination: "sea.hub:5000/charts/shop:0.1.0", Status: mirror.Planned, Digest: d},
	}}
	var b strings.Builder
	if err := WritePlan(&b, s); err != nil {
		t.Fatal(err)
	}
	golden(t, "plan.golden", b.String())
}
