package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/rehost/rehost/cmd/rehost/internal/report"
	"github.com/rehost/rehost/internal/bounded"
	"github.com/rehost/rehost/internal/bytesize"
	"github.com/rehost/rehost/pkg/manifest"
	"github.com/rehost/rehost/pkg/mirror"
	"github.com/rehost/rehost/pkg/rewrite"
	"github.com/spf13/cobra"
)

// mirrorFlags are the flags of rehost mirror, besides the mapping and helm
// flags.
type mirrorFlags struct {
	imageList       string
	insecure        bool
	insecureSources []string
	caFile          string
	toOCI, fromOCI  string
	platforms       []string
	jobs            int
	progress        string
	attachments     string
	dryRun, pin     bool
	stallTimeout    time.Duration
	charts          string // --charts: relocated, as-is or none
	allowPartial    bool
	pushRegistry    string // --push-registry: where pushes go, when not --registry
	toArchive       string // --to-archive FILE
	fromArchive     string // --from-archive FILE
	partSize        string // --part-size SIZE, as given
	force           bool   // --force: replace an archive
	sourceMirrors   []string
	mirrorOnly      bool     // --source-mirror-only
	shard           string   // --shard K/N, as given
	verifyKeys      []string // --verify-key FILE
	verify          string   // --verify: enforce or warn
}

func newMirrorCmd(s streams) *cobra.Command {
	var (
		mf mappingFlags
		hf helmFlags
		f  mirrorFlags
	)
	cmd := &cobra.Command{
		Use:   "mirror [PATH ...]",
		Short: "Copy the images of manifests into the private registry or an OCI layout",
		Long: `Copy every image the given manifests pull into the private registry, to the
very reference "rehost rewrite" writes into the manifests (same --registry,
--path-style, --exclude and --config), so manifests and registry agree.

Inputs are those of "rehost images" (manifest files, directories, charts, "-"
for stdin; no PATH means stdin; files named imageList in directories are image
lists), and/or --image-list FILE (or --images-from FILE): one reference a line,
"#" comments and blank lines allowed (a sealer imageList). Like "rehost
images", it copies the images found by key name in custom resources of unknown
kinds (--no-guess-images leaves them out) and says so in one warning, and it
says on stderr how many embedded references in free text it found and did not
copy, and which operators start images no manifest names.

Charts given as input (chart directories, packaged .tgz charts, directories
of charts, and chart references: oci://… with --version, NAME with --repo URL)
are pushed too, as OCI Helm charts (Helm's media types: helm pull oci://…,
Flux HelmRepository type oci and OCIRepository, Argo CD OCI sources read them),
to <registry>/<charts-path>/<name>:<version> (--charts-path, default charts;
"+" in a version becomes "_" in the tag, as helm push does). --charts says what
is pushed:
  relocated (default)  the chart as "rehost relocate" writes it: its values
                       point at the target, so it installs from there with no
                       values file, hooks included; a chart with an image no
                       value moves is refused (--allow-partial pushes it)
  as-is                the chart as given (a .tgz byte for byte, with its .prov)
  none                 no chart
A chart's digest depends only on its content: a re-run skips it, a dry run
lists it with its digest, the summary counts charts apart. docs/charts.md.

Destinations:
  --registry REG            the private registry (HTTPS; --insecure allows plain
                            HTTP or unverified TLS, --ca-file trusts a private CA;
                            plain HTTP is refused for any host not named insecure,
                            private addresses too, except loopback, with a notice)
  --to-oci DIR              an OCI image layout, for air-gapped transport; each
                            image is annotated with its source reference, each
                            chart with its name, version and relocation
  --from-oci DIR            push such a layout into --registry; each image goes
                            to the target its recorded source maps to, each
                            chart to <registry>/<charts-path> (a chart relocated
                            for another registry or path style is refused)
  --to-archive FILE         the same layout as one tar archive, each layer
                            written once, straight to its place (tar -xf FILE
                            gives what --to-oci writes, byte for byte; the same
                            images give the same bytes),
                            with FILE.sha256 for sha256sum -c; --part-size SIZE
                            splits it into FILE.part000, FILE.part001, ... of at
                            most SIZE each (700MB, 4095MiB, 1048576: at least
                            1MiB; FAT32 holds 4GiB minus one byte), listed in
                            FILE.sha256. An existing FILE, part or FILE.sha256 is
                            refused unless --force; a run that fails or stops
                            leaves nothing
  --from-archive FILE       push such an archive (FILE, or the name its parts
                            share) as --from-oci pushes a layout: every part is
                            checked against FILE.sha256 first (a missing,
                            truncated, reordered or altered part is named, and
                            nothing is pushed), then it is read in place, never
                            extracted. It also takes what docker save and crane
                            pull --format tarball write: each RepoTags entry goes
                            to its target, as rehost rewrite maps it
  --push-registry ADDR      push to ADDR (HOST[:PORT][/PREFIX]) while every
                            target keeps the --registry name Pods pull: the build
                            host reaches sealer's registry node at 10.0.0.5:5000,
                            the nodes pull sea.hub:5000

Sources behind a mirror: --source-mirror PREFIX=MIRROR (repeatable; the same
as sourceMirrors in --config, which it overrides for the same prefix) reads
the images whose name starts with PREFIX (a registry host or host/path:
docker.io, quay.io/jetstack; path components whole, longest prefix first)
from MIRROR (host[:port][/path]), PREFIX replaced: docker.io=mirror.corp:5000/dockerhub
reads docker.io/library/nginx:1.25 from mirror.corp:5000/dockerhub/library/nginx:1.25.
An image the mirror does not have (404) is read from its own registry, with a
warning, unless --source-mirror-only; any other failure of the mirror fails the
image. Attachments are read from where the image was. Everything else keeps
the source's name: targets, --pin lines, the annotations of --to-oci and
--to-archive. --insecure-source, --ca-file and the Docker config's
credentials apply to mirror hosts as to any source; a dry run shows where
each image would be read from ("from MIRROR/...").

Verifying signatures: --verify-key FILE (repeatable; cosign's PEM public
keys, ECDSA, Ed25519 or RSA: any key may verify) copies only the images whose
cosign signature a key verifies, checked before anything of the image is
copied and against its digest (an index's own, as cosign sign signs it), in
either of cosign's formats: the sha256-<hex>.sig tag, or a sigstore bundle
attached as an OCI 1.1 referrer (cosign 3's default). Offline: no
transparency log or Fulcio is asked. An image that is unsigned, badly signed
or signed for another digest is not copied, is listed at the end with the
reason, and the exit status is 1; --verify=warn copies it with a warning.
The summary counts the images verified; --to-oci and --to-archive record
the key that verified each one, and --from-oci/--from-archive with
--verify-key verify again from the signatures carried. A dry run verifies
too, except with --pin (HEAD requests only).

Copies are faithful: multi-platform indexes are copied whole, so digests in
"@sha256:" references stay valid (--platform narrows them, and then their
digest changes). Blobs already in the registry are not uploaded again, blobs
shared by repositories are mounted, and an image whose target already has the
same digest is skipped: re-running resumes an interrupted mirror.

What is attached to each image is copied with it, by digest, so signatures
stay valid for the rewritten reference (--attachments all, the default):
cosign's tags (sha256-<hex>.sig, .att, .sbom and any sha256-<hex>.* tag) and
OCI 1.1 referrers (referrers API, else its sha256-<hex> tag schema; written the
same way the target supports), for the image, each manifest of an index, and
each attachment in turn (a signature of an SBOM). --attachments signatures
copies signatures only, none nothing. A missing attachment is not an error; a
failed copy of one that is there is. --platform drops the attachments of a
narrowed index (they cannot be valid for it) with a warning. Requests are
retried on 5xx, 429 and connection errors; images that still fail are listed at
the end and the exit status is 1. Credentials come from the Docker config
(~/.docker/config.json and its credential helpers) and are never printed.

A layout given to --from-oci is treated as hostile (it may have travelled on
removable media): no symbolic link inside it is followed, index.json,
manifests and indexes are bounded to 4 MiB, indexes that list themselves are
refused, and every blob must match its size and digest, or its image fails
and nothing of it is pushed. So is an archive given to --from-archive, whose
entries must also be regular files or directories with safe names (no "..",
no absolute name, no link, device or FIFO, no name twice, no data past the
end). --to-oci never writes through a link either.
Messages quote what comes from a layout or a registry, and never show
credentials. A request that moves less than 1 KiB/s for --stall-timeout is
abandoned. SIGINT or SIGTERM stops a run at any stage; running the same
command again finishes it. docs/mirror-security.md has the details.

Scaling out: --shard K/N copies the K-th of N disjoint shards (K from 0 to
N-1), so that N runs with the same inputs, one per K, on as many machines,
copy together what one run copies, each image once. An image's shard is
fixed by its source repository alone (the first 8 bytes of the SHA-256 of
docker.io/library/nginx, modulo N), a chart's by its name: every tag and
digest of a repository and its attachments go to one shard, adding an image
moves no other, and a shard run again resumes. It applies to every mode:
with --registry each shard copies its images; --dry-run and --pin print the
shard's lines (sort -m of the N outputs is the whole run's); --to-oci and
--to-archive write the shard's images (give each shard its own DIR or FILE);
--from-oci and --from-archive push the shard's part of what they hold (every
shard checks a whole archive against its checksum file first). The summary
says how many images and charts were left to the other shards. In a
Kubernetes Indexed Job: --shard $(JOB_COMPLETION_INDEX)/N (docs/mirror.md).

Progress goes to stderr: a status line on a terminal, one line per image
otherwise (or with --progress plain), and a summary that counts images and
attachments apart. Standard output is empty, except:
  --dry-run   the plan: "would copy SOURCE -> TARGET" per image and an indented
              line per attachment (listing attachments reads the sources,
              never the target; --attachments none makes no request at all)
  --pin       "SOURCE<TAB>TARGET@DIGEST" lines, sorted, for every image (not
              the charts), the pinned reference the cluster can pull; HEAD
              requests resolve the digests (never GET, to spare rate limits),
              and a dry run with --pin lists no attachments`,
		Example: `  # Copy the images of a chart's manifests into sealer's registry.
  rehost mirror --registry sea.hub:5000 --ca-file /etc/sealer/ca.crt manifests/

  # Copy an image list into a plain-HTTP registry, 8 images at a time.
  rehost mirror --image-list imageList --registry 10.0.0.5:5000 --insecure --jobs 8

  # Air gap: write a bundle here, push it there.
  rehost mirror --to-oci bundle/ manifests/
  rehost mirror --from-oci bundle/ --registry sea.hub:5000

  # Air gap in one file, split for DVDs; check and push on the other side,
  # to the registry node's address, the manifests naming sea.hub:5000.
  rehost mirror --to-archive bundle.tar --part-size 4GB manifests/
  sha256sum -c bundle.tar.sha256
  rehost mirror --from-archive bundle.tar --registry sea.hub:5000 \
    --push-registry 10.0.0.5:5000 --ca-file /etc/sealer/ca.crt

  # What an archive holds (its parts checked first).
  rehost mirror --from-archive bundle.tar --dry-run

  # Images built here and never pushed: what docker save writes.
  docker save -o images.tar team/app:1.0 team/worker:1.0
  rehost mirror --from-archive images.tar --registry sea.hub:5000

  # GitOps: a chart and its images, the chart relocated for the target
  # (then: helm pull oci://sea.hub:5000/charts/ingress-nginx --version 4.11.0).
  rehost mirror --to-oci bundle/ --registry sea.hub:5000 \
    ingress-nginx --repo https://kubernetes.github.io/ingress-nginx --version 4.11.0
  rehost mirror --from-oci bundle/ --registry sea.hub:5000

  # Docker Hub and quay.io only through the corporate mirror.
  rehost mirror --registry sea.hub:5000 manifests/ \
    --source-mirror docker.io=mirror.corp:5000/dockerhub \
    --source-mirror quay.io=mirror.corp:5000/q --source-mirror-only

  # What would be copied where, attachments included.
  rehost mirror --dry-run manifests/ > plan.txt

  # Images and their signatures only.
  rehost mirror --attachments signatures --registry sea.hub:5000 manifests/

  # Three machines, each copying a third of the images (0/3, 1/3, 2/3).
  rehost mirror --image-list imageList --registry sea.hub:5000 --shard 1/3

  # Only what the release key signed, into the bundle; checked again there.
  rehost mirror --to-archive bundle.tar --verify-key cosign.pub manifests/
  rehost mirror --from-archive bundle.tar --registry sea.hub:5000 --verify-key cosign.pub

  # The digests to pin (HEAD requests only).
  rehost mirror --dry-run --pin manifests/ > pinned.tsv`,
		RunE: func(cmd *cobra.Command, args []string) error {
			defer hf.src.cleanup()
			if err := f.validate(args); err != nil {
				return err
			}
			// Before the system pool is read (--ca-file adds to it).
			useFallbackRoots()
			if from := f.from(); from != "" && len(mf.imagesFrom) > 0 {
				return fmt.Errorf("%s pushes what it holds: it takes no --images-from", from)
			}
			rw, err := mf.newRewriter(cmd, s, manifest.WithFirstOccurrences())
			if err != nil {
				return err
			}
			opts, err := f.options(rw.Mapper(), s)
			if err != nil {
				return err
			}
			if opts.SourceMirrors, err = f.mirrors(mf.loaded.SourceMirrors, mf.config); err != nil {
				return err
			}
			opts.SourceMirrorOnly = f.mirrorOnly
			// The same mirrors serve the charts' dependencies.
			for _, sm := range opts.SourceMirrors.List() {
				hf.src.sourceMirrors = append(hf.src.sourceMirrors, sm.String())
			}
			if to := f.to(); to != "" && opts.Verify != nil && opts.Attachments == mirror.AttachmentsNone {
				fmt.Fprintf(s.err, "rehost: warning: --attachments none leaves the signatures behind: --from-oci/--from-archive --verify-key cannot verify what %s writes again\n", to)
			}
			m, err := mirror.New(opts)
			if err != nil {
				return err
			}
			if from := f.from(); from != "" && cmd.Flags().Changed("charts") {
				return fmt.Errorf("%s pushes the charts it holds as they were written: it takes no --charts", from)
			}
			partSize, err := f.parsePartSize()
			if err != nil {
				return err
			}
			if fi, err := os.Stat(f.fromArchive); f.fromArchive != "" && err == nil && fi.IsDir() {
				return fmt.Errorf("--from-archive %s: a directory; a layout directory is pushed with --from-oci", f.fromArchive)
			}
			var jobs []mirror.Job
			if f.from() == "" {
				// Reading the inputs, and fetching and relocating the
				// charts into a temporary directory, writes nothing: a
				// signal stops it the default way, once the temporary
				// directory and rehost-helm's are removed.
				if err := collectImages(rw, args, f.imageList, &hf, s); err != nil {
					return err
				}
				sum := rw.Summary()
				reportEmbedded(s, sum, "copied", "rehost images --embedded lists them; copy them with --image-list")
				reportGuessed(s, sum)
				reportOperators(s, sum)
				jobs = mirror.Jobs(rw.Images())
				charts, err := chartJobs(cmd, f, &mf, &hf, rw, s)
				if err != nil {
					return err
				}
				jobs = append(jobs, charts...)
			}
			// From here on, a signal stops the copies (and the deferred
			// cleanup removes the charts prepared).
			hf.src.unwatch()
			ctx, stop := interruptible(commandContext(cmd), s.err, stopGrace, func(code int) {
				hf.src.cleanup()
				os.Exit(code)
			})
			defer stop()

			var sum mirror.Summary
			switch {
			case f.fromOCI != "":
				sum, err = m.Import(ctx, f.fromOCI, rw.Mapper())
			case f.fromArchive != "":
				sum, err = m.ImportArchive(ctx, f.fromArchive, rw.Mapper())
				err = archiveError(err)
			case f.toOCI != "":
				sum, err = m.Export(ctx, jobs, f.toOCI)
			case f.toArchive != "":
				sum, err = m.ExportArchive(ctx, jobs, f.toArchive, mirror.ArchiveOptions{PartSize: partSize, Force: f.force})
				err = archiveError(err)
			default:
				sum = m.Copy(ctx, jobs)
			}
			if cause := interruption(ctx); cause != nil && f.toArchive != "" && !f.dryRun {
				return fmt.Errorf("mirror stopped (%v): %s is not written, an archive is written only whole: run the same command again", cause, f.toArchive)
			}
			if cause := interruption(ctx); cause != nil {
				done := fmt.Sprintf("%d of %d images", sum.Copied+sum.Skipped, sum.Images())
				if c := sum.Charts; c.Total() > 0 {
					done += fmt.Sprintf(" and %d of %d charts", c.Copied+c.Skipped, c.Total())
				}
				return fmt.Errorf("mirror stopped (%v): %s done; nothing half-written is listed as done: run the same command again to finish", cause, done)
			}
			if err != nil {
				return err
			}
			if sum.Failed > 0 || sum.Attachments.Failed > 0 || sum.Charts.Failed > 0 {
				if f.toArchive != "" && !f.dryRun {
					return fmt.Errorf("%w\n%s is not written: an archive is written only whole; run the same command again once these are fixed", failures(sum), f.toArchive)
				}
				return failures(sum)
			}
			if f.pin {
				return printPinned(s.out, sum)
			}
			if f.dryRun {
				return report.WritePlan(s.out, sum)
			}
			return nil
		},
	}
	mf.register(cmd)
	mf.registerCharts(cmd)
	// GitOps chart sources are not what mirror copies.
	cmd.Flags().MarkHidden("no-chart-sources")
	// Before the chart flags: it bounds the chart downloads too.
	cmd.Flags().DurationVar(&f.stallTimeout, "stall-timeout", mirror.DefaultStallTimeout, "give up on a registry request or chart download that moves less than 1 KiB/s over this long (waiting for an answer included); a registry request is retried, then its image fails")
	hf.register(cmd)
	fs := cmd.Flags()
	fs.StringVar(&f.charts, "charts", chartsRelocated, "what is pushed of the charts given as input: relocated (their values point at the target registry, as rehost relocate writes them), as-is, or none")
	fs.BoolVar(&f.allowPartial, "allow-partial", false, "--charts relocated: push a chart even when some image cannot be moved by its values (reported)")
	fs.StringVar(&f.imageList, "image-list", "", `file of images to copy, one reference a line ("-" for stdin)`)
	fs.BoolVar(&f.insecure, "insecure", false, "allow plain HTTP or unverified TLS for the target registry (the --push-registry address, when given)")
	fs.StringArrayVar(&f.insecureSources, "insecure-source", nil, "allow plain HTTP or unverified TLS for this source registry host (repeatable)")
	fs.StringVar(&f.caFile, "ca-file", "", "PEM file of a certificate authority to trust, besides the system's")
	fs.StringVar(&f.toOCI, "to-oci", "", "write the images into this OCI image layout directory instead of a registry")
	fs.StringVar(&f.fromOCI, "from-oci", "", "push the images of this OCI image layout (written by --to-oci) into --registry")
	fs.StringVar(&f.toArchive, "to-archive", "", "write the images as an OCI image layout in one tar `FILE` (with FILE.sha256), instead of a registry")
	fs.StringVar(&f.partSize, "part-size", "", "with --to-archive: split the archive into parts FILE.part000, ... of at most `SIZE` each: 700MB, 4095MiB, or bytes (at least 1MiB)")
	fs.BoolVar(&f.force, "force", false, "with --to-archive: replace an archive already there (FILE, its parts and FILE.sha256)")
	fs.StringVar(&f.fromArchive, "from-archive", "", "push the images of this archive (written by --to-archive, or by docker save) into --registry; `FILE` is the archive or the name its parts share")
	fs.StringVar(&f.pushRegistry, "push-registry", "", "push to this `HOST[:PORT][/PREFIX]` instead of --registry, whose names the targets keep (in manifests, reports, --pin lines and relocated charts): for a registry the cluster pulls by a name this host cannot resolve; --insecure, --ca-file and credentials apply to it")
	fs.StringSliceVar(&f.platforms, "platform", nil, "copy only these platforms of multi-platform images (os/arch[/variant], repeatable or comma-separated); changes their digest")
	fs.IntVar(&f.jobs, "jobs", mirror.DefaultJobs, "images copied at once")
	fs.StringVar(&f.progress, "progress", "auto", "progress on stderr: auto (a status line on a terminal, else plain), plain (a line per image) or none")
	fs.StringVar(&f.attachments, "attachments", string(mirror.AttachmentsAll), "what attached to each image is copied with it: all (signatures, attestations, SBOMs, other referrers), signatures, or none")
	fs.BoolVar(&f.dryRun, "dry-run", false, "print the plan (what would be copied where, attachments included) on stdout; copy nothing")
	fs.BoolVar(&f.pin, "pin", false, "print SOURCE<TAB>TARGET@DIGEST lines on stdout, digests resolved with HEAD requests")
	fs.StringArrayVar(&f.sourceMirrors, "source-mirror", nil, "read the images under `PREFIX=MIRROR` from MIRROR, PREFIX replaced (docker.io=mirror.corp:5000/dockerhub; repeatable; longest prefix first, path components whole; overrides sourceMirrors of --config for the same prefix); an image the mirror lacks is read from its own registry, unless --source-mirror-only. Names stay the sources' everywhere")
	fs.BoolVar(&f.mirrorOnly, "source-mirror-only", false, "never read an image a source mirror covers from its own registry: one its mirror lacks fails")
	fs.StringVar(&f.shard, "shard", "", "copy only shard `K/N` of the images and charts (K from 0 to N-1): N runs, one per K, copy together what one run copies, each image once; an image's shard is fixed by its source repository, a chart's by its name (docs/mirror.md#scaling-out)")
	fs.StringArrayVar(&f.verifyKeys, "verify-key", nil, "copy only the images whose cosign signature this PEM public key `FILE` verifies (cosign.pub: ECDSA, Ed25519 or RSA; repeatable: any key may verify), offline; with --from-oci and --from-archive, verified again from the signatures carried")
	fs.StringVar(&f.verify, "verify", verifyEnforce, "with --verify-key: enforce (an image no key verifies is not copied, and the exit status is 1) or warn (copied, with a warning)")
	return cmd
}

// The values of --verify.
const (
	verifyEnforce = "enforce"
	verifyWarn    = "warn"
)

// mirrors are the source mirrors of the config file (config, the file's
// name) and of --source-mirror, which replaces the file's mirror of the
// same prefix. Errors name the flag.
func (f *mirrorFlags) mirrors(config []rewrite.SourceMirror, file string) (*rewrite.SourceMirrors, error) {
	var flags []rewrite.SourceMirror
	given := map[string]string{} // normalised prefix -> the flag's value
	for _, v := range f.sourceMirrors {
		m, err := rewrite.ParseSourceMirror(v)
		if err != nil {
			return nil, fmt.Errorf("--source-mirror %s", sourceMirrorError(v, err))
		}
		n, _ := m.Normalized()
		if first, ok := given[n.Prefix]; ok {
			return nil, fmt.Errorf("--source-mirror %s: %s is mapped twice (--source-mirror %s): give each prefix one mirror", v, n.Prefix, first)
		}
		given[n.Prefix] = v
		flags = append(flags, m)
	}
	var all []rewrite.SourceMirror
	for _, m := range config {
		if n, err := m.Normalized(); err == nil && given[n.Prefix] != "" {
			continue // the flag's mirror replaces the file's
		}
		all = append(all, m)
	}
	all = append(all, flags...)
	sm, err := rewrite.NewSourceMirrors(all)
	if err != nil {
		// The file's entries were checked when it was loaded.
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	if f.mirrorOnly && sm.Len() == 0 {
		return nil, errors.New("--source-mirror-only: no source mirror given (--source-mirror PREFIX=MIRROR, or sourceMirrors in --config)")
	}
	if from := f.from(); from != "" && len(f.sourceMirrors) > 0 {
		return nil, fmt.Errorf("%s pushes what it holds and reads no source: it takes no --source-mirror", from)
	}
	return sm, nil
}

// sourceMirrorError is the error of a --source-mirror value, after the
// flag's name.
func sourceMirrorError(v string, err error) string {
	var se *rewrite.SourceMirrorError
	if errors.As(err, &se) && se.Field == "" {
		return fmt.Sprintf("%s: %s", v, se.Reason)
	}
	return fmt.Sprintf("%s: %v", v, err)
}

func (f *mirrorFlags) validate(args []string) error {
	switch f.progress {
	case "auto", "plain", "none":
	default:
		return fmt.Errorf("--progress %s: want auto, plain or none", f.progress)
	}
	if _, err := mirror.ParseAttachments(f.attachments); err != nil {
		return fmt.Errorf("--attachments %s: want all, signatures or none", f.attachments)
	}
	if f.jobs < 1 {
		return fmt.Errorf("--jobs %d: want at least 1", f.jobs)
	}
	switch f.charts {
	case chartsRelocated, chartsAsIs, chartsNone:
	default:
		return fmt.Errorf("--charts %s: want relocated, as-is or none", f.charts)
	}
	if _, err := f.parseShard(); err != nil {
		return err
	}
	if f.stallTimeout <= 0 {
		return fmt.Errorf("--stall-timeout %s: want a positive duration, like 2m", f.stallTimeout)
	}
	var dests []string
	for _, d := range []struct{ flag, value string }{{"--to-oci", f.toOCI}, {"--to-archive", f.toArchive}, {"--from-oci", f.fromOCI}, {"--from-archive", f.fromArchive}} {
		if d.value != "" {
			dests = append(dests, d.flag)
		}
	}
	if len(dests) > 1 {
		return fmt.Errorf("%s exclude each other: give one", strings.Join(dests, " and "))
	}
	if from := f.from(); from != "" && (len(args) > 0 || f.imageList != "") {
		return fmt.Errorf("%s pushes what it holds: it takes no PATH and no --image-list", from)
	}
	if f.toArchive == "" {
		for _, c := range []struct {
			flag string
			set  bool
		}{{"--part-size", f.partSize != ""}, {"--force", f.force}} {
			if c.set {
				return fmt.Errorf("%s applies to --to-archive only", c.flag)
			}
		}
	}
	switch f.verify {
	case verifyEnforce, verifyWarn:
	default:
		return fmt.Errorf("--verify %s: want enforce or warn", f.verify)
	}
	if f.verify == verifyWarn && len(f.verifyKeys) == 0 {
		return errors.New("--verify=warn: no --verify-key given")
	}
	if f.pushRegistry != "" {
		if to := f.to(); to != "" {
			return fmt.Errorf("--push-registry says where pushes go, and %s pushes nothing: give it to the command that pushes the bundle (--from-oci, --from-archive)", to)
		}
		if _, err := rewrite.NewMapper(rewrite.Config{Registry: f.pushRegistry}); err != nil {
			return fmt.Errorf("--push-registry %s: want HOST[:PORT][/PREFIX], the address this host reaches the registry at: %v", f.pushRegistry, err)
		}
	}
	return nil
}

// from is the flag that pushes a bundle (--from-oci, --from-archive),
// "" when none is given.
func (f *mirrorFlags) from() string {
	switch {
	case f.fromOCI != "":
		return "--from-oci"
	case f.fromArchive != "":
		return "--from-archive"
	}
	return ""
}

// to is the flag that writes a bundle, "" when none is given.
func (f *mirrorFlags) to() string {
	switch {
	case f.toOCI != "":
		return "--to-oci"
	case f.toArchive != "":
		return "--to-archive"
	}
	return ""
}

// parseShard is --shard (the zero value, the whole run, when not given).
func (f *mirrorFlags) parseShard() (mirror.Shard, error) {
	if f.shard == "" {
		return mirror.Shard{}, nil
	}
	sh, err := mirror.ParseShard(f.shard)
	var se *mirror.ShardError
	if errors.As(err, &se) {
		return sh, fmt.Errorf("--shard %s: %s: want K/N with K from 0 to N-1 (0/3, 1/3, 2/3; in a Kubernetes Indexed Job, $(JOB_COMPLETION_INDEX)/N)", bounded.Word(f.shard), se.Reason)
	}
	return sh, err
}

// parsePartSize is --part-size in bytes (0 when not given).
func (f *mirrorFlags) parsePartSize() (int64, error) {
	if f.partSize == "" {
		return 0, nil
	}
	n, err := bytesize.Parse(f.partSize)
	if err != nil {
		return 0, fmt.Errorf("--part-size: %v", err)
	}
	if n < mirror.MinPartSize {
		return 0, fmt.Errorf("--part-size %s: %d bytes, want at least 1MiB (%d bytes)", f.partSize, n, mirror.MinPartSize)
	}
	return n, nil
}

// archiveError words the errors of the archive itself (as opposed to
// its images') for the command line.
func archiveError(err error) error {
	var (
		exists *mirror.ExistsError
		part   *mirror.PartError
		sums   *mirror.ChecksumFileError
		entry  *mirror.EntryError
	)
	switch {
	case err == nil:
		return nil
	case errors.As(err, &exists):
		return fmt.Errorf("%w: --force replaces them", err)
	case errors.As(err, &part):
		return fmt.Errorf("%w\nnothing was pushed: copy the parts named again from the other side (sha256sum -c %s checks them there)", err, filepath.Base(part.Checksums))
	case errors.As(err, &sums), errors.As(err, &entry):
		return fmt.Errorf("%w\nnothing was pushed", err)
	}
	return err
}

// options turns the flags into mirror options.
func (f *mirrorFlags) options(mapper *rewrite.Mapper, s streams) (mirror.Options, error) {
	o := mirror.Options{Jobs: f.jobs, DryRun: f.dryRun, Pin: f.pin, Insecure: f.insecureSources, Attachments: mirror.Attachments(f.attachments), StallTimeout: f.stallTimeout}
	var err error
	if o.Shard, err = f.parseShard(); err != nil {
		return o, err
	}
	if f.pushRegistry != "" {
		o.PushRegistry = &mirror.PushRegistry{Name: mapper.Root(), Address: f.pushRegistry}
	}
	if f.insecure {
		// The host rehost talks to: the push registry's, when given.
		host := mapper.Registry()
		if f.pushRegistry != "" {
			host, _, _ = strings.Cut(f.pushRegistry, "/")
		}
		o.Insecure = append(o.Insecure, host)
	}
	if len(f.verifyKeys) > 0 {
		o.Verify = &mirror.Verify{Warn: f.verify == verifyWarn}
		for _, file := range f.verifyKeys {
			b, err := os.ReadFile(file)
			if err != nil {
				return o, fmt.Errorf("--verify-key: %w", err)
			}
			k, err := mirror.ParseVerifyKey(file, b)
			if err != nil {
				var ke *mirror.KeyError
				if errors.As(err, &ke) {
					return o, fmt.Errorf("--verify-key %s: %s", mirror.Quote(file), ke.Reason)
				}
				return o, fmt.Errorf("--verify-key %s: %w", mirror.Quote(file), err)
			}
			o.Verify.Keys = append(o.Verify.Keys, k)
		}
	}
	for _, p := range f.platforms {
		pl, err := v1.ParsePlatform(p)
		if err != nil || pl.OS == "" {
			return o, fmt.Errorf("--platform %q: want os/arch[/variant], like linux/amd64", p)
		}
		o.Platforms = append(o.Platforms, *pl)
	}
	if f.caFile != "" {
		pem, err := os.ReadFile(f.caFile)
		if err != nil {
			return o, fmt.Errorf("--ca-file: %w", err)
		}
		if o.RootCAs, err = mirror.RootCAs(pem); err != nil {
			return o, fmt.Errorf("--ca-file %s: %w", f.caFile, err)
		}
	}
	switch {
	case f.progress == "none":
	case f.dryRun && !f.pin:
		// The plan goes to stdout once the run is over; stderr keeps
		// notices, warnings, failures and the summary.
		o.Reporter = planReporter{report.NewLine(s.err)}
	case f.progress == "auto" && isTerminal(s.err):
		o.Reporter = report.NewTerminal(s.err)
	default:
		o.Reporter = report.NewLine(s.err)
	}
	return o, nil
}

// planReporter is a line reporter for a dry run whose plan is printed on
// stdout: it leaves out the planned lines and reports the rest.
type planReporter struct{ mirror.Reporter }

func (p planReporter) Done(r mirror.Result) {
	if r.Status != mirror.Planned {
		p.Reporter.Done(r)
		return
	}
	var failed []mirror.Attachment
	for _, a := range r.Attachments {
		if a.Status == mirror.Failed {
			failed = append(failed, a)
		}
	}
	if len(failed) > 0 {
		r.Attachments = failed
		p.Reporter.Done(r)
	}
}

func (p planReporter) CheckProgress(c mirror.CheckProgress) {
	if r, ok := p.Reporter.(mirror.PartReporter); ok {
		r.CheckProgress(c)
	}
}

func (p planReporter) PartWritten(path string, size int64) {
	if r, ok := p.Reporter.(mirror.PartReporter); ok {
		r.PartWritten(path, size)
	}
}

func (p planReporter) Notice(n mirror.Notice) {
	if nr, ok := p.Reporter.(mirror.Noticer); ok {
		nr.Notice(n)
	}
}

// isTerminal reports whether w is a terminal that can redraw a line.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok || os.Getenv("TERM") == "dumb" {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// stopGrace is how long a signalled run may take to wind down (abandon
// its requests, remove its temporary files) before the process exits
// anyway.
const stopGrace = 5 * time.Second

// interruptible returns a context that SIGINT and SIGTERM cancel, with
// the signal as its cause. After the first signal the default action is
// back, so that a second one kills at once; and should the run not wind
// down within grace, exit(1) ends the process. stop releases it all.
func interruptible(parent context.Context, stderr io.Writer, grace time.Duration, exit func(int)) (ctx context.Context, stop func()) {
	ctx, unnotify := signal.NotifyContext(parent, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		select {
		case <-done:
			return
		case <-ctx.Done():
		}
		unnotify()
		if interruption(ctx) == nil {
			return
		}
		select {
		case <-done:
		case <-time.After(grace):
			fmt.Fprintf(stderr, "rehost: %v, and the mirror did not stop within %s: exiting\n", context.Cause(ctx), grace)
			exit(1)
		}
	}()
	var once sync.Once
	return ctx, func() {
		once.Do(func() {
			close(done)
			unnotify()
		})
	}
}

// interruption is the signal that cancelled ctx (an error naming it), or
// nil. The cause is compared by identity: a signal's cause also "is"
// context.Canceled.
func interruption(ctx context.Context) error {
	cause := context.Cause(ctx)
	if cause == nil || cause == context.Canceled || cause == context.DeadlineExceeded { //nolint:errorlint // identity intended
		return nil
	}
	return cause
}

func commandContext(cmd *cobra.Command) context.Context {
	if ctx := cmd.Context(); ctx != nil {
		return ctx
	}
	return context.Background()
}

// collectImages feeds the image list and the manifest inputs to rw. The
// manifests are read when PATHs are given, or from stdin when there is no
// image list either.
func collectImages(rw *manifest.Rewriter, args []string, imageList string, hf *helmFlags, s streams) error {
	if imageList != "" {
		if err := readImageList(rw, imageList, s.in); err != nil {
			return err
		}
	}
	if len(args) == 0 && rw.ImageLists() > 0 { // --image-list or --images-from, no PATH: no stdin
		return nil
	}
	sts, err := openPaths(args, hf, rw, s)
	if err != nil {
		return err
	}
	return readImages(rw, sts)
}

// readImageList adds the references of an image list file to rw: one a
// line, blank lines and "#" comments skipped.
func readImageList(rw *manifest.Rewriter, file string, stdin io.Reader) error {
	if file == "-" {
		return rw.ReadImageList(stdin, manifest.Stdin)
	}
	fh, err := os.Open(file)
	if err != nil {
		return err
	}
	defer fh.Close()
	return rw.ReadImageList(fh, file)
}

// failures is the error of a run where images, charts or attachments
// failed: each failure on its own line.
func failures(s mirror.Summary) error {
	var parts []string
	if s.Failed > 0 {
		parts = append(parts, fmt.Sprintf("%d of %d images", s.Failed, s.Images()))
	}
	if c := s.Charts; c.Failed > 0 {
		parts = append(parts, fmt.Sprintf("%d of %d charts", c.Failed, c.Total()))
	}
	if s.Attachments.Failed > 0 {
		parts = append(parts, fmt.Sprintf("%d attachments", s.Attachments.Failed))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "mirror: %s failed:", strings.Join(parts, " and "))
	// Sources may come from a layout's annotations: quoted. Errors are
	// scrubbed of credentials and escapes by package mirror.
	for _, r := range s.Results {
		if r.Status == mirror.Failed {
			kind := ""
			if r.Chart != nil {
				kind = "chart "
			}
			via := ""
			if r.Via != "" {
				via = " via " + mirror.Quote(r.Via)
			}
			if r.From != "" {
				via += " from " + mirror.Quote(r.From)
			}
			fmt.Fprintf(&b, "\n  %s%s -> %s%s: %s", kind, mirror.Quote(r.Source), mirror.Quote(r.Destination), via, report.Error(r.Err))
		}
		for _, a := range r.Attachments {
			if a.Status == mirror.Failed {
				fmt.Fprintf(&b, "\n  %s %s -> %s: %s", mirror.Quote(string(a.Kind)), mirror.Quote(a.Source), mirror.Quote(a.Destination), report.Error(a.Err))
			}
		}
	}
	return errors.New(b.String())
}

// printPinned writes "SOURCE<TAB>PINNED-TARGET" lines, sorted by source,
// for the images: the lines rehost rewrite --pins reads. Charts have none
// (their sources are not image references).
func printPinned(w io.Writer, s mirror.Summary) error {
	var lines []string
	for _, r := range s.Results {
		if r.Chart != nil {
			continue
		}
		p := r.Pinned()
		if p == "" {
			return fmt.Errorf("%s: no digest to pin", r.Source)
		}
		lines = append(lines, r.Source+"\t"+p)
	}
	sort.Strings(lines)
	for _, l := range lines {
		if _, err := fmt.Fprintln(w, l); err != nil {
			return err
		}
	}
	return nil
}
