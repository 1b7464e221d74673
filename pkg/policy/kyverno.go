package policy

import (
	"fmt"
	"strings"

	"github.com/rehost/rehost/pkg/rewrite"
	"go.yaml.in/yaml/v3"
)

// The Kyverno ClusterPolicy restates the mapping in JMESPath with
// Kyverno's functions regex_match, regex_replace_all, to_lower and
// replace_all (RE2, as CEL's): a foreach over each container list computes,
// per container, the parts of the reference in context variables, skips
// the containers the mapper leaves as written (preconditions), and sets the
// image with a JSON patch by elementIndex. That needs Kyverno 1.6 (which
// fixed variables and preconditions in foreach and added JSON patches and
// elementIndex there); sealer's Kyverno 1.5 is older. Nothing newer is
// used: no operations match field, no any/all match blocks, no CEL.
const (
	// kySplit splits a reference into registry host (group 1, without
	// its "/"), repository path (2) and the tag and digest as written
	// (3). It matches any string ((?s), every group may be empty), so the
	// context never fails; rhvalid says whether the parts mean anything.
	kySplit             = `(?s)^(?:([^/@]*[.:][^/@]*|localhost)/)?([^:@]*)(.*)$`
	commentKyvernoPatch = `A JSON patch by index (elementIndex, Kyverno 1.6 onwards) keeps the order of
the containers, which a strategic merge patch does not.`
	commentKyvernoMatch   = `Pods only; the webhook sends Kyverno creations and updates.`
	commentKyvernoForeach = `Per container: the parts of the reference (as rehost's mapper parses it),
then the image rehost rewrite gives it. Containers without an image, or
whose image is invalid, already in the target registry, excluded, or whose
target would be too long are skipped (left as written).`
)

// kyContext is the foreach context that parses element.image.
func (g generator) kyContext() *yaml.Node {
	v := func(name, expr string) *yaml.Node {
		checkBraces(expr)
		return mapping("name", name, "variable", mapping("jmesPath", expr))
	}
	part := func(n int) string {
		return fmt.Sprintf("regex_replace_all('%s', rhimage, '${%d}')", kySplit, n)
	}
	fixed := 0
	if p := g.m.Prefix(); p != "" {
		fixed = len(p) + 1
	}
	targetPath := "rhrepo"
	if g.m.Style() == rewrite.PathStyleNest {
		targetPath = "join('/', [rhnest, rhrepo])"
	}
	kept := []string{fmt.Sprintf("rhreg == '%s'", g.m.Registry())}
	hosts, repos := g.m.Exclusions()
	for _, h := range hosts {
		kept = append(kept, fmt.Sprintf("rhreg == '%s'", h))
	}
	if len(repos) > 0 {
		var alts []string
		for _, r := range repos {
			alts = append(alts, reQuote(r))
		}
		kept = append(kept, fmt.Sprintf("regex_match('^(?:%s)(?:/|$)', join('/', [rhreg, rhrepo]))", strings.Join(alts, "|")))
	}
	vars := []*yaml.Node{
		// A container without an image (null) is skipped, as the CEL
		// form skips it: rhimage is "" and rhhas false.
		v("rhhas", "element.image != `null`"),
		v("rhimage", "not_null(element.image, '')"),
		v("rhhost", part(1)),
		v("rhpath", part(2)),
		v("rhsuffix", part(3)),
		v("rhvalid", fmt.Sprintf("regex_match('%s', rhimage) && regex_match('(?s)^.{1,255}$', rhpath)", reValid)),
		v("rhreg", "regex_replace_all('^(?:index[.]docker[.]io)?$', to_lower(rhhost), 'docker.io')"),
		v("rhrepo", "regex_replace_all('^[^|]*[|]', regex_replace_all('^(?:|docker[.]io|index[.]docker[.]io)[|]([^/]*)$', join('|', [rhhost, rhpath]), 'library/${1}'), '')"),
	}
	if g.m.Style() == rewrite.PathStyleNest {
		vars = append(vars, v("rhnest", kyNested))
	}
	return seq(append(vars,
		v("rhkept", strings.Join(kept, " || ")),
		v("rhtoolong", fmt.Sprintf("regex_match('^.{%d}', %s)", 256-fixed, targetPath)),
	)...)
}

// kyNested is rhreg as the path component path style nest gives it, as
// rewrite's pathSafeHost writes it: the "::" that starts or ends an IPv6
// address gets its zero, the ":" of an IPv6 address's port becomes "-",
// the other colons "_", and the brackets go.
const kyNested = `regex_replace_all('[[]|[]]', replace_all(regex_replace_all('[]]:', regex_replace_all('::[]]', regex_replace_all('^[[]::', rhreg, '[0::'), '::0]'), ']-'), ':', '_'), '')`

// reQuote writes a repository name as an RE2 expression matching it
// literally: its only special characters are '.' and, in IPv6 hosts, '['
// and ']'.
func reQuote(s string) string {
	return strings.NewReplacer(".", "[.]", "[", "[[]", "]", "[]]").Replace(s)
}

// checkBraces guards Kyverno's variable syntax: an expression must not
// hold "{{" or "}}", which Kyverno would read as a variable.
func checkBraces(s string) {
	if strings.Contains(s, "{{") || strings.Contains(s, "}}") {
		panic(fmt.Sprintf("policy: JMESPath %q holds {{ or }}", s))
	}
}

func (g generator) kyMatch() (match, exclude *yaml.Node) {
	var in, notIn []string
	var exprs []*yaml.Node
	for _, r := range g.sel {
		switch {
		case r.Key == "kubernetes.io/metadata.name" && r.Operator == "In" && in == nil:
			in = r.Values
		case r.Key == "kubernetes.io/metadata.name" && r.Operator == "NotIn":
			notIn = append(notIn, r.Values...)
		default:
			var values any
			if len(r.Values) > 0 {
				values = r.Values
			}
			exprs = append(exprs, mapping("key", r.Key, "operator", r.Operator, "values", values))
		}
	}
	var nsSel, nsIn any
	if len(exprs) > 0 {
		nsSel = mapping("matchExpressions", seq(exprs...))
	}
	if in != nil {
		nsIn = in
	}
	match = mapping("resources", mapping("kinds", []string{"Pod"}, "namespaces", nsIn, "namespaceSelector", nsSel))
	if len(notIn) > 0 {
		exclude = mapping("resources", mapping("namespaces", notIn))
	}
	return match, exclude
}

// kyPreconditions select Pod creations (as the admission policy does, see
// commentRules; the ephemeralcontainers subresource is left to render time
// and the admission policy) and skip mirror Pods and Pods without the list.
func kyPreconditions(list string) *yaml.Node {
	return mapping("all", seq(
		mapping("key", "{{ request.operation }}", "operator", "Equals", "value", "CREATE"),
		mapping("key", `{{ request.object.metadata.annotations."kubernetes.io/config.mirror" || '' }}`, "operator", "Equals", "value", ""),
		mapping("key", fmt.Sprintf("{{ length(request.object.spec.%s || `[]`) }}", list), "operator", "NotEquals", "value", &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: "0"}),
	))
}

func equals(key string, value bool) *yaml.Node {
	return mapping("key", key, "operator", "Equals", "value", value)
}

func (g generator) kyverno() []*yaml.Node {
	match, exclude := g.kyMatch()
	image := g.m.Root() + "/{{ rhrepo }}{{ rhsuffix }}"
	if g.m.Style() == rewrite.PathStyleNest {
		image = g.m.Root() + "/{{ rhnest }}/{{ rhrepo }}{{ rhsuffix }}"
	}
	var rules []*yaml.Node
	for _, list := range containerLists {
		rules = append(rules, mapping(
			"name", g.o.Name+"-"+kebab(list),
			key{"match", commentKyvernoMatch}, match,
			key{"exclude", selectorComment(g.o.NamespaceSelector)}, exclude,
			key{"preconditions", commentMirror}, kyPreconditions(list),
			"mutate", mapping("foreach", seq(mapping(
				key{"list", commentKyvernoForeach}, "request.object.spec."+list,
				"context", g.kyContext(),
				"preconditions", mapping("all", seq(
					equals("{{ rhvalid }}", true),
					equals("{{ rhkept }}", false),
					equals("{{ rhtoolong }}", false),
				)),
				key{"patchesJson6902", commentKyvernoPatch}, literal(fmt.Sprintf("- op: replace\n  path: /spec/%s/{{ elementIndex }}/image\n  value: \"%s\"", list, image)),
			))),
		))
	}
	if g.o.Validate {
		for _, list := range containerLists {
			rules = append(rules, mapping(
				"name", g.o.Name+"-check-"+kebab(list),
				"match", match,
				"exclude", exclude,
				"preconditions", kyPreconditions(list),
				"validate", mapping(
					"message", fmt.Sprintf("images outside %s that the rehost policy did not rewrite", g.m.Root()),
					"foreach", seq(mapping(
						"list", "request.object.spec."+list,
						"context", g.kyContext(),
						"preconditions", mapping("all", seq(equals("{{ rhhas }}", true))),
						"deny", mapping("conditions", mapping("any", seq(
							equals("{{ rhvalid }}", false),
							equals("{{ rhkept }}", false),
						))),
					)),
				),
			))
		}
	}
	action := "audit"
	actionComment := "audit: the check rules report Pods with images outside the target registry\n(policy reports); rehost policy --deny writes enforce, which rejects them."
	if g.o.Deny {
		action = "enforce"
	}
	var vfa any
	if g.o.Validate {
		vfa = action
	}
	policy := mapping(
		"apiVersion", "kyverno.io/v1",
		"kind", "ClusterPolicy",
		"metadata", mapping("name", g.o.Name),
		"spec", mapping(
			key{"background", "Admission only: existing Pods keep their images until they are recreated."}, false,
			key{"validationFailureAction", actionComment}, vfa,
			key{"rules", "Kyverno's failure policy stays its default, Fail: a Pod Kyverno cannot\nmap is rejected, not let through with a public image."}, seq(rules...),
		),
	)
	policy.HeadComment = g.header
	return []*yaml.Node{policy}
}

// kebab turns "initContainers" into "init-containers".
func kebab(s string) string {
	var b strings.Builder
	for _, r := range s {
		if 'A' <= r && r <= 'Z' {
			b.WriteByte('-')
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return b.String()
}
