package main

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/rehost/rehost/pkg/manifest"
	"github.com/rehost/rehost/pkg/rewrite"
	"github.com/spf13/cobra"
)

func newImagesCmd(s streams) *cobra.Command {
	var (
		mf     mappingFlags
		hf     helmFlags
		format string
	)
	cmd := &cobra.Command{
		Use:   "images [PATH ...]",
		Short: "List the original images of manifests",
		Long: `List the images that the given manifests pull, as they were written before any
rewriting, fully qualified, sorted and unique: a sealer imageList file.

Output formats (-o):
  text     one image per line, docker.io/library/nginx:1.25 (":latest" made explicit)
  json     objects with source, target, action and every place it occurs
  mapping  "source<TAB>target" lines for the images that move, for copy loops

PATH is as for "rehost rewrite".`,
		Example: `  # The image list of a directory, for sealer.
  rehost images manifests/ > imageList

  # Copy every image into the private registry.
  rehost images -o mapping manifests/ | while IFS=$'\t' read -r src dst; do crane copy "$src" "$dst"; done`,
		RunE: func(cmd *cobra.Command, args []string) error {
			switch format {
			case "text", "json", "mapping":
			default:
				return fmt.Errorf("-o %s: want text, json or mapping", format)
			}
			rw, err := mf.newRewriter(cmd, s)
			if err != nil {
				return err
			}
			inputs, err := manifest.ExpandPaths(args)
			if err != nil {
				return err
			}
			sts, err := openStreams(inputs, &hf, rw, s)
			if err != nil {
				return err
			}
			for _, st := range sts {
				if err := rewriteStream(rw, st, nil); err != nil {
					return err
				}
			}
			return printImages(s.out, format, rw.Images())
		},
	}
	mf.register(cmd)
	hf.register(cmd)
	cmd.Flags().StringVarP(&format, "output", "o", "text", "output format: text, json or mapping")
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
			if _, err := fmt.Fprintln(w, img.Source); err != nil {
				return err
			}
		}
	}
	return nil
}
