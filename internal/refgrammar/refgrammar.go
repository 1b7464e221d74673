// Package refgrammar is the grammar of image references (the
// distribution reference grammar that docker and containerd parse, and
// the OCI distribution spec's tags), in one place for the packages that
// check names against it: rewrite parses references with it, mirror
// checks that a chart's name and version can be an OCI repository and
// tag. It uses the standard library only.
package refgrammar

import "regexp"

var (
	// host is the domain of a reference: dot-separated labels of letters,
	// digits and inner hyphens, or a bracketed IPv6 address, with an
	// optional port.
	host = regexp.MustCompile(`^(?:[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?)*|\[[0-9a-fA-F:.]+\])(?::[0-9]+)?$`)
	// component is a repository path component.
	component = regexp.MustCompile(`^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*$`)
	// tag is a tag.
	tag = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$`)
)

// Host reports whether s has the form of a registry host with an
// optional port ("sea.hub:5000", "localhost", "[::1]:5000"); that an IP
// literal is an IPv6 address is left to the caller.
func Host(s string) bool { return host.MatchString(s) }

// Component reports whether s is a repository path component: lower-case
// letters and digits, separated by '.', '_', '__' or dashes.
func Component(s string) bool { return component.MatchString(s) }

// Tag reports whether s is a tag: letters, digits, '_', '.' and '-', not
// starting with '.' or '-', at most 128 characters.
func Tag(s string) bool { return tag.MatchString(s) }
