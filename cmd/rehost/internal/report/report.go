// Package report draws the progress of package mirror's runs for the
// command line: a line per image for logs and pipes (NewLine), a status
// line redrawn in place for a terminal (NewTerminal), the plan of a dry
// run (WritePlan) and the summary line. It words the library's typed
// errors and notices with the flags that fix them (Error).
//
// Package mirror reports facts (events, results, summaries, typed
// errors) and prints nothing; every word the user reads about a mirror
// run is written here. What may come from a layout, an archive or a
// registry is quoted (bounded.Word) or escaped (bounded.Clean).
package report

import (
	"fmt"
	"io"
	"time"

	"github.com/rehost/rehost/internal/bounded"
	"github.com/rehost/rehost/internal/bytesize"
	"github.com/rehost/rehost/pkg/mirror"
)

// NewLine returns a mirror.Reporter that writes one line per image to w,
// for logs and pipes:
//
//	copied  docker.io/library/nginx:1.25 -> sea.hub:5000/library/nginx:1.25 (sha256:4c0fdaa8b634, 67.3 MiB)
//	skipped docker.io/library/redis:7.2 -> sea.hub:5000/library/redis:7.2 (present, sha256:e422889e156e)
//	failed  quay.io/x/y:1.0 -> sea.hub:5000/x/y:1.0: GET https://…: MANIFEST_UNKNOWN
//
// with a line per attachment below its image:
//
//	copied  signature quay.io/x/y:sha256-….sig -> sea.hub:5000/x/y:sha256-….sig (sha256:9f86d081884c)
//
// and a summary line at the end. It takes notices (mirror.Noticer) and
// the parts of an archive checked and written (mirror.PartReporter).
func NewLine(w io.Writer) mirror.Reporter { return &line{w: w} }

type line struct{ w io.Writer }

func (l *line) Begin(int)         {}
func (l *line) Start(mirror.Job)  {}
func (l *line) Transferred(int64) {}

func (l *line) Warn(j mirror.Job, msg string) {
	fmt.Fprintf(l.w, "warning: %s: %s\n", bounded.Word(j.Source), bounded.Clean(msg))
}

func (l *line) Notice(n mirror.Notice) {
	fmt.Fprintf(l.w, "notice: %s\n", bounded.Clean(noticeText(n)))
}

func (l *line) Done(r mirror.Result) {
	fmt.Fprintln(l.w, resultLine(r))
	for _, a := range r.Attachments {
		fmt.Fprintln(l.w, attachmentLine(a))
	}
}

func (l *line) End(s mirror.Summary) { fmt.Fprintln(l.w, SummaryLine(s)) }

// CheckProgress prints a line per file of an archive checked.
func (l *line) CheckProgress(p mirror.CheckProgress) {
	if p.File != "" {
		fmt.Fprintln(l.w, checkedLine(p))
	}
}

// PartWritten prints a line per file of an archive written.
func (l *line) PartWritten(path string, size int64) {
	fmt.Fprintf(l.w, "wrote   %s (%s)\n", bounded.Clean(path), size64(size))
}

// WritePlan writes the plan of a dry run to w: a "would copy" line per
// image, and an indented one per attachment below it.
func WritePlan(w io.Writer, s mirror.Summary) error {
	for _, r := range s.Results {
		if r.Status != mirror.Planned {
			continue
		}
		if _, err := fmt.Fprintln(w, resultLine(r)); err != nil {
			return err
		}
		for _, a := range r.Attachments {
			if a.Status != mirror.Planned {
				continue
			}
			if _, err := fmt.Fprintln(w, attachmentLine(a)); err != nil {
				return err
			}
		}
	}
	return nil
}

// attachmentLine is the one-line report of an attachment, indented.
func attachmentLine(a mirror.Attachment) string {
	where := fmt.Sprintf("%s %s -> %s", bounded.Word(string(a.Kind)), bounded.Word(a.Source), bounded.Word(a.Destination))
	switch a.Status {
	case mirror.Copied:
		return fmt.Sprintf("  copied  %s (%s)", where, shortDigest(a.Digest))
	case mirror.Skipped:
		return fmt.Sprintf("  skipped %s (present)", where)
	case mirror.Planned:
		return "  would copy " + where
	default:
		return fmt.Sprintf("  failed  %s: %s", where, errText(a.Err))
	}
}

// checkedLine is the line of a file of an archive checked.
func checkedLine(p mirror.CheckProgress) string {
	return fmt.Sprintf("checked %s against %s (%d of %d, %s of %s)", bounded.Clean(p.File), bounded.Clean(p.Checksums), p.Checked, p.Files, size64(p.Bytes), size64(p.Total))
}

// errText is an error's message on one line, worded for the command line
// (Error), unprintable characters escaped.
func errText(err error) string { return bounded.Clean(Error(err)) }

// resultLine is the one-line report of a result.
func resultLine(r mirror.Result) string {
	where := bounded.Word(r.Source) + " -> " + bounded.Word(r.Destination)
	if r.Via != "" {
		where += " via " + bounded.Word(r.Via)
	}
	if r.From != "" {
		where += " from " + bounded.Word(r.From)
	}
	if r.Chart != nil {
		where = "chart " + where
	}
	signed := ""
	if v := r.Verification; v != nil && v.Verdict == mirror.Verified {
		signed = ", signed: " + bounded.Word(v.KeyName)
	}
	switch r.Status {
	case mirror.Copied:
		return fmt.Sprintf("copied  %s (%s, %s%s)", where, shortDigest(r.Digest), size64(r.Bytes), signed)
	case mirror.Skipped:
		return fmt.Sprintf("skipped %s (present, %s%s)", where, shortDigest(r.Digest), signed)
	case mirror.Planned:
		if r.Digest != "" {
			return fmt.Sprintf("would copy %s (%s)", where, r.Digest)
		}
		return "would copy " + where
	default:
		return fmt.Sprintf("failed  %s: %s", where, errText(r.Err))
	}
}

// SummaryLine is the last line of a run. Attachments and charts are
// counted apart from images. A shard's run (--shard) says which, and how
// many images and charts it left to the other shards.
func SummaryLine(s mirror.Summary) string {
	line := summaryLine(s)
	if s.Shard.Whole() {
		return line
	}
	return fmt.Sprintf("shard %s: %s; %d images and charts left to the other shards", s.Shard, line, s.Elsewhere)
}

func summaryLine(s mirror.Summary) string {
	a, c := s.Attachments, s.Charts
	if s.DryRun || s.Planned > 0 && s.Copied+s.Skipped == 0 {
		line := fmt.Sprintf("dry run: %d images would be copied, %d failed", s.Planned, s.Failed+a.Failed)
		if s.ListedAttachments {
			line = fmt.Sprintf("dry run: %d images and %d attachments would be copied, %d failed", s.Planned, a.Planned, s.Failed+a.Failed)
		}
		if c.Total() > 0 {
			line += fmt.Sprintf("; charts: %d would be pushed, %d failed", c.Planned, c.Failed)
		}
		if s.Verified+s.Unverified > 0 {
			line += fmt.Sprintf("; signatures: %d verified, %d not", s.Verified, s.Unverified)
		}
		return line
	}
	line := fmt.Sprintf("%d copied, %d skipped, %d failed, %s in %s", s.Copied, s.Skipped, s.Failed, size64(s.Bytes), s.Elapsed.Round(100*time.Millisecond))
	if s.ListedAttachments {
		line += fmt.Sprintf("; attachments: %d copied, %d skipped, %d failed", a.Copied, a.Skipped, a.Failed)
	}
	if c.Total() > 0 {
		line += fmt.Sprintf("; charts: %d pushed, %d skipped, %d failed", c.Copied, c.Skipped, c.Failed)
	}
	if s.Verified+s.Unverified > 0 {
		line += fmt.Sprintf("; signatures: %d verified, %d not", s.Verified, s.Unverified)
	}
	return line
}

// shortDigest is "sha256:" and the first 12 hex digits of d.
func shortDigest(d string) string {
	if len(d) > len("sha256:")+12 {
		return d[:len("sha256:")+12]
	}
	return d
}

// size64 is a size in binary units with one decimal: "1.5 KiB".
func size64(n int64) string { return bytesize.Fixed(n) }
