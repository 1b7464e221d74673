// Package parity holds rehost's own image reference parser
// (rewrite.ParseRef) equal to the one it replaced: go-containerregistry's
// pkg/name with the distribution-grammar checks rehost made on top. It is a
// module of its own so that the core never requires go-containerregistry,
// not even in tests.
package parity
