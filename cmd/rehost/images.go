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
in text form; -o json lists every image found, with its action, and the chart
sources of GitOps objects.

Output formats (-o):
  text     the images to cache, one per line, docker.io/library/nginx:1.25 (":latest" made explicit)
  json     an object: "images", every image found: source, target, action (rewritten, excluded,
           in-target) and every place it occurs; "charts", every chart source of Flux and Argo CD
           objects: source URL, target, action and every place (with the chart's name and version
           where the object names them)
  mapping  "source<TAB>target" lines for the images that move, for copy loops

Chart sources are the repositories from which Flux and Argo CD pull Helm charts
(Flux HelmRepository and chart OCIRepository URLs, Argo CD sources with a
chart): they are not images, so text and mapping output leave them out, with
one line on stderr when some move (see rehost rewrite, docs/gitops.md).

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
  rehost images -o json manifests/ | jq '.images[] | select(any(.occurrences[]; .guessed))'

  # The chart repositories Flux and Argo CD objects pull from, and where to.
  rehost images -o json clusters/prod/ | jq -r '.charts[] | "\(.source)\t\(.target)"'

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
			if err := printImages(s.out, format, embeddedLast(rw.Images()), rw.Charts()); err != nil {
				return err
			}
			sum := rw.Summary()
			if format != "json" {
				reportChartsFound(s, sum.Charts)
			}
			reportEmbedded(s, sum, "listed", "--embedded lists them")
			reportGuessed(s, sum)
			reportOperators(s, sum)
			return nil
		},
	}
	mf.register(cmd)
	mf.registerCharts(cmd)
	hf.register(cmd)
	cmd.Flags().StringVarP(&format, "output", "o", "text", "output format: text, json or mapping")
	cmd.Flags().BoolVar(&embedded, "embedded", false, "also list the image references embedded in free text (ConfigMap data, annotations, other args), after the others")
	return cmd
}

// imagesJSON is the document rehost images -o json prints.
type imagesJSON struct {
	Images []rewrite.Image        `json:"images"`
	Charts []manifest.ChartSource `json:"charts"`
}

func printImages(w io.Writer, format string, images []rewrite.Image, charts []manifest.ChartSource) error {
	switch format {
	case "json":
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		doc := imagesJSON{Images: images, Charts: charts}
		if doc.Images == nil {
			doc.Images = []rewrite.Image{}
		}
		if doc.Charts == nil {
			doc.Charts = []manifest.ChartSource{}
		}
		return enc.Encode(doc)
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

// reportChartsFound prints one line when chart sources that move were
// found: text and mapping output list images only.
func reportChartsFound(s streams, charts []manifest.ChartSource) {
	n := 0
	for _, c := range charts {
		if c.Action == rewrite.Rewritten {
			n += c.Count
		}
	}
	if n > 0 {
		fmt.Fprintf(s.err, "rehost: %d GitOps chart source(s) found outside the target registry, not listed here: the cluster pulls Helm charts from them; rehost images -o json lists them under \"charts\"\n", n)
	}
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
