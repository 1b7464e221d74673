package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/rehost/rehost/cmd/rehost/internal/output"
	"github.com/rehost/rehost/internal/safefile"
	"github.com/rehost/rehost/pkg/manifest"
	"github.com/rehost/rehost/pkg/rewrite"
	"github.com/spf13/cobra"
)

func newRewriteCmd(s streams) *cobra.Command {
	var (
		mf         mappingFlags
		hf         helmFlags
		outputDir  string
		inPlace    bool
		imageList  string
		pinsFile   string
		pinsStrict bool
		// manifestsOnly: --manifests-only, no copy of other files.
		manifestsOnly bool
	)
	cmd := &cobra.Command{
		Use:   "rewrite [PATH ...]",
		Short: "Rewrite images in manifests to the private registry",
		Long: `Rewrite every Pod-spec image in the given manifests to the private registry and
write the result to stdout. Everything but the rewritten image values is kept
byte for byte: comments, key order, quoting, JSON stays JSON.

Image references embedded in strings whose flag or env var name says image
(--*-image=VALUE, *_IMAGE and RELATED_IMAGE_* env values,
--prometheus-config-reloader=) are rewritten in place and listed by default
(--no-named-embedded leaves them as written). Those in free text (ConfigMap data,
annotations, other args) are found but left as written unless
--rewrite-embedded (config rewriteEmbedded: true) is given; one line on stderr
says how many were left.

In custom resources of kinds rehost has no entries for, the values of keys
named image or *Image (rook CephCluster spec.cephVersion.image, Percona
spec.pxc.image, spec.haproxy.image, ...; a map of registry, repository and
tag under such a key too) are rewritten and listed like image fields, with one
warning naming their kinds and fields; values there that are not image
references are left as written with a warning each. --no-guess-images (config
noGuessImages: true) leaves them all as written.

Registry settings of operators are rewritten the same way (tigera Installation
spec.registry, IstioOperator and Sail hubs), and tigera's spec.registry is added
when absent (in strip style; --no-add-registry reports it instead): one line on
stderr per added setting. Images of imageList files in input directories and of
--images-from join --image-list.

The chart sources of GitOps objects are rewritten to the target registry's
charts, <registry>/charts (--charts-path), where rehost mirror pushes chart
NAME at VERSION as NAME:VERSION: Flux HelmRepository spec.url becomes
oci://<registry>/charts with spec.type oci (set, or added when absent), a Flux
OCIRepository of a chart (layerSelector of the Helm chart media type) and a
HelmRelease chart template of kind OCIRepository oci://<registry>/charts/NAME,
and the repoURL of Argo CD Application and ApplicationSet sources with a chart
<registry>/charts, the form Argo CD reads as an OCI Helm repository. HelmChart,
HelmRelease chart references, Git sources and sources already in the target
registry stay as written; exclusions by host or repository prefix apply. One
line on stderr counts them; --no-chart-sources leaves them all as written (see
docs/gitops.md).

PATH is a file, a directory (walked recursively for *.yaml, *.yml, *.json in
lexical order) or - for stdin; no PATH reads stdin, so rehost works as a Helm
post-renderer. On any error nothing is written to stdout, --output-dir or the
input files.

With --output-dir, every output file keeps its input's permissions, and the
other files of directory inputs (a sealer Kubefile, a README, imageList files;
not those of hidden directories or charts) are copied unchanged, so that DIR
is complete: one line on stderr says how many (--manifests-only copies none).

Files are never harmed (docs/cli-safety.md): no write goes through a symbolic
link inside DIR; a device, FIFO or link at an output (/dev/null, /dev/stdout)
is written into, never replaced; --in-place replaces regular files only,
keeping their mode and owner; a symbolic link in an input directory or chart
that leads out of it is an error, one inside it is followed with a warning.

A chart is a directory holding a Chart.yaml, a packaged chart (.tgz), or a
chart reference, fetched with Helm's getters into a temporary directory:
oci://host/path/name (--version, or a tag; --plain-http for a plain-HTTP
registry), NAME with --repo URL (a chart repository), REPO/NAME of a repository
added with helm repo add (--helm-user-config: your Helm configuration and
cache; by default Helm's are private and empty), or an http(s) URL of a .tgz.
An existing local path is always a path. docs/charts.md.`,
		Example: `  # Rewrite a directory of manifests and apply them.
  rehost rewrite manifests/ | kubectl apply -f -

  # As a filter behind helm template, to another registry.
  helm template my-app charts/my-app | rehost rewrite --registry harbor.local:8443/mirror

  # As a Helm post-renderer.
  helm install my-app charts/my-app --post-renderer rehost --post-renderer-args rewrite

  # Pin every image by digest (resolved with HEAD requests), then rewrite;
  # --pins-strict fails on an image the pins file has no line for.
  rehost mirror --dry-run --pin manifests/ > pins.tsv
  rehost rewrite --pins pins.tsv --pins-strict manifests/

  # Rewrite into out/ and print the image list on stdout.
  rehost rewrite manifests/ --output-dir out/ --image-list - > imageList

  # Write the rewritten files to out/ and the image list for sealer.
  rehost rewrite manifests/ --output-dir out/ --image-list imageList

  # Flux or Argo CD objects: images and chart sources to sea.hub:5000,
  # charts under sea.hub:5000/helm (where rehost mirror pushed them).
  rehost rewrite clusters/prod/ --charts-path helm --output-dir airgap/

  # A sealer application: out/ gets the rewritten manifests, the Kubefile
  # and the other files, and an imageList of every image to cache.
  rehost rewrite calico-app/ --output-dir out/ --image-list out/imageList`,
		RunE: func(cmd *cobra.Command, args []string) error {
			defer hf.src.cleanup()
			if outputDir != "" && inPlace {
				return errors.New("--output-dir and --in-place exclude each other")
			}
			if imageList == "-" && !inPlace && outputDir == "" {
				return errors.New("--image-list -: stdout carries the rewritten manifests; with --output-dir or --in-place the list goes to stdout, otherwise give a file (or run rehost images)")
			}
			if pinsStrict && pinsFile == "" {
				return errors.New("--pins-strict needs --pins FILE")
			}
			opts := []manifest.Option{manifest.WithFirstOccurrences()}
			if pinsFile != "" {
				pins, err := readPins(pinsFile)
				if err != nil {
					return err
				}
				opts = append(opts, manifest.WithPins(pins))
			}
			rw, err := mf.newRewriter(cmd, s, opts...)
			if err != nil {
				return err
			}
			e, err := hf.src.expand(args, s)
			if err != nil {
				return err
			}
			if outputDir != "" {
				// Its earlier output is no input; an input it would
				// replace is refused.
				if err := e.ForOutputDir(outputDir); err != nil {
					var oe *manifest.OutputDirError
					if errors.As(err, &oe) {
						return fmt.Errorf("--output-dir %s is the directory of the input %s: its output would replace the input; to rewrite files where they are, use --in-place", oe.Dir, hf.src.show(oe.Input))
					}
					return err
				}
			}
			if inPlace {
				for _, in := range e.Inputs {
					if in.Chart {
						return fmt.Errorf("--in-place: %s is a Helm chart: its templates cannot be rewritten in place; write the rendered, rewritten manifests with --output-dir DIR, or give Helm a values overlay that sets the chart's images (rehost values)", hf.src.show(in.Path))
					}
				}
			}
			hintStdin(s, args, "rewrite")
			hf.writes = true
			sts, err := openStreams(e.Inputs, &hf, rw, s)
			if err != nil {
				return err
			}
			var files output.Staged
			defer files.Abort()
			var stdout output.Spool
			defer stdout.Discard()
			switch {
			case inPlace:
				err = rewriteInPlace(rw, sts, &files)
			case outputDir != "":
				err = rewriteToDir(rw, sts, outputDir, &files)
			default:
				err = rewriteJoined(rw, sts, &stdout)
			}
			if err != nil {
				return err
			}
			if pinsFile != "" {
				if err := checkPins(s, rw.Images(), pinsFile, pinsStrict); err != nil {
					return err
				}
			}
			switch imageList {
			case "":
			case "-":
				for _, img := range rw.ToCache() {
					fmt.Fprintln(&stdout, img)
				}
			default:
				if err := writeImageList(&files, imageList, rw.ToCache()); err != nil {
					return err
				}
			}
			var copied copyReport
			if outputDir != "" && !manifestsOnly {
				// After the image list: an output rehost writes wins
				// over a copy.
				if copied, err = copyOthers(&files, outputDir, e); err != nil {
					return err
				}
			}
			if err := files.Commit(); err != nil {
				return err
			}
			if err := stdout.Commit(s.out); err != nil {
				return err
			}
			copied.report(s, outputDir)
			sum := rw.Summary()
			reportSettings(s, sum)
			reportCharts(s, rw, sum)
			reportGuessed(s, sum)
			reportOperators(s, sum)
			if mf.loaded.RewriteEmbedded {
				reportEmbedded(s, sum, "rewritten (see the warnings)", "they are left as written")
			} else {
				reportEmbedded(s, sum, "rewritten", "--rewrite-embedded rewrites them, rehost images --embedded lists them")
			}
			return nil
		},
	}
	mf.register(cmd)
	mf.registerCharts(cmd)
	hf.register(cmd)
	cmd.Flags().StringVar(&outputDir, "output-dir", "", "write one file per input file under `DIR`, at the same relative path and with the same permissions, and copy the other files of directory inputs (see --manifests-only); never through a symbolic link inside DIR")
	cmd.Flags().BoolVar(&manifestsOnly, "manifests-only", false, "with --output-dir: write the rewritten manifests only, without copying the other files of directory inputs (Kubefile, README, imageList)")
	cmd.Flags().BoolVar(&inPlace, "in-place", false, "replace the input files (atomically, keeping their mode and owner, only when every input succeeded); regular files only")
	cmd.Flags().StringVar(&imageList, "image-list", "", "also write the images to cache in the target registry (original references of the images that move; not excluded ones, not those already there), one per line, to `FILE` (\"-\": stdout, with --output-dir or --in-place)")
	cmd.Flags().StringVar(&pinsFile, "pins", "", "pin rewritten images to digests from `FILE` (SOURCE<TAB>TARGET@sha256 lines, as printed by rehost mirror --pin); an image without a line is rewritten unpinned, with a warning")
	cmd.Flags().BoolVar(&pinsStrict, "pins-strict", false, "with --pins: an image without a line in the pins file is an error (nothing is written)")
	return cmd
}

// rewriteJoined writes every stream, joined into one YAML stream, to w.
func rewriteJoined(rw *manifest.Rewriter, sts []stream, w io.Writer) error {
	j := manifest.NewJoinWriter(w)
	for _, st := range sts {
		j.Next()
		if err := rewriteStream(rw, st, j); err != nil {
			return err
		}
	}
	return nil
}

func rewriteInPlace(rw *manifest.Rewriter, sts []stream, files *output.Staged) error {
	for _, st := range sts {
		if st.path == "" {
			return fmt.Errorf("--in-place: %s is not a file", st.name)
		}
		// Before reading it: a FIFO read is gone, a device is no input.
		f, err := files.Replace(st.path)
		if err != nil {
			return fmt.Errorf("--in-place: %w", err)
		}
		if err := rewriteToFile(rw, st, f); err != nil {
			return err
		}
	}
	return nil
}

func rewriteToDir(rw *manifest.Rewriter, sts []stream, dir string, files *output.Staged) error {
	// Stage in the nearest existing ancestor: same file system, and nothing
	// new appears until Commit.
	parent := filepath.Dir(filepath.Clean(dir))
	for {
		if _, err := os.Stat(parent); err == nil || filepath.Dir(parent) == parent {
			break
		}
		parent = filepath.Dir(parent)
	}
	stage, err := os.MkdirTemp(parent, ".rehost-stage-*")
	if err != nil {
		return err
	}
	files.Dir, files.Root = stage, dir
	for _, st := range sts {
		rel := filepath.Clean(st.rel)
		if strings.HasPrefix(rel, "..") || filepath.IsAbs(rel) {
			return fmt.Errorf("%s: output path %s is outside --output-dir", st.name, st.rel)
		}
		// The output keeps the input's permissions: a 0600 Secret stays
		// private. Standard input and rendered charts give 0644.
		mode := os.FileMode(0o644)
		if st.path != "" {
			info, err := os.Stat(st.path)
			if err != nil {
				return err
			}
			mode = info.Mode().Perm()
		}
		f, err := files.Create(filepath.Join(dir, rel), mode)
		if err != nil {
			return fmt.Errorf("%s: %w", st.name, err)
		}
		if err := rewriteToFile(rw, st, f); err != nil {
			return err
		}
	}
	return nil
}

func rewriteToFile(rw *manifest.Rewriter, st stream, f *os.File) error {
	err := rewriteStream(rw, st, f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// copyReport says what copyOthers did.
type copyReport struct {
	copied []string // relative paths
	kept   []string // not copied: rehost writes an output there
}

// copyOthers stages, under dir, a copy of every file of the directory
// inputs that is not rewritten: the other files (a sealer Kubefile, a
// README) and the image lists, byte for byte and with their permissions,
// so that dir is complete. A file rehost writes an output to (the
// --image-list) is not copied over.
func copyOthers(files *output.Staged, dir string, e *manifest.Expanded) (copyReport, error) {
	var r copyReport
	var todo []manifest.Input
	for _, in := range e.Inputs {
		if in.ImageList {
			todo = append(todo, in)
		}
	}
	todo = append(todo, e.Others...)
	for _, in := range todo {
		rel := filepath.Clean(in.Rel)
		if strings.HasPrefix(rel, "..") || filepath.IsAbs(rel) {
			return r, fmt.Errorf("%s: output path %s is outside --output-dir", in.Path, in.Rel)
		}
		dest := filepath.Join(dir, rel)
		if files.Has(dest) {
			r.kept = append(r.kept, rel)
			continue
		}
		if err := copyFile(files, in.Path, dest); err != nil {
			return r, err
		}
		r.copied = append(r.copied, rel)
	}
	return r, nil
}

func copyFile(files *output.Staged, src, dest string) error {
	// Looked at before it is opened: opening a FIFO waits for a writer.
	info, err := os.Stat(src)
	if err != nil {
		return err
	}
	if !info.Mode().IsRegular() {
		return fmt.Errorf("%s is %s: --output-dir copies regular files only (--manifests-only copies none)", src, safefile.Describe(info.Mode()))
	}
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := files.Create(dest, info.Mode().Perm())
	if err != nil {
		return fmt.Errorf("%s: %w", src, err)
	}
	_, err = io.Copy(out, in)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	return err
}

// report prints one line on stderr when files were copied or kept.
func (r copyReport) report(s streams, dir string) {
	if len(r.copied)+len(r.kept) == 0 {
		return
	}
	names := r.copied
	if len(names) > 3 {
		names = append(names[:3:3], "...")
	}
	msg := fmt.Sprintf("copied %d other file(s) of the input directories unchanged into %s", len(r.copied), dir)
	if len(names) > 0 {
		msg += " (" + strings.Join(names, ", ") + ")"
	}
	if len(r.kept) > 0 {
		msg += fmt.Sprintf("; not copied, rehost writes them: %s", strings.Join(r.kept, ", "))
	}
	fmt.Fprintf(s.err, "rehost: %s; --manifests-only copies none\n", msg)
}

func writeImageList(files *output.Staged, path string, images []string) error {
	f, err := files.Create(path, 0o644)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	for _, img := range images {
		fmt.Fprintln(w, img)
	}
	err = w.Flush()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// checkPins reports, once per image, the rewritten images the pins file has
// no line for: warnings, or errors when strict.
func checkPins(s streams, images []rewrite.Image, file string, strict bool) error {
	var errs []error
	for _, img := range rewrite.Unpinned(images) {
		where := ""
		if len(img.Occurrences) > 0 {
			where = img.Occurrences[0].String() + ": "
		}
		msg := fmt.Sprintf("%s%s has no line in %s: its target %s carries no digest", where, img.Source, file, img.Target)
		if img.Count > 1 {
			msg += fmt.Sprintf(" (%d places)", img.Count)
		}
		if strict {
			errs = append(errs, errors.New(msg))
			continue
		}
		fmt.Fprintf(s.err, "rehost: warning: %s; rehost mirror --pin prints its line, --pins-strict makes this an error\n", msg)
	}
	if len(errs) > 0 {
		errs = append(errs, fmt.Errorf("--pins-strict: %d image(s) without a pin in %s; rehost mirror --dry-run --pin prints their lines", len(errs), file))
	}
	return errors.Join(errs...)
}

func readPins(file string) (rewrite.Pins, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return rewrite.ParsePins(f, file)
}
