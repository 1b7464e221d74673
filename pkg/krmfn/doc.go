// Package krmfn runs rehost as a KRM function: the transformer that
// kustomize (transformers: with a config.kubernetes.io/function
// annotation), kpt and "kustomize fn run" invoke with a ResourceList on
// stdin, expecting the transformed ResourceList on stdout.
//
// [Processor] is a kyaml framework.ResourceListProcessor. It reads its
// configuration from the ResourceList's functionConfig (a RewriteConfig,
// the same schema as rehost's --config file, or a ConfigMap for kpt users;
// see [ParseFunctionConfig]), rewrites the image fields of every item with
// [Filter], the kio filter over [manifest.Rewriter.RewriteNode] (the
// same finder, mapping and errors as
// "rehost rewrite"), and reports in ResourceList.results, with the KRM
// functions specification's severities:
//
//   - info: one result per rewritten image field, with the resource and
//     field path, and one for the image-list ConfigMap when configured;
//   - warning: an invalid image reference left as written (skipInvalid);
//   - error: an invalid image reference, a collision, a bad functionConfig.
//     Process then returns the error results as its error, so the function
//     exits non-zero.
//
// It edits items in place, so their comments, styles and kyaml's
// annotations (config.kubernetes.io/index, internal.config.kubernetes.io/*)
// are kept. It adds no resources, except the image-list ConfigMap when the
// config asks for one (imageList.configMapName).
//
// Run it with framework.Execute, or with kyaml's fn/framework/command as
// the "rehost fn" command does.
package krmfn
