// Package helm4compat proves that rehost's Go post-renderer plugs into
// Helm 4 as well as Helm 3, and that rendered.FromTemplates, given Helm
// 4's install order, orders a template engine's output as Helm 4 does. It
// is a module of its own, so that this proof links Helm 4 here only, not
// into every program that imports pkg/helm.
package helm4compat
