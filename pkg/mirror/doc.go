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
//     target from the recorded source with a rewrite.Mapper;
//   - [Mirror.ExportArchive] writes the same layout as one tar archive (the
//     same bytes for the same images; planned first, then each blob
//     written once, straight from its download to its place), split into
//     parts for the media it travels on ([ArchiveOptions]), with a
//     checksum file in sha256sum's format;
//   - [Mirror.ImportArchive] checks such an archive's parts against its
//     checksum file, then pushes it as Import pushes a layout, reading the
//     tar in place; it also takes what `docker save` writes.
//
// [Options].PushRegistry pushes to another address than the registry the
// targets name (the name the cluster pulls, which the pushing host may not
// resolve), with Copy, Import and ImportArchive alike.
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
// What is attached to each image travels with it (Options.Attachments):
// cosign's tags ("sha256-<hex>.sig", ".att", ".sbom", …) and OCI 1.1
// referrers (referrers API, else its tag schema, on either side), of the
// image, of each manifest of an index, and of each attachment in turn. They
// keep their digests, so signatures stay valid for the rewritten reference;
// they are counted apart in Summary.Attachments, skipped when present, and
// carried through OCI layouts by Export and Import.
//
// Options.Verify carries only what is signed: each image's cosign
// signature is verified with public keys (ParseVerifyKey) before anything
// of it is copied, offline, in both of cosign's formats (the
// "sha256-<hex>.sig" tag, a sigstore bundle attached as an OCI 1.1
// referrer); an image no key verifies fails with an *UnverifiedError
// (Verification.Verdict: Unsigned, BadSignature, OtherDigest) unless
// Verify.Warn. Summary.Verified counts those verified, Export records the
// key (AnnotationVerifiedKey), and Import verifies again from the
// signatures carried.
//
// Helm charts travel too: a [Chart] (NewChart, LoadChart: a packaged
// chart read without Helm) is pushed as the OCI artifact `helm push` makes
// (Helm's config and layer media types), minus the creation time, so that
// its digest depends on its bytes only; a [ChartJob] sends it to
// <registry>/<charts-path>/<name>:<version> beside the images, Export
// stores it in a layout and Import pushes it to the mapper's
// ChartsRepository, refusing a chart relocated for another mapping.
// Summary.Charts counts charts apart from images.
//
// TLS is required for every registry not listed in Options.Insecure,
// private addresses included; only loopback hosts may answer in plain HTTP
// (with a notice to a Reporter that implements Noticer).
//
// Layouts, archives and registries are untrusted (docs/mirror-security.md): no
// symbolic link inside a layout is followed (ErrSymlink), everything read
// from a layout is bounded (MaxManifestSize, MaxConfigSize) and checked
// against its size and digest before it is pushed or as it streams, index
// graphs are walked for cycles and depth first (ErrCycle, ErrTooDeep),
// files are written through a temporary file and a rename, a registry that
// stalls is given up on (Options.StallTimeout, ErrStalled), and messages
// quote what came from a layout (Quote) and never show credentials. An
// archive's parts must match its checksum file (*PartError,
// *ChecksumFileError), and its entries must be regular files or
// directories with safe names, each once, within the archive
// (*EntryError: ErrUnsafeName, ErrLinkEntry, ErrSpecialEntry,
// ErrDuplicateEntry, ErrPastEnd, ErrTooManyEntries).
//
// A run can be one of N disjoint shards of the images and charts
// (Options.Shard, ParseShard), so that N workers copy together what one
// run copies, each image once: a job's shard is fixed by its source
// repository (a chart's by its name), never by its position, so that
// every tag, digest and attachment of a repository stays in one shard
// and adding an image moves no other (ShardKey, ShardOf).
//
// The package prints nothing: progress goes to a [Reporter] as events
// (rehost's command line draws them as a status line or a line per
// image), and to a [PartReporter] (the parts of an archive checked and
// written) and a [Noticer] when the Reporter implements them; the
// [Summary] and its [Result] values hold every fact a report shows.
package mirror
