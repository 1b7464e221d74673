// Package helm39 proves that rehost's core plugs into Helm 3.9.4, the Helm
// of sealer, without rehost's Helm 3.22 module (pkg/helm): the core's
// post-renderer satisfies Helm 3.9's postrender.PostRenderer and rewrites
// a release in its install action, and the output of Helm 3.9's template
// engine becomes a rendered.Chart that app.List lists, as a sealer adapter
// does. It is a module of its own, so that this old Helm and its
// Kubernetes 0.24 libraries are linked here only.
package helm39
