// Package valuetree handles Helm values trees (nested
// map[string]interface{}, []interface{} and scalars, with chartutil.Values
// where Helm put them) and the key paths into them: strings for map keys,
// ints for list items.
package valuetree

import (
	"fmt"
	"strconv"
	"strings"
)

// CopyMap copies a values tree: maps and lists are copied, other values
// shared (they are immutable scalars).
func CopyMap(m map[string]interface{}) map[string]interface{} {
	if m == nil {
		return nil
	}
	out := make(map[string]interface{}, len(m))
	for k, v := range m {
		out[k] = Copy(v)
	}
	return out
}

// Copy copies a value of a values tree (see CopyMap).
func Copy(v interface{}) interface{} {
	switch v := v.(type) {
	case map[string]interface{}:
		return CopyMap(v)
	case []interface{}:
		out := make([]interface{}, len(v))
		for i, e := range v {
			out[i] = Copy(e)
		}
		return out
	default:
		if m, ok := AsMap(v); ok {
			return CopyMap(m)
		}
		return v
	}
}

// AsMap returns v as a values map: Helm's values hold both
// map[string]interface{} and chartutil.Values.
func AsMap(v interface{}) (map[string]interface{}, bool) {
	switch v := v.(type) {
	case map[string]interface{}:
		return v, true
	case interface{ AsMap() map[string]interface{} }:
		return v.AsMap(), true
	}
	return nil, false
}

// Merge merges src over dst as Helm merges -f files (maps merged key by
// key, anything else replaced) and returns dst.
func Merge(dst, src map[string]interface{}) map[string]interface{} {
	if dst == nil {
		dst = map[string]interface{}{}
	}
	for k, v := range src {
		if vm, ok := AsMap(v); ok {
			if dm, ok := AsMap(dst[k]); ok {
				dst[k] = Merge(dm, vm)
				continue
			}
		}
		dst[k] = Copy(v)
	}
	return dst
}

// Lookup returns the value at path in the values tree.
func Lookup(v interface{}, path []interface{}) (interface{}, bool) {
	for _, p := range path {
		switch p := p.(type) {
		case string:
			m, ok := AsMap(v)
			if !ok {
				return nil, false
			}
			if v, ok = m[p]; !ok {
				return nil, false
			}
		case int:
			l, ok := v.([]interface{})
			if !ok || p >= len(l) {
				return nil, false
			}
			v = l[p]
		}
	}
	return v, true
}

// SamePath reports whether two key paths are equal.
func SamePath(a, b []interface{}) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// PathString formats a key path as "a.b[0].c"; keys holding dots or
// brackets are quoted.
func PathString(p []interface{}) string {
	var b strings.Builder
	for i, s := range p {
		switch s := s.(type) {
		case int:
			fmt.Fprintf(&b, "[%d]", s)
		case string:
			if i > 0 {
				b.WriteByte('.')
			}
			if strings.ContainsAny(s, ".[]\"") || s == "" {
				b.WriteString(strconv.Quote(s))
			} else {
				b.WriteString(s)
			}
		}
	}
	return b.String()
}
