// Package policy writes admission policies that give the containers of a
// Pod the images rehost rewrite gives them: a Kubernetes
// MutatingAdmissionPolicy (CEL) or a Kyverno ClusterPolicy (JMESPath), and
// optionally the matching validating policy that reports, or rejects, Pods
// whose images the mutation left outside the target registry.
//
// Policies are text generated from a [rewrite.Mapper]: the reference
// grammar of [rewrite.ParseRef], Docker Hub's normalisation, the exclusions
// and the target are restated in the policy language, with the mapping's
// registry, prefix and exclusions embedded as literals. The test module
// test/policy runs the generated MutatingAdmissionPolicy through the
// Kubernetes API server's admission plugin and holds its result equal to
// the mapper's; test/e2e does the same for the Kyverno policy with the
// Kyverno CLI.
//
// Like package rewrite, it is pure: no I/O but the writer it is given.
package policy
