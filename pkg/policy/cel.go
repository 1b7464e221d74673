package policy

import (
	"fmt"
	"sort"
	"strings"

	"github.com/rehost/rehost/pkg/rewrite"
)

// celMapping restates a rewrite.Mapper in CEL, for the Kubernetes
// admission policies.
//
// The CEL environment of admission policies has no let-binding
// (cel.bind is not among the libraries the API server enables), so a value
// used several times is bound by mapping a one-element list:
// [{'h': …, 'r': …}].map(p, …)[0] evaluates the parts once and names them p.
// Only functions available at the CEL compatibility version of Kubernetes
// 1.32 (the first with MutatingAdmissionPolicy, whose stored expressions
// compile at compatibility version 1.31) are used: the standard library
// (matches, startsWith, contains, size, in), the Kubernetes regex library
// (find, since 1.27) and the strings extension at version 2 (lowerAscii,
// replace, substring, indexOf, join, since 1.29).
type celMapping struct {
	m    *rewrite.Mapper
	pins map[string]string
	// pinVars name the variables that hold the pins (pinVariables).
	pinVars []string
}

// quote is a CEL string literal. Every literal the generator writes is a
// registry, repository, reference or RE2 expression without quotes or
// backslashes; anything else is a bug that must not reach a policy.
func quote(s string) string {
	if strings.ContainsAny(s, "'\\\n") {
		panic(fmt.Sprintf("policy: literal %q needs escaping", s))
	}
	return "'" + s + "'"
}

// parts binds, for the image expression img, p.h (the registry host as
// written, with its "/", or "") and p.r (the repository as written, host
// included), and evaluates body with them when img is a valid reference,
// invalid otherwise.
func (c celMapping) parts(img, body, invalid string) string {
	valid := fmt.Sprintf("(p.h == '' || (p.h.startsWith('[') ? p.h.matches(%s) : p.h.matches(%s))) &&\n  %s.substring(size(p.h)).matches(%s) &&\n  size(p.r) - size(p.h) <= 255",
		quote(reHost6Slash), quote(reHostSlash), img, quote(reRest))
	return fmt.Sprintf("[{'h': %s.find(%s), 'r': %s.find(%s)}].map(p,\n (%s) ?\n %s\n : %s)[0]",
		img, quote(reHostPart), img, quote(reRepoPart), valid, c.normalized(img, body), invalid)
}

// normalized binds q.reg (the registry, normalised as ParseRef does, with a
// "/"), q.repo (the repository path, "library/" added for Docker Hub's
// official images) and q.sfx (":tag", "@digest", both or nothing, as
// written) inside parts, and evaluates body with them.
func (c celMapping) normalized(img, body string) string {
	reg := "p.h == '' ? 'docker.io/' : (p.h.lowerAscii() == 'index.docker.io/' ? 'docker.io/' : p.h.lowerAscii())"
	path := "p.r.substring(size(p.h))"
	repo := fmt.Sprintf("(p.h in ['', 'docker.io/', 'index.docker.io/'] && !%s.contains('/')) ? 'library/' + %s : %s", path, path, path)
	return fmt.Sprintf("[{'reg': %s,\n   'repo': %s,\n   'sfx': %s.substring(size(p.r))}].map(q,\n %s)[0]", reg, repo, img, body)
}

// kept is true when the mapper leaves the image as written: it is in the
// target registry or excluded.
func (c celMapping) kept() string {
	terms := []string{"q.reg == " + quote(c.m.Registry()+"/")}
	hosts, repos := c.m.Exclusions()
	for _, h := range hosts {
		terms = append(terms, "q.reg == "+quote(h+"/"))
	}
	for _, r := range repos {
		terms = append(terms, fmt.Sprintf("q.reg + q.repo == %s || (q.reg + q.repo).startsWith(%s)", quote(r), quote(r+"/")))
	}
	return strings.Join(terms, " ||\n   ")
}

// tooLong is true when the target repository path would exceed 255
// characters, which the mapper reports as an error: the policy leaves such
// an image as written (and the validating policy reports it).
func (c celMapping) tooLong() string {
	fixed := 0
	if p := c.m.Prefix(); p != "" {
		fixed = len(p) + 1
	}
	if c.m.Style() == rewrite.PathStyleNest {
		return fmt.Sprintf("size(n) + size(q.repo) > %d", 255-fixed)
	}
	return fmt.Sprintf("size(q.repo) > %d", 255-fixed)
}

// target is the rewritten reference.
func (c celMapping) target() string {
	root := quote(c.m.Root() + "/")
	t := root + " + q.repo + q.sfx"
	if c.m.Style() == rewrite.PathStyleNest {
		t = root + " + n + q.repo + q.sfx"
	}
	if len(c.pins) == 0 {
		return t
	}
	// The pinned value (variables.pins*, see pinVariables): a digest to
	// append, a whole target, or '' for an image without a pin.
	found := "''"
	for i := len(c.pinVars) - 1; i >= 0; i-- {
		v := "variables." + c.pinVars[i]
		found = fmt.Sprintf("(k in %s ? %s[k] : %s)", v, v, found)
	}
	return fmt.Sprintf("[q.reg + q.repo + (q.sfx == '' ? ':latest' : q.sfx)].map(k, [%s].map(v,\n   v == '' ? %s : (v.contains('/') ? v : %s + '@' + v))[0])[0]", found, t, t)
}

// maxPinExpression bounds the characters of one variable of pins: the CEL
// parser the API server uses refuses expressions of more than 100,000
// code points (cel-go's default, which Kubernetes keeps).
const maxPinExpression = 90_000

// pinVariables writes the pins as CEL maps, source -> pinned value, each
// at most maxPinExpression characters: the policy defines them once, in
// spec.variables, and every mutation reads them (variables.pins0, ...).
func pinVariables(pins map[string]string) (names, exprs []string) {
	keys := make([]string, 0, len(pins))
	for k := range pins {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	flush := func() {
		if b.Len() == 0 {
			return
		}
		b.WriteString("}")
		names = append(names, fmt.Sprintf("pins%d", len(names)))
		exprs = append(exprs, b.String())
		b.Reset()
	}
	for _, k := range keys {
		entry := quote(k) + ": " + quote(pins[k])
		if b.Len() > 0 && b.Len()+len(",\n")+len(entry)+len("}") > maxPinExpression {
			flush()
		}
		if b.Len() == 0 {
			b.WriteString("{")
		} else {
			b.WriteString(",\n")
		}
		b.WriteString(entry)
	}
	flush()
	return names, exprs
}

// nestedReg is q.reg (the registry with its "/") as the path component
// path style nest gives it, as rewrite's pathSafeHost writes it: a port's
// ":" becomes "_"; an IPv6 address loses its brackets, a "::" that starts
// or ends it gets its zero, its colons become "_" and its port's ":" a "-".
const nestedReg = `(q.reg.startsWith('[') ?
    [q.reg.substring(1, q.reg.indexOf(']'))].map(a, ((a.startsWith('::') ? '0' : '') + a + (a.endsWith('::') ? '0' : '')).replace(':', '_'))[0] +
      q.reg.substring(q.reg.indexOf(']') + 1).replace(':', '-') :
    q.reg.replace(':', '_'))`

// image is the CEL expression giving the image the mapper gives img: the
// target, or img itself when it is invalid, in the target registry,
// excluded, or would get a target path over 255 characters.
func (c celMapping) image(img string) string {
	body := fmt.Sprintf("(%s ||\n   %s) ? %s : %s", c.kept(), c.tooLong(), img, c.target())
	if c.m.Style() == rewrite.PathStyleNest {
		// n: the registry as a path component, with its "/".
		body = fmt.Sprintf("[%s].map(n,\n %s)[0]", nestedReg, body)
	}
	return c.parts(img, body, img)
}

// covered is the CEL expression that is true when img needs no rewriting:
// a valid reference in the target registry or excluded.
func (c celMapping) covered(img string) string {
	return c.parts(img, c.kept(), "false")
}
