package report

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/rehost/rehost/internal/bounded"
	"github.com/rehost/rehost/pkg/mirror"
)

// NewTerminal returns a mirror.Reporter for a terminal: a status line,
// redrawn in place, with the images done and in total, the bytes so far
// and the images being copied; warnings and failures are printed above it
// as they happen, and the summary line at the end.
func NewTerminal(w io.Writer) mirror.Reporter { return newTerminal(w, time.Now) }

func newTerminal(w io.Writer, now func() time.Time) *terminal {
	return &terminal{w: w, active: map[string]int{}, now: now}
}

type terminal struct {
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

func (t *terminal) Begin(total int) { t.total, t.ended = total, false; t.draw() }

func (t *terminal) Start(j mirror.Job) { t.active[j.Source]++; t.draw() }

func (t *terminal) Transferred(n int64) {
	t.bytes += n
	if t.now().Sub(t.lastDraw) >= redrawEvery {
		t.draw()
	}
}

func (t *terminal) Warn(j mirror.Job, msg string) {
	t.clear()
	fmt.Fprintf(t.w, "warning: %s: %s\n", bounded.Word(j.Source), bounded.Clean(msg))
	t.draw()
}

func (t *terminal) Notice(n mirror.Notice) {
	t.clear()
	fmt.Fprintf(t.w, "notice: %s\n", bounded.Clean(noticeText(n)))
	t.draw()
}

func (t *terminal) Done(r mirror.Result) {
	t.done++
	if t.active[r.Source]--; t.active[r.Source] <= 0 {
		delete(t.active, r.Source)
	}
	printed := false
	if r.Status == mirror.Failed || r.Status == mirror.Planned {
		t.clear()
		fmt.Fprintln(t.w, resultLine(r))
		printed = true
	}
	for _, a := range r.Attachments {
		if a.Status == mirror.Failed || a.Status == mirror.Planned {
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
func (t *terminal) CheckProgress(p mirror.CheckProgress) {
	if p.File != "" && p.Checked == p.Files {
		t.clear()
		fmt.Fprintf(t.w, "checked %d files (%s) against %s\n", p.Files, size64(p.Total), bounded.Clean(p.Checksums))
		return
	}
	if p.File == "" && t.now().Sub(t.lastDraw) < redrawEvery {
		return
	}
	t.drawLine(fmt.Sprintf("checking against %s: %d of %d files, %s of %s", bounded.Clean(p.Checksums), p.Checked, p.Files, size64(p.Bytes), size64(p.Total)))
}

// PartWritten prints a line per file of an archive written.
func (t *terminal) PartWritten(path string, size int64) {
	t.clear()
	fmt.Fprintf(t.w, "wrote   %s (%s)\n", bounded.Clean(path), size64(size))
	t.draw()
}

func (t *terminal) End(s mirror.Summary) {
	t.clear()
	t.ended = true
	fmt.Fprintln(t.w, SummaryLine(s))
}

// maxStatus keeps the status line on one line of a narrow terminal.
const maxStatus = 100

func (t *terminal) draw() {
	var names []string
	for s := range t.active {
		names = append(names, s)
	}
	sort.Strings(names)
	line := fmt.Sprintf("[%d/%d] %s", t.done, t.total, size64(t.bytes))
	if len(names) > 0 {
		line += "  " + bounded.Word(names[0])
		if len(names) > 1 {
			line += fmt.Sprintf(" (+%d)", len(names)-1)
		}
	}
	t.drawLine(line)
}

// drawLine draws line as the status line, over the one before.
func (t *terminal) drawLine(line string) {
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
func (t *terminal) clear() {
	if t.drawn {
		fmt.Fprintf(t.w, "\r%s\r", strings.Repeat(" ", t.lastWidth))
		t.drawn = false
		t.lastWidth = 0
	}
}
