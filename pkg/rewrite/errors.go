package rewrite

import (
	"fmt"
	"strings"
)

// InvalidReferenceError reports a value that is not a valid image reference.
type InvalidReferenceError struct {
	Value  string
	Reason string
	// Hint, when set, says how to fix the input.
	Hint string
}

func (e *InvalidReferenceError) Error() string {
	msg := fmt.Sprintf("invalid image reference %q: %s", e.Value, e.Reason)
	if e.Hint != "" {
		msg += " (hint: " + e.Hint + ")"
	}
	return msg
}

// CollisionError reports two different source repositories that map to the
// same target repository, so one would overwrite the other in the registry.
type CollisionError struct {
	Target string
	// First and Second are the colliding source repositories with the place
	// each was first seen.
	First, Second Occurrence
}

func (e *CollisionError) Error() string {
	return fmt.Sprintf("image collision: %s (%s) and %s (%s) both map to %s; use path style nest (--path-style nest, pathStyle: nest) or exclude one of them",
		e.First.Source.RepositoryName(), e.First.Location, e.Second.Source.RepositoryName(), e.Second.Location, e.Target)
}

// ConfigError reports an invalid configuration field.
type ConfigError struct {
	Field  string
	Reason string
	// Line is the line of the field in the config file, when known
	// (LoadConfig sets it for the entries of sourceMirrors).
	Line int
}

func (e *ConfigError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("config: line %d: %s: %s", e.Line, e.Field, e.Reason)
	}
	return fmt.Sprintf("config: %s: %s", e.Field, e.Reason)
}

func joinNonEmpty(sep string, parts ...string) string {
	var out []string
	for _, p := range parts {
		if p != "" {
			out = append(out, p)
		}
	}
	return strings.Join(out, sep)
}
