package manifest

import (
	"fmt"
	"io"
	"strings"
)

// Part is a stream cut out of a larger file, for RewriteParts: the
// documents rendered from one template file, say.
type Part struct {
	// Name and Line are RewriteAt's: the part's first byte is at line
	// Line of Name, and lines in errors and reports count from there.
	Name string
	Line int
	// Head is written before the part as it is, and never read for
	// images: Helm's "---" and "# Source:" lines, which are not the
	// template's.
	Head string
	// Text is the part's stream.
	Text string
}

// RewriteParts rewrites each part with RewriteAt after writing its Head
// (w nil: only collect the images), and stops at the first part with
// errors, returning them; it writes the same bytes and returns the same
// errors as those calls would. The parts run through one pipeline, so a
// part costs what its documents cost: thousands of one-document parts cost
// what one stream of as many documents does.
func (rw *Rewriter) RewriteParts(w io.Writer, parts []Part) error {
	if w != nil && rw.listOnly {
		if len(parts) == 0 {
			return nil
		}
		if _, err := io.WriteString(w, parts[0].Head); err != nil {
			return err
		}
		return fmt.Errorf("%s: %w", parts[0].Name, ErrListOnly)
	}
	// A ConfigMap key may be passed as an image by a document after it,
	// in any part (envimages.go): scan the parts for such references first.
	for _, p := range parts {
		if strings.Contains(p.Text, "$(") {
			rw.envRefs.add(prescanEnvRefs([]byte(p.Text)))
		}
	}
	i := 0
	var sp *splitter // the splitter of parts[i], nil before it starts
	return rw.pipeline(w, func() ([]piece, error) {
		var ps []piece
		size := 0
		for len(ps) < batchDocs && size < batchBytes {
			if i == len(parts) {
				return ps, io.EOF
			}
			p := &parts[i]
			first := sp == nil
			if first {
				sp = splitterOf([]byte(p.Text), p.Line)
			}
			// One batch of the part, cut as nextBatch cuts a stream: the
			// run may stop after it.
			start, n, done := len(ps), 0, false
			for n < batchBytes && len(ps)-start < batchDocs {
				d, err := sp.next()
				if err != nil { // io.EOF: a part in memory has no read error
					done = true
					break
				}
				ps = append(ps, piece{doc: d, name: p.Name})
				n += len(d.data)
			}
			if first && len(ps) == start {
				ps = append(ps, piece{name: p.Name, empty: true})
			}
			if first {
				ps[start].first, ps[start].head = true, p.Head
			}
			if len(ps) > start {
				ps[len(ps)-1].last = true
			}
			size += n
			if done {
				i++
				sp = nil
			}
		}
		return ps, nil
	})
}
