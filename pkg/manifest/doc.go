// Package manifest finds and rewrites container images in streams of
// Kubernetes manifests, YAML or JSON, keeping every other byte as it was.
//
// A [Rewriter] splits a stream into documents on their "---" and "..."
// markers, skips cheaply the documents that cannot hold an image reference
// (no image word, configured key, composite scheme or registry-host token,
// or a CustomResourceDefinition), parses the others with
// yaml.v3, finds their image fields with a [Finder], maps each value with a
// [rewrite.Mapper], and splices the new values into the original bytes in
// their original quoting style. Documents are processed on all cores and
// written in input order; memory holds a few documents at a time.
//
// The same finder and mapper serve pipelines that parse for themselves
// through [Rewriter.RewriteNode], which edits a yaml.Node in place; package
// krmfn wraps it as a kio.Filter for kyaml pipelines. This package needs no
// kyaml: its YAML nodes are go.yaml.in/yaml/v3's, the type kyaml's
// yaml.Node aliases.
package manifest
