package main

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"

	"github.com/rehost/rehost/pkg/manifest"
	"github.com/rehost/rehost/pkg/rewrite"
	"github.com/spf13/cobra"
)

func newImagesCmd(s streams) *cobra.Command {
	var (
		mf       mappingFlags
		hf       helmFlags
		format   string
		embedded bool
	)
	cmd := &cobra.Command{
		Use:   "images [PATH ...]",
		Short: "List the original images of manifests",
		Long: `List the images to cache in the private registry: the images the given
manifests pull that move there, as they were written before any rewriting,
fully qualified, sorted and unique: a sealer imageList file. Images left where
they are (--exclude) and images already in the target registry are not listed
in text form; -o json lists every image found, with its action.

Output formats (-o):
  text     the images to cache, one per line, docker.io/library/nginx:1.25 (":latest" made explicit)
  json     every image found: source, target, action (rewritten, excluded, in-target) and every place it occurs
  mapping  "source<TAB>target" lines for the images that move, for copy loops

Images of hand-kept image lists (sealer's imageList files: one reference a
line, "#" comments) are listed too: files named imageList in input directories,
and --images-from FILE (in -o json their occurrences have "origin": "imageList").
Operators that start images no manifest names (the tigera operator, Istio,
Kiali, ...) get a warning unless an image list is given.

Image references embedded in strings are always found. Those whose flag or env
var name says image (--acme-http01-solver-image=quay.io/..., *_IMAGE and
RELATED_IMAGE_* env values, --prometheus-config-reloader=) are listed by default
(in -o json their occurrences have "embedded": true and "named": true;
--no-named-embedded leaves them out). The others, in free text (ConfigMap data,
annotations, other args), are listed with --embedded, after the images of image
fields; without it, one line on stderr says how many were found and not listed.

In custom resources of kinds rehost has no entries for (not built-in
Kubernetes kinds, not the built-in operator table, not --config imageFields),
the values of keys named image or *Image (baseImage, sidecarImage,
SIDECAR_IMAGE) that are image references are listed too, as sealer lists
them: in -o json their occurrences have "guessed": true, and one warning on
stderr names their kinds and fields. Values that are not image references
there ("auto", "<YOUR-IMAGE>", a template, a name without registry, tag or
digest outside a container) are skipped with a warning each.
--no-guess-images (config noGuessImages: true) leaves all of them out.

PATH is as for "rehost rewrite".`,
		Example: `  # The image list of a directory, for sealer.
  rehost images manifests/ > imageList

  # A sealer app: manifests, the operator's Installation and a hand-kept imageList.
  rehost images calico-app/

  # Where images were found by key name only (rook CephCluster, Percona
  # PerconaXtraDBCluster, ...): the occurrences marked guessed.
  rehost images -o json manifests/ | jq '.[] | select(any(.occurrences[]; .guessed))'

  # Only the images of known fields.
  rehost images --no-guess-images manifests/

  # Copy every image into the private registry.
  rehost images -o mapping manifests/ | while IFS=$'\t' read -r src dst; do crane copy "$src" "$dst"; done`,
		RunE: func(cmd *cobra.Command, args []string) error {
			defer hf.src.cleanup()
			switch format {
			case "text", "json", "mapping":
			default:
				return fmt.Errorf("-o %s: want text, json or mapping", format)
			}
			var opts []manifest.Option
			if embedded {
				opts = append(opts, manifest.ListEmbedded())
			}
			if format != "json" { // only -o json reports every place
				opts = append(opts, manifest.WithFirstOccurrences())
			}
			rw, err := mf.newRewriter(cmd, s, opts...)
			if err != nil {
				return err
			}
			var sts []stream
			if len(args) > 0 || len(mf.imagesFrom) == 0 { // no PATH: stdin, unless only lists are given
				hintStdin(s, args, "images")
				if sts, err = openPaths(args, &hf, rw, s); err != nil {
					return err
				}
			}
			if err := readImages(rw, sts); err != nil {
				return err
			}
			if err := printImages(s.out, format, embeddedLast(rw.Images())); err != nil {
				return err
			}
			reportEmbedded(s, rw, "listed", "--embedded lists them")
			reportGuessed(rw)
			reportOperators(s, rw)
			return nil
		},
	}
	mf.register(cmd)
	hf.register(cmd)
	cmd.Flags().StringVarP(&format, "output", "o", "text", "output format: text, json or mapping")
	cmd.Flags().BoolVar(&embedded, "embedded", false, "also list the image references embedded in free text (ConfigMap data, annotations, other args), after the others")
	return cmd
}

func printImages(w io.Writer, format string, images []rewrite.Image) error {
	switch format {
	case "json":
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		if images == nil {
			images = []rewrite.Image{}
		}
		return enc.Encode(images)
	case "mapping":
		for _, img := range images {
			if img.Action == rewrite.Rewritten {
				if _, err := fmt.Fprintf(w, "%s\t%s\n", img.Source, img.Target); err != nil {
					return err
				}
			}
		}
	default:
		for _, img := range images {
			if img.Action != rewrite.Rewritten {
				continue // not to cache: excluded, or in the target already
			}
			if _, err := fmt.Fprintln(w, img.Source); err != nil {
				return err
			}
		}
	}
	return nil
}

// embeddedLast moves the images found only as embedded references after
// the others, keeping each group sorted.
func embeddedLast(images []rewrite.Image) []rewrite.Image {
	onlyEmbedded := func(img rewrite.Image) bool {
		for _, l := range img.Occurrences {
			if !l.Embedded {
				return false
			}
		}
		return true
	}
	sort.SliceStable(images, func(i, j int) bool { return !onlyEmbedded(images[i]) && onlyEmbedded(images[j]) })
	return images
}
