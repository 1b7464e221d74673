// Package policy holds the admission policies that rehost policy writes
// to rehost's mapper: the generated MutatingAdmissionPolicy and
// ValidatingAdmissionPolicy run in-process through the Kubernetes API
// server's own admission plugins (k8s.io/apiserver's policy/mutating and
// policy/validating, with the Pod schema client-go embeds), on Pods built
// from every image reference of the test corpora, hand-picked hard cases
// and fuzzed references; each container must get the image
// rewrite.Mapper gives it, and a second pass must change nothing.
//
// It is a module of its own so that the core gains nothing from it.
package policy
