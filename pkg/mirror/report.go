package mirror

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"time"
)

// Reporter receives the progress of a run. A Mirror never calls it from
// two goroutines at once, so implementations need no locking.
type Reporter interface {
	// Begin starts a run of total images.
	Begin(total int)
	// Start says that a job started.
	Start(j Job)
	// Transferred adds n bytes to the bytes transferred so far.
	Transferred(n int64)
	// Warn reports something the user should know about a job, such as a
	// digest changed by a platform filter.
	Warn(j Job, msg string)
	// Done says that a job finished, successfully or not.
	Done(r Result)
	// End closes the run with its summary.
	End(s Summary)
}

// Noticer is implemented by Reporters that take notices about a run as a
// whole rather than one image, such as a loopback registry reached over
// plain HTTP. A Mirror calls Notice only if its Reporter implements it.
type Noticer interface {
	Notice(msg string)
}

type discard struct{}

func (discard) Begin(int)         {}
func (discard) Start(Job)         {}
func (discard) Transferred(int64) {}
func (discard) Warn(Job, string)  {}
func (discard) Done(Result)       {}
func (discard) End(Summary)       {}

// NewLineReporter returns a Reporter that writes one line per image to w,
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
// and a summary line at the end.
func NewLineReporter(w io.Writer) Reporter { return &lineReporter{w: w} }

type lineReporter struct{ w io.Writer }

func (l *lineReporter) Begin(int)         {}
func (l *lineReporter) Start(Job)         {}
func (l *lineReporter) Transferred(int64) {}

func (l *lineReporter) Warn(j Job, msg string) {
	fmt.Fprintf(l.w, "warning: %s: %s\n", Quote(j.Source), clean(msg))
}

func (l *lineReporter) Notice(msg string) { fmt.Fprintf(l.w, "notice: %s\n", clean(msg)) }

func (l *lineReporter) Done(r Result) {
	fmt.Fprintln(l.w, resultLine(r))
	for _, a := range r.Attachments {
		fmt.Fprintln(l.w, attachmentLine(a))
	}
}

// WritePlan writes the plan of a dry run to w: a "would copy" line per
// image, and an indented one per attachment below it.
func WritePlan(w io.Writer, s Summary) error {
	for _, r := range s.Results {
		if r.Status != Planned {
			continue
		}
		if _, err := fmt.Fprintln(w, resultLine(r)); err != nil {
			return err
		}
		for _, a := range r.Attachments {
			if a.Status != Planned {
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
// What may come from a layout or a registry is quoted (Quote, clean).
func attachmentLine(a Attachment) string {
	where := fmt.Sprintf("%s %s -> %s", Quote(string(a.Kind)), Quote(a.Source), Quote(a.Destination))
	switch a.Status {
	case Copied:
		return fmt.Sprintf("  copied  %s (%s)", where, shortDigest(a.Digest))
	case Skipped:
		return fmt.Sprintf("  skipped %s (present)", where)
	case Planned:
		return "  would copy " + where
	default:
		return fmt.Sprintf("  failed  %s: %s", where, errText(a.Err))
	}
}

func (l *lineReporter) End(s Summary) { fmt.Fprintln(l.w, summaryLine(s)) }

// CheckProgress prints a line per file of an archive checked.
func (l *lineReporter) CheckProgress(p CheckProgress) {
	if p.File != "" {
		fmt.Fprintln(l.w, checkedLine(p))
	}
}

// PartWritten prints a line per file of an archive written.
func (l *lineReporter) PartWritten(path string, size int64) {
	fmt.Fprintf(l.w, "wrote   %s (%s)\n", clean(path), humanBytes(size))
}

// checkedLine is the line of a file of an archive checked.
func checkedLine(p CheckProgress) string {
	return fmt.Sprintf("checked %s against %s (%d of %d, %s of %s)", clean(p.File), clean(p.Checksums), p.Checked, p.Files, humanBytes(p.Bytes), humanBytes(p.Total))
}

// errText is an error's message on one line, unprintable characters
// escaped.
func errText(err error) string {
	if err == nil {
		return "<nil>"
	}
	return clean(err.Error())
}

// resultLine is the one-line report of a result. What may come from a
// layout or a registry is quoted (Quote, clean).
func resultLine(r Result) string {
	where := Quote(r.Source) + " -> " + Quote(r.Destination)
	if r.Via != "" {
		where += " via " + Quote(r.Via)
	}
	if r.Chart != nil {
		where = "chart " + where
	}
	switch r.Status {
	case Copied:
		return fmt.Sprintf("copied  %s (%s, %s)", where, shortDigest(r.Digest), humanBytes(r.Bytes))
	case Skipped:
		return fmt.Sprintf("skipped %s (present, %s)", where, shortDigest(r.Digest))
	case Planned:
		if r.Digest != "" {
			return fmt.Sprintf("would copy %s (%s)", where, r.Digest)
		}
		return "would copy " + where
	default:
		return fmt.Sprintf("failed  %s: %s", where, errText(r.Err))
	}
}

// summaryLine is the last line of a run.
// Attachments and charts are counted apart from images.
func summaryLine(s Summary) string {
	a, c := s.Attachments, s.Charts
	if s.dryRun || s.Planned > 0 && s.Copied+s.Skipped == 0 {
		line := fmt.Sprintf("dry run: %d images would be copied, %d failed", s.Planned, s.Failed+a.Failed)
		if s.attachments {
			line = fmt.Sprintf("dry run: %d images and %d attachments would be copied, %d failed", s.Planned, a.Planned, s.Failed+a.Failed)
		}
		if c.Total() > 0 {
			line += fmt.Sprintf("; charts: %d would be pushed, %d failed", c.Planned, c.Failed)
		}
		return line
	}
	line := fmt.Sprintf("%d copied, %d skipped, %d failed, %s in %s", s.Copied, s.Skipped, s.Failed, humanBytes(s.Bytes), s.Elapsed.Round(100*time.Millisecond))
	if s.attachments {
		line += fmt.Sprintf("; attachments: %d copied, %d skipped, %d failed", a.Copied, a.Skipped, a.Failed)
	}
	if c.Total() > 0 {
		line += fmt.Sprintf("; charts: %d pushed, %d skipped, %d failed", c.Copied, c.Skipped, c.Failed)
	}
	return line
}

func shortDigest(d string) string {
	if len(d) > len("sha256:")+12 {
		return d[:len("sha256:")+12]
	}
	return d
}

// humanBytes formats n in binary units: "512 B", "1.5 KiB", "67.3 MiB".
func humanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

// NewTerminalReporter returns a Reporter for a terminal: a status line,
// redrawn in place, with the images done and in total, the bytes so far and
// the images being copied; warnings and failures are printed above it as
// they happen, and the summary line at the end.
func NewTerminalReporter(w io.Writer) Reporter {
	return &termReporter{w: w, active: map[string]int{}, now: time.Now}
}

type termReporter struct {
	w         io.Writer
	total     int
	done      int
	bytes     int64
	active    map[string]int // source -> jobs running
	drawn     bool
	lastDraw  time.Time
	now       func() time.Time
	lastWidth int
	ended     bool // End was called: no status line any more
}

// redrawEvery limits the redraws caused by byte counts.
const redrawEvery = 100 * time.Millisecond

func (t *termReporter) Begin(total int) { t.total, t.ended = total, false; t.draw() }

func (t *termReporter) Start(j Job) { t.active[j.Source]++; t.draw() }

func (t *termReporter) Transferred(n int64) {
	t.bytes += n
	if t.now().Sub(t.lastDraw) >= redrawEvery {
		t.draw()
	}
}

func (t *termReporter) Warn(j Job, msg string) {
	t.clear()
	fmt.Fprintf(t.w, "warning: %s: %s\n", Quote(j.Source), clean(msg))
	t.draw()
}

func (t *termReporter) Notice(msg string) {
	t.clear()
	fmt.Fprintf(t.w, "notice: %s\n", clean(msg))
	t.draw()
}

func (t *termReporter) Done(r Result) {
	t.done++
	if t.active[r.Source]--; t.active[r.Source] <= 0 {
		delete(t.active, r.Source)
	}
	printed := false
	if r.Status == Failed || r.Status == Planned {
		t.clear()
		fmt.Fprintln(t.w, resultLine(r))
		printed = true
	}
	for _, a := range r.Attachments {
		if a.Status == Failed || a.Status == Planned {
			if !printed {
				t.clear()
				fmt.Fprintln(t.w, resultLine(r))
				printed = true
			}
			fmt.Fprintln(t.w, attachmentLine(a))
		}
	}
	t.draw()
}

// CheckProgress redraws the status line with the check of an archive's
// files, and prints a line once they all match.
func (t *termReporter) CheckProgress(p CheckProgress) {
	if p.File != "" && p.Checked == p.Files {
		t.clear()
		fmt.Fprintf(t.w, "checked %d files (%s) against %s\n", p.Files, humanBytes(p.Total), clean(p.Checksums))
		return
	}
	if p.File == "" && t.now().Sub(t.lastDraw) < redrawEvery {
		return
	}
	t.drawLine(fmt.Sprintf("checking against %s: %d of %d files, %s of %s", clean(p.Checksums), p.Checked, p.Files, humanBytes(p.Bytes), humanBytes(p.Total)))
}

// PartWritten prints a line per file of an archive written.
func (t *termReporter) PartWritten(path string, size int64) {
	t.clear()
	fmt.Fprintf(t.w, "wrote   %s (%s)\n", clean(path), humanBytes(size))
	t.draw()
}

func (t *termReporter) End(s Summary) {
	t.clear()
	t.ended = true
	fmt.Fprintln(t.w, summaryLine(s))
}

// maxStatus keeps the status line on one line of a narrow terminal.
const maxStatus = 100

func (t *termReporter) draw() {
	var names []string
	for s := range t.active {
		names = append(names, s)
	}
	sort.Strings(names)
	line := fmt.Sprintf("[%d/%d] %s", t.done, t.total, humanBytes(t.bytes))
	if len(names) > 0 {
		line += "  " + Quote(names[0])
		if len(names) > 1 {
			line += fmt.Sprintf(" (+%d)", len(names)-1)
		}
	}
	t.drawLine(line)
}

// drawLine draws line as the status line, over the one before.
func (t *termReporter) drawLine(line string) {
	if t.ended {
		return
	}
	if len(line) > maxStatus {
		line = line[:maxStatus-1] + "…"
	}
	pad := ""
	if t.lastWidth > len(line) {
		pad = strings.Repeat(" ", t.lastWidth-len(line))
	}
	fmt.Fprintf(t.w, "\r%s%s", line, pad)
	t.lastWidth = len(line)
	t.drawn = true
	t.lastDraw = t.now()
}

// clear erases the status line so that a permanent line can be printed.
func (t *termReporter) clear() {
	if t.drawn {
		fmt.Fprintf(t.w, "\r%s\r", strings.Repeat(" ", t.lastWidth))
		t.drawn = false
		t.lastWidth = 0
	}
}
