// Package mirror copies container images into a private registry or an OCI
// image layout, so that the registry holds every image that rewritten
// manifests pull.
//
// The images to copy are [Job] values: a source reference and the target
// that package rewrite computed for it ([Jobs] turns the image set of a
// manifest.Rewriter into jobs), so manifests and registry agree by
// construction. A [Mirror] copies them with go-containerregistry:
//
//   - [Mirror.Copy] copies each source to its target registry reference;
//   - [Mirror.Export] writes the sources into an OCI image layout, recording
//     each source reference in the index annotations;
//   - [Mirror.Import] pushes such a layout into a registry, computing each
//     target from the recorded source with a rewrite.Mapper.
//
// Copies are faithful: multi-platform indexes are copied whole (unless
// Options.Platforms narrows them, which changes their digest), so digests in
// "@sha256:" references stay valid. Blobs already present are not uploaded
// again, blobs shared by several target repositories are mounted from the
// repository that received them first, and an image whose target already
// holds the same digest is skipped: re-running a mirror is cheap and resumes
// an interrupted one. Requests are retried with backoff on 5xx, 429 and
// connection errors; an image that still fails is reported in the [Summary]
// while the others go on.
//
// The package prints nothing: progress goes to a [Reporter] (see
// [NewLineReporter] and [NewTerminalReporter]).
package mirror
