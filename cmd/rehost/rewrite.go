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

PATH is a file, a directory (walked recursively for *.yaml, *.yml, *.json in
lexical order) or - for stdin; no PATH reads stdin, so rehost works as a Helm
post-renderer. On any error nothing is written to stdout, --output-dir or the
input files.

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
  rehost rewrite manifests/ --output-dir out/ --image-list imageList`,
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
			paths := args
			if len(paths) == 0 {
				paths = []string{"-"} // no PATH: standard input
			}
			inputs, err := hf.src.expand(paths, s)
			if err != nil {
				return err
			}
			if inPlace {
				for _, in := range inputs {
					if in.Chart {
						return fmt.Errorf("--in-place: %s is a Helm chart: its templates cannot be rewritten in place; write the rendered, rewritten manifests with --output-dir DIR, or give Helm a values overlay that sets the chart's images (rehost values)", hf.src.show(in.Path))
					}
				}
			}
			hintStdin(s, args, "rewrite")
			sts, err := openStreams(inputs, &hf, rw, s)
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
			if err := files.Commit(); err != nil {
				return err
			}
			if err := stdout.Commit(s.out); err != nil {
				return err
			}
			reportSettings(s, rw)
			reportGuessed(rw)
			reportOperators(s, rw)
			if mf.loaded.RewriteEmbedded {
				reportEmbedded(s, rw, "rewritten (see the warnings)", "they are left as written")
			} else {
				reportEmbedded(s, rw, "rewritten", "--rewrite-embedded rewrites them, rehost images --embedded lists them")
			}
			return nil
		},
	}
	mf.register(cmd)
	hf.register(cmd)
	cmd.Flags().StringVar(&outputDir, "output-dir", "", "write one file per input file under `DIR`, at the same relative path")
	cmd.Flags().BoolVar(&inPlace, "in-place", false, "replace the input files (atomically, only when every input succeeded)")
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
		info, err := os.Stat(st.path)
		if err != nil {
			return err
		}
		if err := rewriteToFile(rw, st, files, st.path, info.Mode().Perm()); err != nil {
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
		if err := rewriteToFile(rw, st, files, filepath.Join(dir, rel), 0o644); err != nil {
			return err
		}
	}
	return nil
}

func rewriteToFile(rw *manifest.Rewriter, st stream, files *output.Staged, dest string, mode os.FileMode) error {
	f, err := files.Create(dest, mode)
	if err != nil {
		return err
	}
	err = rewriteStream(rw, st, f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
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
