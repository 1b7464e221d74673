package rewrite

import (
	"fmt"
	"strings"

	"github.com/rehost/rehost/internal/bounded"
)

// InvalidReferenceError reports a value that is not a valid image reference.
type InvalidReferenceError struct {
	Value  string
	Reason string
	// Hint, when set, says how to fix the input.
	Hint string
}

func (e *InvalidReferenceError) Error() string {
	msg := fmt.Sprintf("invalid image reference %s: %s", bounded.Quote(e.Value), e.Reason)
	if e.Hint != "" {
		msg += " (hint: " + e.Hint + ")"
	}
	return msg
}

// CollisionError reports two different source repositories that map to the
// same target repository, so one would overwrite the other in the registry.
// Its message names no setting of a front end: each adds its own hint
// (the CLI --path-style nest, the KRM function pathStyle: nest).
type CollisionError struct {
	Target string
	// First and Second are the colliding source repositories with the place
	// each was first seen.
	First, Second Occurrence
}

func (e *CollisionError) Error() string {
	return fmt.Sprintf("image collision: %s (%s) and %s (%s) both map to %s; use path style nest or exclude one of them",
		e.First.Source.RepositoryName(), e.First.Location, e.Second.Source.RepositoryName(), e.Second.Location, e.Target)
}

// ConfigError reports an invalid configuration field.
type ConfigError struct {
	Field  string
	Reason string
	// Err, when set, is the typed cause (a *PrefixTooLongError); Reason is
	// its message.
	Err error
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

func (e *ConfigError) Unwrap() error { return e.Err }

// MaxRepositoryPath is the most characters a repository path (below the
// registry host) may have.
const MaxRepositoryPath = 255

// PrefixTooLongError reports a registry prefix that leaves no room for any
// image below it: every target repository path is the prefix, "/" and at
// least one more character in path style strip ("prefix/a"), or a host of
// at least three ("prefix/a.b/a") in path style nest, and holds at most
// MaxRepositoryPath characters.
type PrefixTooLongError struct {
	// Prefix is the registry's path prefix; Length its length in
	// characters and Max the longest prefix Style leaves room for.
	Prefix      string
	Length, Max int
	Style       PathStyle
}

func (e *PrefixTooLongError) Error() string {
	return fmt.Sprintf("the path prefix has %d characters and leaves no room for an image: a repository path holds at most %d characters, so with path style %s the prefix may have at most %d", e.Length, MaxRepositoryPath, e.Style, e.Max)
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
