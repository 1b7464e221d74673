// Package rewrite maps container image references to a private registry.
//
// It is the pure, I/O-free half of rehost: given a [Config] it builds a
// [Mapper] that parses references as container runtimes do ([ParseRef]),
// normalises them, applies exclusions and computes the target reference in
// the private registry. An [ImageSet] collects every mapped image with the
// places it occurs and detects collisions (two source repositories that would
// land in the same target repository).
//
// Finding image fields in Kubernetes objects is the job of package manifest;
// this package never sees YAML.
package rewrite
