package helmexec

import (
	"bytes"
	"fmt"
	"strings"
	"unicode/utf8"
)

// trimName is the helper's message without its name in front.
func trimName(s string) string { return strings.TrimSpace(strings.TrimPrefix(s, Name+": ")) }

// maxStderr bounds what is kept of the helper's standard error
// (its start and its end; a crash dump can be megabytes).
const maxStderr = 64 << 10

// headTail keeps the first max bytes written to it and the last line.
type headTail struct {
	max  int
	head bytes.Buffer
	n    int64     // bytes written
	tail [512]byte // the last bytes written
	t    int       // bytes in tail
}

func (h *headTail) Write(p []byte) (int, error) {
	h.n += int64(len(p))
	if room := h.max - h.head.Len(); room > 0 {
		h.head.Write(p[:min(room, len(p))])
	}
	if len(p) >= len(h.tail) {
		h.t = copy(h.tail[:], p[len(p)-len(h.tail):])
	} else {
		keep := min(h.t, len(h.tail)-len(p))
		copy(h.tail[:], h.tail[h.t-keep:h.t])
		h.t = keep + copy(h.tail[keep:], p)
	}
	return len(p), nil
}

// String is what was kept, with how much was left out.
func (h *headTail) String() string {
	if h.n <= int64(h.head.Len()) {
		return h.head.String()
	}
	s := h.head.String()
	for len(s) > 0 && !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s + fmt.Sprintf("…(%d bytes in all)", h.n)
}

// why is the line that says why a process crashed: a Go runtime's
// "fatal error: …" or "panic: …" line, else the last line, cut to 200
// bytes.
func (h *headTail) why() string {
	for _, l := range strings.Split(h.head.String(), "\n") {
		if strings.HasPrefix(l, "fatal error: ") || strings.HasPrefix(l, "panic: ") {
			return cut(strings.TrimSpace(l))
		}
	}
	tail := strings.TrimRight(string(h.tail[:h.t]), "\r\n\t ")
	if i := strings.LastIndexByte(tail, '\n'); i >= 0 {
		tail = tail[i+1:]
	}
	return cut(strings.TrimSpace(strings.TrimPrefix(tail, Name+": ")))
}

func cut(s string) string {
	if len(s) <= 200 {
		return s
	}
	n := 200
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
