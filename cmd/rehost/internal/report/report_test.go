package report

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/rehost/rehost/pkg/mirror"
)

func TestResultLine(t *testing.T) {
	j := mirror.Job{Source: "docker.io/library/nginx:1.25", Target: "sea.hub:5000/library/nginx:1.25"}
	d := "sha256:4c0fdaa8b6341bfdeca5f18f7837462c80cff90527ee35ef185571e1c327beac"
	for _, c := range []struct {
		r    mirror.Result
		want string
	}{
		{mirror.Result{Job: j, Destination: j.Target, Status: mirror.Copied, Digest: d, Bytes: 70_567_000}, "copied  docker.io/library/nginx:1.25 -> sea.hub:5000/library/nginx:1.25 (sha256:4c0fdaa8b634, 67.3 MiB)"},
		{mirror.Result{Job: j, Destination: j.Target, Status: mirror.Skipped, Digest: d}, "skipped docker.io/library/nginx:1.25 -> sea.hub:5000/library/nginx:1.25 (present, sha256:4c0fdaa8b634)"},
		{mirror.Result{Job: j, Destination: "oci:bundle", Status: mirror.Planned}, "would copy docker.io/library/nginx:1.25 -> oci:bundle"},
		{mirror.Result{Job: j, Destination: j.Target, Status: mirror.Planned, Digest: d}, "would copy docker.io/library/nginx:1.25 -> sea.hub:5000/library/nginx:1.25 (" + d + ")"},
		{mirror.Result{Job: j, Destination: j.Target, Status: mirror.Failed, Err: errors.New("boom")}, "failed  docker.io/library/nginx:1.25 -> sea.hub:5000/library/nginx:1.25: boom"},
	} {
		if got := resultLine(c.r); got != c.want {
			t.Errorf("resultLine(%s):\n got %q\nwant %q", c.r.Status, got, c.want)
		}
	}
}

func TestSummaryLine(t *testing.T) {
	s := mirror.Summary{Copied: 3, Skipped: 1, Failed: 1, Bytes: 2048, Elapsed: 1234 * time.Millisecond}
	if got, want := SummaryLine(s), "3 copied, 1 skipped, 1 failed, 2.0 KiB in 1.2s"; got != want {
		t.Errorf("summaryLine = %q, want %q", got, want)
	}
	if got, want := SummaryLine(mirror.Summary{Planned: 4}), "dry run: 4 images would be copied, 0 failed"; got != want {
		t.Errorf("summaryLine = %q, want %q", got, want)
	}
}

func TestLineReporter(t *testing.T) {
	var b strings.Builder
	r := NewLine(&b)
	j := mirror.Job{Source: "a/b:1", Target: "r/a/b:1"}
	r.Begin(1)
	r.Start(j)
	r.Transferred(10)
	r.Warn(j, "careful")
	r.Done(mirror.Result{Job: j, Destination: j.Target, Status: mirror.Copied, Digest: "sha256:00", Bytes: 10})
	r.End(mirror.Summary{Copied: 1, Bytes: 10})
	want := "warning: a/b:1: careful\ncopied  a/b:1 -> r/a/b:1 (sha256:00, 10 B)\n1 copied, 0 skipped, 0 failed, 10 B in 0s\n"
	if b.String() != want {
		t.Errorf("output:\n%q\nwant:\n%q", b.String(), want)
	}
}

func TestTerminalReporter(t *testing.T) {
	var b strings.Builder
	now := time.Unix(0, 0)
	r := newTerminal(&b, func() time.Time { return now })
	one, two := mirror.Job{Source: "x/one:1", Target: "r/x/one:1"}, mirror.Job{Source: "x/two:1", Target: "r/x/two:1"}
	r.Begin(2)
	r.Start(one)
	r.Start(two)
	mark := b.Len()
	r.Transferred(2048) // within 100ms of the last draw: no redraw
	if b.Len() != mark {
		t.Errorf("redrew within %v: %q", redrawEvery, b.String()[mark:])
	}
	now = now.Add(redrawEvery)
	r.Transferred(2048)
	if !strings.HasSuffix(b.String(), "\r[0/2] 4.0 KiB  x/one:1 (+1)") {
		t.Errorf("status line: %q", b.String())
	}
	r.Done(mirror.Result{Job: one, Destination: one.Target, Status: mirror.Copied})
	r.Done(mirror.Result{Job: two, Destination: two.Target, Status: mirror.Failed, Err: errors.New("boom")})
	r.End(mirror.Summary{Copied: 1, Failed: 1, Bytes: 4096})
	out := b.String()
	for _, want := range []string{"\r[1/2] 4.0 KiB  x/two:1", "failed  x/two:1 -> r/x/two:1: boom\n", "1 copied, 0 skipped, 1 failed, 4.0 KiB in 0s\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%q", want, out)
		}
	}
	if strings.Contains(out, "copied  x/one") {
		t.Errorf("the terminal display printed a line for a successful copy:\n%q", out)
	}
	if !strings.HasSuffix(out, "\r1 copied, 0 skipped, 1 failed, 4.0 KiB in 0s\n") {
		t.Errorf("the summary does not replace the status line:\n%q", out)
	}
}

func TestPartReporters(t *testing.T) {
	var b strings.Builder
	r := NewLine(&b).(mirror.PartReporter)
	r.CheckProgress(mirror.CheckProgress{Checksums: "b.tar.sha256", Total: 3 << 20, Files: 2})
	r.CheckProgress(mirror.CheckProgress{Checksums: "b.tar.sha256", Bytes: 2 << 20, Total: 3 << 20, Checked: 1, Files: 2, File: "b.tar.part000"})
	r.PartWritten("b.tar.part000", 2<<20)
	want := "checked b.tar.part000 against b.tar.sha256 (1 of 2, 2.0 MiB of 3.0 MiB)\nwrote   b.tar.part000 (2.0 MiB)\n"
	if b.String() != want {
		t.Errorf("line reporter:\n%q\nwant\n%q", b.String(), want)
	}

	b.Reset()
	now := time.Unix(0, 0)
	tr := newTerminal(&b, func() time.Time { return now })
	tr.CheckProgress(mirror.CheckProgress{Checksums: "b.tar.sha256", Total: 3 << 20, Files: 2})
	if !strings.HasSuffix(b.String(), "\rchecking against b.tar.sha256: 0 of 2 files, 0 B of 3.0 MiB") {
		t.Errorf("status line %q", b.String())
	}
	tr.CheckProgress(mirror.CheckProgress{Checksums: "b.tar.sha256", Bytes: 3 << 20, Total: 3 << 20, Checked: 2, Files: 2, File: "b.tar.part001"})
	if !strings.HasSuffix(b.String(), "checked 2 files (3.0 MiB) against b.tar.sha256\n") {
		t.Errorf("last line %q", b.String())
	}
	// After the summary, the parts still written do not bring the status
	// line back.
	b.Reset()
	tr.Begin(1)
	tr.End(mirror.Summary{Copied: 1})
	tr.PartWritten("b.tar.sha256", 100)
	if !strings.HasSuffix(b.String(), "1 copied, 0 skipped, 0 failed, 0 B in 0s\nwrote   b.tar.sha256 (100 B)\n") {
		t.Errorf("after the end: %q", b.String())
	}
}

func TestResultLineVia(t *testing.T) {
	r := mirror.Result{Job: mirror.Job{Source: "a/b:1", Target: "sea.hub:5000/a/b:1"}, Destination: "sea.hub:5000/a/b:1", Via: "10.0.0.5:5000", Status: mirror.Copied, Digest: "sha256:00"}
	if got, want := resultLine(r), "copied  a/b:1 -> sea.hub:5000/a/b:1 via 10.0.0.5:5000 (sha256:00, 0 B)"; got != want {
		t.Errorf("resultLine = %q, want %q", got, want)
	}
}

// TestWords: the typed errors and notices of package mirror, which name
// no flag, are worded with the flags that fix them, in place within the
// errors that wrap them; other notices are shown as they are.
func TestWords(t *testing.T) {
	plain := &mirror.PlainHTTPError{Host: "10.0.0.5:5000"}
	wrapped := fmt.Errorf("GET http://10.0.0.5:5000/v2/: %w; retried", plain)
	want := "GET http://10.0.0.5:5000/v2/: plain HTTP to 10.0.0.5:5000 refused: TLS is required unless the host is named insecure (Options.Insecure; rehost mirror: --insecure for the target, --insecure-source 10.0.0.5:5000 for a source); retried"
	if got := Error(wrapped); got != want {
		t.Errorf("Error:\n got %q\nwant %q", got, want)
	}
	pinned := &mirror.PinnedNarrowError{Pinned: "sha256:aa", Kept: 1, Total: 3, Digest: "sha256:bb"}
	if got, want := Error(fmt.Errorf("x -> y: %w", pinned)), "x -> y: the target is pinned to sha256:aa, but --platform keeps 1 of 3 manifests and the index digest becomes sha256:bb"; got != want {
		t.Errorf("Error:\n got %q\nwant %q", got, want)
	}
	// A message that lost the library's words (scrubbed) gets the
	// advice at the end.
	if got := Error(&opaque{plain}); !strings.HasSuffix(got, "(plain HTTP to 10.0.0.5:5000 refused: TLS is required unless the host is named insecure (Options.Insecure; rehost mirror: --insecure for the target, --insecure-source 10.0.0.5:5000 for a source))") {
		t.Errorf("Error of a reworded message: %q", got)
	}
	if got := Error(errors.New("boom")); got != "boom" {
		t.Errorf("Error(boom) = %q", got)
	}
	if got := noticeText(mirror.Notice{Msg: "b.tar has no checksum file b.tar.sha256", Unchecked: "b.tar"}); got != "b.tar has no checksum file b.tar.sha256" {
		t.Errorf("notice %q", got)
	}
}

// opaque is an error whose message does not hold the one it wraps.
type opaque struct{ err error }

func (o *opaque) Error() string { return "scrubbed" }
func (o *opaque) Unwrap() error { return o.err }

// TestSourceMirrorLines: an image read from a source mirror says so
// after its target; one its mirror lacks, with --source-mirror-only,
// names the flag.
func TestSourceMirrorLines(t *testing.T) {
	j := mirror.Job{Source: "docker.io/library/nginx:1.25", Target: "sea.hub:5000/library/nginx:1.25"}
	from := "mirror.corp:5000/dockerhub/library/nginx:1.25"
	for _, c := range []struct {
		r    mirror.Result
		want string
	}{
		{mirror.Result{Job: j, Destination: j.Target, Status: mirror.Planned, From: from}, "would copy docker.io/library/nginx:1.25 -> sea.hub:5000/library/nginx:1.25 from " + from},
		{mirror.Result{Job: j, Destination: j.Target, Via: "10.0.0.5:5000", Status: mirror.Copied, Digest: "sha256:00", From: from}, "copied  docker.io/library/nginx:1.25 -> sea.hub:5000/library/nginx:1.25 via 10.0.0.5:5000 from " + from + " (sha256:00, 0 B)"},
		{mirror.Result{Job: j, Destination: j.Target, Status: mirror.Failed, From: from, Err: &mirror.NotInMirrorError{Mirror: from, Err: errors.New("MANIFEST_UNKNOWN")}},
			"failed  docker.io/library/nginx:1.25 -> sea.hub:5000/library/nginx:1.25 from " + from + ": not in the source mirror (" + from + ": MANIFEST_UNKNOWN), and its own registry is not asked (--source-mirror-only)"},
	} {
		if got := resultLine(c.r); got != c.want {
			t.Errorf("resultLine:\n got %q\nwant %q", got, c.want)
		}
	}
}

// TestVerifyLines: a verified image names its key; one refused says why,
// with the flags; the summary counts the signatures verified.
func TestVerifyLines(t *testing.T) {
	j := mirror.Job{Source: "ghcr.io/team/app:1.0", Target: "sea.hub:5000/team/app:1.0"}
	ok := &mirror.Verification{Verdict: mirror.Verified, Digest: "sha256:00", Key: "sha256:ff", KeyName: "keys/cosign.pub", Format: mirror.BundleSignature, Signatures: 1}
	no := &mirror.Verification{Verdict: mirror.OtherDigest, Digest: "sha256:00", Format: mirror.TagSignature, Signatures: 1, SignedDigest: "sha256:11"}
	for _, c := range []struct {
		r    mirror.Result
		want string
	}{
		{mirror.Result{Job: j, Destination: j.Target, Status: mirror.Copied, Digest: "sha256:00", Verification: ok}, "copied  ghcr.io/team/app:1.0 -> sea.hub:5000/team/app:1.0 (sha256:00, 0 B, signed: keys/cosign.pub)"},
		{mirror.Result{Job: j, Destination: j.Target, Status: mirror.Skipped, Digest: "sha256:00", Verification: ok}, "skipped ghcr.io/team/app:1.0 -> sea.hub:5000/team/app:1.0 (present, sha256:00, signed: keys/cosign.pub)"},
		{mirror.Result{Job: j, Destination: j.Target, Status: mirror.Failed, Verification: no, Err: &mirror.UnverifiedError{Verification: no}},
			"failed  ghcr.io/team/app:1.0 -> sea.hub:5000/team/app:1.0: not copied: signed for another digest: a signature attached to sha256:00 (sig tag) is of sha256:11 (--verify-key; --verify=warn copies it with a warning)"},
	} {
		if got := resultLine(c.r); got != c.want {
			t.Errorf("resultLine:\n got %q\nwant %q", got, c.want)
		}
	}
	s := mirror.Summary{Copied: 1, Failed: 1, Verified: 1, Unverified: 1}
	if got, want := SummaryLine(s), "1 copied, 0 skipped, 1 failed, 0 B in 0s; signatures: 1 verified, 1 not"; got != want {
		t.Errorf("summaryLine = %q, want %q", got, want)
	}
	s = mirror.Summary{Planned: 1, Failed: 1, Verified: 1, Unverified: 1, DryRun: true}
	if got, want := SummaryLine(s), "dry run: 1 images would be copied, 1 failed; signatures: 1 verified, 1 not"; got != want {
		t.Errorf("summaryLine = %q, want %q", got, want)
	}
}
