package docs

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"unicode"
)

// Doc is a Markdown file, read for what the tests check: its fenced code
// blocks, its links and the anchors it defines.
type Doc struct {
	// Path is the file's path relative to the repository root, with
	// slashes ("docs/go.md").
	Path string
	// Blocks are the fenced code blocks, in order.
	Blocks []Block
	// Links are the link targets outside code, in order.
	Links []Link
	// Anchors are the fragment names the file defines: the GitHub slugs of
	// its headings and the ids of its <a id="..."> elements.
	Anchors map[string]bool
}

// Block is a fenced code block.
type Block struct {
	// Info is the fence's first word ("go", "go.mod", "sh").
	Info string
	// Line is the line of the opening fence; the body starts on the next.
	Line int
	// Body is the text between the fences.
	Body string
	// Marker is the text of an HTML comment on the last non-blank line
	// before the fence ("fragment: pkg/x/example_test.go ExampleY"), or "".
	Marker string
}

// Link is a link target ("docs/go.md#charts", "#tests", "https://...").
type Link struct {
	Line   int
	Target string
}

var (
	fenceRe   = regexp.MustCompile("^ {0,3}(`{3,}|~{3,})[ \t]*([^ \t`]*)")
	headingRe = regexp.MustCompile(`^ {0,3}(#{1,6})[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$`)
	commentRe = regexp.MustCompile(`^\s*<!--\s*(.*?)\s*-->\s*$`)
	// An inline link or image: [text](target "title"); the text may hold
	// one level of brackets and span lines.
	inlineLinkRe = regexp.MustCompile(`\[(?:[^\[\]]|\[[^\[\]]*\])*\]\(\s*(?:<([^>\n]*)>|([^)\s]+))(?:\s+(?:"[^"]*"|'[^']*'|\([^)]*\)))?\s*\)`)
	refDefRe     = regexp.MustCompile(`(?m)^ {0,3}\[[^\]\n]+\]:[ \t]*<?([^\s>]+)>?`)
	hrefRe       = regexp.MustCompile(`(?i)<a\s[^>]*\bhref\s*=\s*"([^"]*)"`)
	idRe         = regexp.MustCompile(`(?i)<a\s[^>]*\b(?:id|name)\s*=\s*"([^"]+)"`)
	tagRe        = regexp.MustCompile(`<[^>]*>`)
	schemeRe     = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9+.-]*:`)
	lineAnchorRe = regexp.MustCompile(`^L[0-9]+(?:-L[0-9]+)?$`)
)

// ParseDoc reads the Markdown text data of the file at path (relative to
// the repository root).
func ParseDoc(path string, data []byte) *Doc {
	d := &Doc{Path: path, Anchors: map[string]bool{}}
	lines := strings.Split(string(data), "\n")
	// prose is the text with fenced code blanked, line for line, so that
	// links can be found across line breaks and offsets give lines.
	prose := make([]string, len(lines))
	seen := map[string]int{}
	var open *Block
	var fence, marker string
	var body []string
	for i, line := range lines {
		n := i + 1
		if open != nil {
			if closesFence(line, fence) {
				open.Body = strings.Join(body, "\n")
				if len(body) > 0 {
					open.Body += "\n"
				}
				d.Blocks = append(d.Blocks, *open)
				open, body = nil, nil
			} else {
				body = append(body, line)
			}
			continue
		}
		if m := fenceRe.FindStringSubmatch(line); m != nil && !(m[1][0] == '`' && strings.Contains(line[strings.Index(line, m[1])+len(m[1]):], "`")) {
			open, fence = &Block{Info: m[2], Line: n, Marker: marker}, m[1]
			marker = ""
			continue
		}
		prose[i] = line
		if m := commentRe.FindStringSubmatch(line); m != nil {
			marker = m[1]
		} else if strings.TrimSpace(line) != "" {
			marker = ""
		}
		if m := headingRe.FindStringSubmatch(line); m != nil {
			s := Slug(m[2])
			if k := seen[s]; k > 0 {
				seen[s] = k + 1
				s = fmt.Sprintf("%s-%d", s, k)
			} else {
				seen[s] = 1
			}
			d.Anchors[s] = true
		}
	}
	if open != nil { // an unclosed fence runs to the end of the file
		open.Body = strings.Join(body, "\n")
		d.Blocks = append(d.Blocks, *open)
	}
	text := blankCodeSpans(strings.Join(prose, "\n"))
	for _, m := range idRe.FindAllStringSubmatch(text, -1) {
		d.Anchors[m[1]] = true
	}
	add := func(offset int, target string) {
		d.Links = append(d.Links, Link{Line: 1 + strings.Count(text[:offset], "\n"), Target: target})
	}
	for _, m := range inlineLinkRe.FindAllStringSubmatchIndex(text, -1) {
		if m[2] >= 0 {
			add(m[0], text[m[2]:m[3]])
		} else {
			add(m[0], text[m[4]:m[5]])
		}
	}
	for _, re := range []*regexp.Regexp{refDefRe, hrefRe} {
		for _, m := range re.FindAllStringSubmatchIndex(text, -1) {
			add(m[0], text[m[2]:m[3]])
		}
	}
	return d
}

// closesFence reports whether line closes a block opened by fence: the
// same character, at least as many, nothing after but white space.
func closesFence(line, fence string) bool {
	t := strings.TrimLeft(line, " ")
	if len(line)-len(t) > 3 || !strings.HasPrefix(t, fence) {
		return false
	}
	return strings.Trim(t, fence[:1]+" \t") == ""
}

// blankCodeSpans replaces the content of inline code spans (and their
// backticks) by spaces, keeping line breaks, so that `[x](y)` in code is
// not taken for a link.
func blankCodeSpans(s string) string {
	b := []byte(s)
	for i := 0; i < len(b); {
		if b[i] != '`' {
			i++
			continue
		}
		j := i
		for j < len(b) && b[j] == '`' {
			j++
		}
		run := j - i
		end := -1
		for k := j; k < len(b); {
			if b[k] != '`' {
				k++
				continue
			}
			l := k
			for l < len(b) && b[l] == '`' {
				l++
			}
			if l-k == run {
				end = l
				break
			}
			k = l
		}
		if end < 0 {
			i = j // a lone run of backticks is literal
			continue
		}
		for k := i; k < end; k++ {
			if b[k] != '\n' {
				b[k] = ' '
			}
		}
		i = end
	}
	return string(b)
}

// Slug is the anchor GitHub gives a heading: its text (links and HTML
// tags reduced to their text) in lower case, without punctuation or
// symbols, each space a hyphen. Repeats get "-1", "-2", ... (ParseDoc).
func Slug(heading string) string {
	heading = inlineLinkRe.ReplaceAllStringFunc(heading, func(m string) string {
		return m[1:strings.Index(m, "](")]
	})
	heading = tagRe.ReplaceAllString(heading, "")
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.Is(unicode.M, r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// CheckLinks checks every relative link of docs, whose paths are relative
// to root: its file or directory exists inside root, and its #anchor is
// defined by the target (a Markdown file: a heading or an <a id>; another
// file: a GitHub line anchor such as L10 or L10-L20). byPath holds the
// parsed Markdown files; others are read from disk when linked. It
// returns one message per broken link, naming the file and line.
func CheckLinks(root string, docs []*Doc) []string {
	byPath := map[string]*Doc{}
	for _, d := range docs {
		byPath[d.Path] = d
	}
	var problems []string
	for _, d := range docs {
		for _, l := range d.Links {
			if p := checkLink(root, d, l.Target, byPath); p != "" {
				problems = append(problems, fmt.Sprintf("%s:%d: link %q: %s", d.Path, l.Line, l.Target, p))
			}
		}
	}
	return problems
}

// Resolve returns the repository path (slashes, relative to the root) a
// relative link target of the Markdown file at from points to, and its
// anchor; ok is false for absolute URLs.
func Resolve(from, target string) (path, anchor string, ok bool, err error) {
	if schemeRe.MatchString(target) || strings.HasPrefix(target, "//") {
		return "", "", false, nil
	}
	raw, anchor, _ := strings.Cut(target, "#")
	if i := strings.IndexByte(raw, '?'); i >= 0 {
		raw = raw[:i]
	}
	p, err := url.PathUnescape(raw)
	if err != nil {
		return "", "", true, err
	}
	switch {
	case p == "":
		path = from
	case strings.HasPrefix(p, "/"): // GitHub: relative to the repository root
		path = filepath.ToSlash(filepath.Clean(strings.TrimPrefix(p, "/")))
	default:
		path = filepath.ToSlash(filepath.Join(filepath.Dir(filepath.FromSlash(from)), filepath.FromSlash(p)))
	}
	return path, anchor, true, nil
}

func checkLink(root string, d *Doc, target string, byPath map[string]*Doc) string {
	path, anchor, ok, err := Resolve(d.Path, target)
	switch {
	case !ok:
		return ""
	case err != nil:
		return err.Error()
	case path == ".." || strings.HasPrefix(path, "../"):
		return "points outside the repository"
	}
	info, err := os.Stat(filepath.Join(root, filepath.FromSlash(path)))
	if err != nil {
		return fmt.Sprintf("missing target: %s does not exist", path)
	}
	if anchor == "" {
		return ""
	}
	if info.IsDir() {
		return fmt.Sprintf("%s is a directory: it has no anchor #%s", path, anchor)
	}
	if !strings.HasSuffix(path, ".md") {
		if lineAnchorRe.MatchString(anchor) {
			return ""
		}
		return fmt.Sprintf("anchor #%s in %s, which is not Markdown (only line anchors such as #L10 work there)", anchor, path)
	}
	t := byPath[path]
	if t == nil {
		data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(path)))
		if err != nil {
			return err.Error()
		}
		t = ParseDoc(path, data)
		byPath[path] = t
	}
	if !t.Anchors[anchor] {
		return fmt.Sprintf("missing anchor: %s has no heading or <a id> with slug #%s", path, anchor)
	}
	return ""
}
