package policy

import (
	"fmt"

	"go.yaml.in/yaml/v3"
)

// key is a mapping key with an optional comment written above it.
type key struct {
	name, comment string
}

// node builds a YAML node from a string (a plain or quoted scalar, chosen
// by the encoder), a *yaml.Node, or []string (a flow sequence).
func node(v any) *yaml.Node {
	switch v := v.(type) {
	case *yaml.Node:
		return v
	case string:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: v}
	case bool:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: fmt.Sprint(v)}
	case []string:
		n := &yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle}
		for _, s := range v {
			n.Content = append(n.Content, node(s))
		}
		return n
	}
	panic(fmt.Sprintf("policy: node(%T)", v))
}

// mapping builds a mapping from alternating keys (string or key) and
// values (see node). A nil value leaves the pair out.
func mapping(kv ...any) *yaml.Node {
	n := &yaml.Node{Kind: yaml.MappingNode}
	for i := 0; i < len(kv); i += 2 {
		if kv[i+1] == nil {
			continue
		}
		if v, ok := kv[i+1].(*yaml.Node); ok && v == nil {
			continue
		}
		k := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str"}
		switch kk := kv[i].(type) {
		case string:
			k.Value = kk
		case key:
			k.Value, k.HeadComment = kk.name, kk.comment
		}
		n.Content = append(n.Content, k, node(kv[i+1]))
	}
	return n
}

// seq builds a block sequence.
func seq(items ...*yaml.Node) *yaml.Node {
	return &yaml.Node{Kind: yaml.SequenceNode, Content: items}
}

// literal is a string written as a literal block scalar: CEL and JMESPath
// expressions, kept readable.
func literal(s string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s, Style: yaml.LiteralStyle}
}
