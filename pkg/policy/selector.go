package policy

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/rehost/rehost/internal/bounded"
)

// DefaultNamespaceSelector leaves out kube-system: its Pods are the
// cluster's own (static control-plane Pods, CoreDNS, kube-proxy, the CNI),
// which sealer deploys already rewritten; a net there can only get in the
// way of repairing the control plane. The kubernetes.io/metadata.name
// label is set on every namespace from Kubernetes 1.21 on.
const DefaultNamespaceSelector = "kubernetes.io/metadata.name notin (kube-system)"

// Requirement is one term of a label selector, as in a Kubernetes
// LabelSelector's matchExpressions.
type Requirement struct {
	Key      string
	Operator string // In, NotIn, Exists, DoesNotExist
	Values   []string
}

var (
	labelKey   = regexp.MustCompile(`^(?:[a-z0-9](?:[-a-z0-9]*[a-z0-9])?(?:\.[a-z0-9](?:[-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9](?:[-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$`)
	labelValue = regexp.MustCompile(`^(?:[A-Za-z0-9](?:[-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?$`)
	setTerm    = regexp.MustCompile(`^(\S+)\s+(in|notin)\s*\(([^()]*)\)$`)
)

// ParseSelector parses a label selector in kubectl's syntax: terms joined
// by commas, each "key=value", "key==value", "key!=value", "key in (a,b)",
// "key notin (a,b)", "key" or "!key". The empty string selects everything.
func ParseSelector(s string) ([]Requirement, error) {
	var out []Requirement
	for _, term := range splitTerms(s) {
		term = strings.TrimSpace(term)
		if term == "" {
			if strings.TrimSpace(s) == "" {
				continue
			}
			return nil, fmt.Errorf("namespace selector %s: empty term", bounded.Quote(s))
		}
		r, err := parseTerm(term)
		if err != nil {
			return nil, fmt.Errorf("namespace selector %s: %v", bounded.Quote(s), err)
		}
		out = append(out, r)
	}
	return out, nil
}

// splitTerms splits at the commas outside parentheses.
func splitTerms(s string) []string {
	var out []string
	depth, start := 0, 0
	for i, r := range s {
		switch r {
		case '(':
			depth++
		case ')':
			depth--
		case ',':
			if depth == 0 {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
	}
	return append(out, s[start:])
}

func parseTerm(t string) (Requirement, error) {
	var r Requirement
	switch {
	case setTerm.MatchString(t):
		m := setTerm.FindStringSubmatch(t)
		r = Requirement{Key: m[1], Operator: map[string]string{"in": "In", "notin": "NotIn"}[m[2]]}
		for _, v := range strings.Split(m[3], ",") {
			r.Values = append(r.Values, strings.TrimSpace(v))
		}
	case strings.Contains(t, "!="):
		k, v, _ := strings.Cut(t, "!=")
		r = Requirement{Key: strings.TrimSpace(k), Operator: "NotIn", Values: []string{strings.TrimSpace(v)}}
	case strings.Contains(t, "="):
		k, v, _ := strings.Cut(t, "=")
		r = Requirement{Key: strings.TrimSpace(k), Operator: "In", Values: []string{strings.TrimSpace(strings.TrimPrefix(v, "="))}}
	case strings.HasPrefix(t, "!"):
		r = Requirement{Key: strings.TrimSpace(t[1:]), Operator: "DoesNotExist"}
	default:
		r = Requirement{Key: t, Operator: "Exists"}
	}
	if !labelKey.MatchString(r.Key) || len(r.Key) > 253+1+63 {
		return r, fmt.Errorf("%s: invalid label key %s", bounded.Quote(t), bounded.Quote(r.Key))
	}
	for _, v := range r.Values {
		if !labelValue.MatchString(v) {
			return r, fmt.Errorf("%s: invalid label value %s", bounded.Quote(t), bounded.Quote(v))
		}
	}
	return r, nil
}
