package mirror

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
func scriptedRun(r Reporter, clock *time.Time) {
	tick := func(d time.Duration) {
		if clock != nil {
			*clock = clock.Add(d)
		}
	}
	d1 := "sha256:4c0fdaa8b6341bfdeca5f18f7837462c80cff90527ee35ef185571e1c327beac"
	d2 := "sha256:e422889e156ebea83856b6ff973bfe0c86bce867d80def228044eeecf925592b"
	nginx := Job{Source: "docker.io/library/nginx:1.25", Target: "sea.hub:5000/library/nginx:1.25"}
	redis := Job{Source: "docker.io/library/redis:7.2", Target: "sea.hub:5000/library/redis:7.2"}
	plainSrc := Job{Source: "10.0.0.5:5000/team/app:1", Target: "sea.hub:5000/team/app:1"}
	odd := Job{Source: "quay.io/x/\x1b[31mred:1", Target: "sea.hub:5000/x/red:1"}
	long := Job{Source: "registry.example.com/" + strings.Repeat("very-long-path/", 8) + "image:1.0", Target: "sea.hub:5000/long:1"}
	chart := Job{Source: "charts/shop", Target: "sea.hub:5000/charts/shop:0.1.0", Chart: &Chart{Name: "shop", Version: "0.1.0"}}

	pr, _ := r.(PartReporter)
	if pr != nil {
		pr.CheckProgress(CheckProgress{Checksums: "b.tar.sha256", Total: 3 << 20, Files: 2})
		tick(150 * time.Millisecond)
		pr.CheckProgress(CheckProgress{Checksums: "b.tar.sha256", Bytes: 1 << 20, Total: 3 << 20, Files: 2})
		tick(150 * time.Millisecond)
		pr.CheckProgress(CheckProgress{Checksums: "b.tar.sha256", Bytes: 2 << 20, Total: 3 << 20, Checked: 1, Files: 2, File: "b.tar.part000"})
		pr.CheckProgress(CheckProgress{Checksums: "b.tar.sha256", Bytes: 3 << 20, Total: 3 << 20, Checked: 2, Files: 2, File: "b.tar.part001"})
	}
	r.Begin(6)
	if n, ok := r.(Noticer); ok {
		n.Notice("127.0.0.1:5000 is reached over plain HTTP: it is a loopback address (any other registry needs TLS or --insecure)")
	}
	r.Start(nginx)
	r.Start(redis)
	r.Start(long)
	tick(50 * time.Millisecond)
	r.Transferred(1 << 20) // within 100ms: no redraw
	tick(60 * time.Millisecond)
	r.Transferred(3 << 20)
	r.Warn(nginx, "platform filter keeps 1 of 2 manifests: the index digest changes from "+d1+" to "+d2)
	r.Done(Result{Job: nginx, Destination: nginx.Target, Status: Copied, Digest: d1, Bytes: 70_567_000, Attachments: []Attachment{
		{Kind: Signature, Source: "docker.io/library/nginx:sha256-4c0f.sig", Destination: "sea.hub:5000/library/nginx:sha256-4c0f.sig", Status: Copied, Digest: d2},
		{Kind: Attestation, Source: "docker.io/library/nginx:sha256-4c0f.att", Destination: "sea.hub:5000/library/nginx:sha256-4c0f.att", Status: Skipped, Digest: d2},
		{Kind: SBOM, Source: "docker.io/library/nginx:sha256-4c0f.sbom", Destination: "sea.hub:5000/library/nginx:sha256-4c0f.sbom", Status: Failed, Err: errors.New("PUT: 500 boom")},
	}})
	r.Done(Result{Job: redis, Destination: redis.Target, Status: Skipped, Digest: d2})
	r.Start(plainSrc)
	refused := &url.Error{Op: "Get", URL: "http://10.0.0.5:5000/v2/", Err: &PlainHTTPError{Host: "10.0.0.5:5000"}}
	r.Done(Result{Job: plainSrc, Destination: plainSrc.Target, Status: Failed, Err: refused})
	r.Start(odd)
	mismatch := &url.Error{Op: "Get", URL: "https://quay.io/v2/", Err: &PlainHTTPError{Host: "quay.io", Err: http.ErrSchemeMismatch}}
	r.Done(Result{Job: odd, Destination: odd.Target, Status: Failed, Err: fmt.Errorf("reading: %w", mismatch)})
	r.Done(Result{Job: long, Destination: long.Target, Via: "10.0.0.5:5000", Status: Copied, Digest: d1, Bytes: 1536})
	r.Start(chart)
	r.Done(Result{Job: chart, Destination: chart.Target, Status: Copied, Digest: d2, Bytes: 2048})
	tick(time.Second)
	r.End(Summary{Copied: 2, Skipped: 1, Failed: 2, Bytes: 70_570_584, Elapsed: 2345 * time.Millisecond,
		Attachments: Counts{Copied: 1, Skipped: 1, Failed: 1}, Charts: Counts{Copied: 1}, attachments: true})
	if pr != nil {
		pr.PartWritten("b.tar.part000", 2<<20)
		pr.PartWritten("b.tar.sha256", 100)
	}
}

// TestReportersGolden pins the bytes the line and terminal reporters
// write for a run that meets every line they draw.
func TestReportersGolden(t *testing.T) {
	var line strings.Builder
	scriptedRun(NewLineReporter(&line), nil)
	golden(t, "report-line.golden", line.String())

	var term strings.Builder
	clock := time.Unix(0, 0)
	tr := NewTerminalReporter(&term).(*termReporter)
	tr.now = func() time.Time { return clock }
	scriptedRun(tr, &clock)
	golden(t, "report-terminal.golden", term.String())
}

// TestSummaryLinesGolden pins the summary line of each kind of run.
func TestSummaryLinesGolden(t *testing.T) {
	var b strings.Builder
	for _, s := range []Summary{
		{},
		{Copied: 3, Skipped: 1, Failed: 1, Bytes: 2048, Elapsed: 1234 * time.Millisecond},
		{Copied: 3, Bytes: 5 << 30, Elapsed: 90 * time.Second, attachments: true, Attachments: Counts{Copied: 4, Skipped: 2}},
		{Copied: 1, Charts: Counts{Copied: 1, Skipped: 2, Failed: 1}},
		{Planned: 4, dryRun: true},
		{Planned: 4, Failed: 1, dryRun: true, attachments: true, Attachments: Counts{Planned: 7, Failed: 2}},
		{Planned: 2, dryRun: true, Charts: Counts{Planned: 1, Failed: 1}},
		{Planned: 2}, // planned and nothing copied: a dry run
	} {
		fmt.Fprintln(&b, summaryLine(s))
	}
	golden(t, "summary-lines.golden", b.String())
}

// TestWritePlanGolden pins the plan of a dry run.
func TestWritePlanGolden(t *testing.T) {
	d := "sha256:4c0fdaa8b6341bfdeca5f18f7837462c80cff90527ee35ef185571e1c327beac"
	s := Summary{dryRun: true, attachments: true, Results: []Result{
		{Job: Job{Source: "docker.io/library/nginx:1.25", Target: "sea.hub:5000/library/nginx:1.25"}, Destination: "sea.hub:5000/library/nginx:1.25", Status: Planned, Attachments: []Attachment{
			{Kind: Signature, Source: "docker.io/library/nginx:sha256-4c0f.sig", Destination: "sea.hub:5000/library/nginx:sha256-4c0f.sig", Status: Planned, Digest: d},
			{Kind: SBOM, Source: "docker.io/library/nginx:sha256-4c0f.sbom", Destination: "sea.hub:5000/library/nginx:sha256-4c0f.sbom", Status: Failed, Err: errors.New("HEAD: 404")},
		}},
		{Job: Job{Source: "quay.io/x/y:1@" + d, Target: "sea.hub:5000/x/y:1@" + d}, Destination: "oci:bundle", Status: Planned, Digest: d},
		{Job: Job{Source: "quay.io/x/gone:1", Target: "sea.hub:5000/x/gone:1"}, Destination: "sea.hub:5000/x/gone:1", Status: Failed, Err: errors.New("HEAD: 404")},
		{Job: Job{Source: "charts/shop", Target: "sea.hub:5000/charts/shop:0.1.0", Chart: &Chart{Name: "shop"}}, Destination: "sea.hub:5000/charts/shop:0.1.0", Status: Planned, Digest: d},
	}}
	var b strings.Builder
	if err := WritePlan(&b, s); err != nil {
		t.Fatal(err)
	}
	golden(t, "plan.golden", b.String())
}
