package manifest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/rehost/rehost/internal/bounded"
	"github.com/rehost/rehost/internal/yamlnode"
	"go.yaml.in/yaml/v3"
)

// The proof of a rewrite (spliceVerified): the rewritten document must
// parse into the tree of the document as read, with only the rewritten
// values changed, or the rewrite is an error. Two ways to prove it:
//
//   - verifySplice parses the whole result again and compares the trees
//     node by node: for every document whose edits touch parts of strings,
//     aliases, added fields, block scalars or tagged values;
//   - verifyTokens, for the common document whose edits all replace
//     one-line scalars whole, parses only the tokens: each scalar token as
//     written and the token written in its place, in the same context (a
//     block, or a flow collection), must each read as one scalar, the old
//     one as the node read from the document (same value, style and tag:
//     the replaced bytes were exactly its token), the new one as the new
//     value, a string. A scalar token is read the same whatever precedes
//     it where a scalar may start, and it ends where the token written in
//     its place ends (a quoted token at its quote; a plain one at the
//     blank, line end, "," "]" or "}" after it, which ended the old token
//     too, since a new plain token never ends in ":"), so the document
//     reads as the same tokens but for that scalar's value and style. It
//     costs a parse of the tokens instead of the document.

// tokensOnly reports whether the edits of a document all replaced
// one-line scalars whole (reps), none tagged or in block style, so that
// verifyTokens proves them.
func tokensOnly(edits []edit, reps []replacement) bool {
	if len(reps) == 0 {
		return false
	}
	for _, r := range reps {
		n := r.node
		if n.Kind != yaml.ScalarNode || n.Style&(yaml.TaggedStyle|yaml.LiteralStyle|yaml.FoldedStyle) != 0 || hasBreak(r.old) || hasBreak(r.new) {
			return false
		}
	}
	var nodes map[*yaml.Node]bool // for many edits
	if len(edits) > 16 {
		nodes = make(map[*yaml.Node]bool, len(reps))
		for _, r := range reps {
			nodes[r.node] = true
		}
	}
	for _, e := range edits {
		if e.insert != nil || e.alias {
			return false
		}
		if nodes != nil {
			if !nodes[e.node] {
				return false
			}
			continue
		}
		found := false
		for _, r := range reps {
			found = found || r.node == e.node
		}
		if !found {
			return false
		}
	}
	return true
}

// hasBreak reports whether s holds a line break, or a character that may
// end a line.
func hasBreak(s string) bool {
	return strings.ContainsAny(s, "\n\r\u0085\u2028\u2029")
}

// verifyTokens proves the replacements of a document token by token (see
// above): the tokens written in a block are read as the items of a block
// sequence ("- OLD", "- NEW"), those in a flow collection as the items of
// a flow sequence ("[OLD, NEW, ...]"); a token that reads the same in
// both (see contextual) is read in a block. A pair of tokens read before
// in the run (p) is not read again.
func verifyTokens(reps []replacement, want map[*yaml.Node]string, ctx *scalarContext, p tokenProver) error {
	var inBlock, inFlow []replacement
	for _, r := range reps {
		isFlow := (contextual(r.old) || contextual(r.new)) && ctx.inFlow(r.node)
		if rd, ok := p.lookup(tokenPair{isFlow, r.old, r.new}); ok {
			if err := rd.check(r, want); err != nil {
				return err
			}
			continue
		}
		if isFlow {
			inFlow = append(inFlow, r)
		} else {
			inBlock = append(inBlock, r)
		}
	}
	if len(inBlock) > 0 {
		if err := p.read(inBlock, false, want); err != nil {
			return err
		}
	}
	if len(inFlow) > 0 {
		return p.read(inFlow, true, want)
	}
	return nil
}

// probe is the text that reads pairs of tokens of one context, each old
// token and its new one in turn: in a block, a sequence of "- TOKEN"
// lines; in a flow collection, "[OLD, NEW, ...]".
func probe(pairs []tokenPair) []byte {
	flow := len(pairs) > 0 && pairs[0].flow
	var b []byte
	if flow {
		b = append(b, '[')
	}
	for i, p := range pairs {
		if flow {
			if i > 0 {
				b = append(b, ", "...)
			}
			b = append(append(append(b, p.old...), ", "...), p.new...)
			continue
		}
		b = append(append(append(append(append(b, "- "...), p.old...), "\n- "...), p.new...), '\n')
	}
	if flow {
		b = append(b, ']')
	}
	return b
}

// contextual reports whether a one-line token may read differently in a
// block and in a flow collection: a plain one holding ",?[]{}" or starting
// with ":" or "?". A quoted token, or a plain one without them, reads the
// same in both, so it is proved in a block without finding out where it is.
func contextual(tok string) bool {
	if tok == "" || tok[0] == '"' || tok[0] == '\'' {
		return false
	}
	return tok[0] == ':' || tok[0] == '?' || strings.ContainsAny(tok, ",?[]{}")
}

// tokenProver reads the tokens verifyTokens proves: a *prover at once, a
// *proofBatch (proofbatch.go) with those of other documents.
type tokenProver interface {
	// lookup returns how a pair of tokens read before reads.
	lookup(tokenPair) (tokenReading, bool)
	// read reads the old and new tokens of reps, in a flow collection
	// when flow is set, and checks them (see (*prover).read).
	read(reps []replacement, flow bool, want map[*yaml.Node]string) error
}

// prover remembers, for a run, how pairs of tokens were read, so that a
// value rewritten in many documents is read once (at most maxReadings
// pairs are kept). A nil prover remembers nothing.
type prover struct {
	mu       sync.Mutex
	readings map[tokenPair]tokenReading
}

// maxReadings bounds the pairs a prover keeps.
const maxReadings = 4096

// tokenPair is a scalar token as written and the token written in its
// place, in a flow collection or in a block.
type tokenPair struct {
	flow     bool
	old, new string
}

// tokenReading is how a tokenPair reads.
type tokenReading struct {
	oldValue, oldTag string
	oldStyle         yaml.Style // its quoting style
	newValue         string
	newString        bool
}

func (p *prover) lookup(k tokenPair) (tokenReading, bool) {
	if p == nil {
		return tokenReading{}, false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	rd, ok := p.readings[k]
	return rd, ok
}

func (p *prover) store(k tokenPair, rd tokenReading) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.readings == nil {
		p.readings = map[tokenPair]tokenReading{}
	}
	if len(p.readings) < maxReadings {
		p.readings[k] = rd
	}
}

const quotedStyles = yaml.DoubleQuotedStyle | yaml.SingleQuotedStyle

// check checks that the old token read as r's node (the bytes replaced
// were exactly its token) and the new one as its new value, a string.
func (rd tokenReading) check(r replacement, want map[*yaml.Node]string) error {
	return rd.checkAgainst(expectedReading(r, want), r.node.Line)
}

// expectedReading is how the tokens of r must read: the old one as r's
// node, the new one as its new value, a string.
func expectedReading(r replacement, want map[*yaml.Node]string) tokenReading {
	return tokenReading{oldValue: r.node.Value, oldTag: r.node.Tag, oldStyle: r.node.Style & quotedStyles, newValue: want[r.node], newString: true}
}

// checkAgainst is check, against the reading expected of the tokens of
// a replacement at line.
func (rd tokenReading) checkAgainst(exp tokenReading, line int) error {
	switch {
	case rd.oldValue != exp.oldValue || rd.oldTag != exp.oldTag || rd.oldStyle != exp.oldStyle:
		return &unsafeEditError{Line: line, Reason: "the bytes replaced are not the value read"}
	case rd.newValue != exp.newValue || !rd.newString:
		return &unsafeEditError{Line: line, Reason: "the value written would not read as the new value"}
	}
	return nil
}

// read reads probe, a sequence of the old and new tokens of reps in turn
// (in a flow collection when flow is set), remembers how each pair reads
// and checks it.
func (p *prover) read(reps []replacement, flow bool, want map[*yaml.Node]string) error {
	pairs := make([]tokenPair, len(reps))
	for i, r := range reps {
		pairs[i] = tokenPair{flow, r.old, r.new}
	}
	items, err := probeItems(probe(pairs), len(reps))
	if err != nil {
		return &unsafeEditError{Line: reps[0].node.Line, Reason: fmt.Sprintf("the values written would not parse (%s)", strings.TrimPrefix(err.Error(), "yaml: "))}
	}
	if items == nil {
		return &unsafeEditError{Line: reps[0].node.Line, Reason: "the values written would not read as one value each"}
	}
	for i, r := range reps {
		rd, ok := readPair(items[2*i], items[2*i+1])
		if !ok {
			return &unsafeEditError{Line: r.node.Line, Reason: "the values written would not read as one value each"}
		}
		p.store(pairs[i], rd)
		if err := rd.check(r, want); err != nil {
			return err
		}
	}
	return nil
}

// probeItems parses probe, a sequence of n pairs of tokens, and returns
// its 2n items: nil when it does not hold 2n items, and the parser's
// error when it does not parse.
func probeItems(probe []byte, n int) ([]*yaml.Node, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(probe, &doc); err != nil {
		return nil, err
	}
	if len(doc.Content) != 1 || doc.Content[0].Kind != yaml.SequenceNode || len(doc.Content[0].Content) != 2*n {
		return nil, nil
	}
	return doc.Content[0].Content, nil
}

// readPair is how a pair of tokens read as the items old and got of a
// probe; false when either is not a scalar.
func readPair(old, got *yaml.Node) (tokenReading, bool) {
	if old.Kind != yaml.ScalarNode || got.Kind != yaml.ScalarNode {
		return tokenReading{}, false
	}
	return tokenReading{oldValue: old.Value, oldTag: old.Tag, oldStyle: old.Style & quotedStyles, newValue: got.Value, newString: got.ShortTag() == "!!str"}, true
}

// verifySplice checks that out, the spliced document, parses into the
// tree of root with the edited nodes holding want and the fields of the
// insertions added.
func verifySplice(out []byte, root *yaml.Node, edits []edit, want map[*yaml.Node]string) error {
	var got yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(yaml11(out)))
	if err := dec.Decode(&got); err != nil {
		line, _, _ := yamlnode.ErrorLine(err)
		return &unsafeEditError{Line: line, Reason: fmt.Sprintf("the result would not parse (%s)", strings.TrimPrefix(err.Error(), "yaml: "))}
	}
	var next yaml.Node
	if err := dec.Decode(&next); !errors.Is(err, io.EOF) {
		return &unsafeEditError{Reason: "the result would hold more than one document"}
	}
	if err := dropInserted(root, &got, edits); err != nil {
		return &unsafeEditError{Reason: err.Error()}
	}
	if path, line, ok := sameTree(root, &got, want, ""); !ok {
		return &unsafeEditError{Line: line, Reason: fmt.Sprintf("it would change %s beyond the rewritten values", bounded.Cut(path, bounded.MaxQuoted))}
	}
	return nil
}

// unsafeEditError is a rewrite that would not give back the document with
// only its rewritten values changed: Line (of the document, 1-based; 0
// when unknown) is where the difference shows.
type unsafeEditError struct {
	Line   int
	Reason string
}

func (e *unsafeEditError) Error() string {
	return "rewriting in place would break the document: " + e.Reason + "; nothing was written (please report this as a bug of rehost)"
}
