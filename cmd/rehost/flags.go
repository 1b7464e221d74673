package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/rehost/rehost/pkg/manifest"
	"github.com/rehost/rehost/pkg/rewrite"
	"github.com/spf13/cobra"
)

// mappingFlags are the flags every command that maps images shares.
type mappingFlags struct {
	config      string
	registry    string
	exclude     []string
	pathStyle   string
	skipInvalid bool
	// rewriteEmbedded: --rewrite-embedded (config rewriteEmbedded).
	rewriteEmbedded bool
	// noAddRegistry: --no-add-registry (config noAddRegistry).
	noAddRegistry bool
	// noNamedEmbedded: --no-named-embedded (config noNamedEmbedded).
	noNamedEmbedded bool
	// noGuessImages: --no-guess-images (config noGuessImages).
	noGuessImages bool
	// imagesFrom: --images-from, hand-kept image lists to read.
	imagesFrom []string
	// charts: --charts-path and --no-chart-sources (config chartsPath,
	// noChartSources) are registered (registerCharts).
	charts         bool
	chartsPath     string
	noChartSources bool
	// loaded is the config newRewriter built the Rewriter from.
	loaded rewrite.Config
}

func (f *mappingFlags) register(cmd *cobra.Command) {
	f.registerMapping(cmd)
	fs := cmd.Flags()
	fs.BoolVar(&f.skipInvalid, "skip-invalid", false, "warn about invalid image references and leave them as written instead of failing")
	fs.BoolVar(&f.rewriteEmbedded, "rewrite-embedded", false, "also rewrite (and list) the image references embedded in free text: ConfigMap data, annotations, other args and command words (the named ones, --*-image= and *_IMAGE, are by default)")
	fs.BoolVar(&f.noNamedEmbedded, "no-named-embedded", false, "leave image references in image-named flags and env vars (--*-image=, *_IMAGE) as written and unlisted, like other embedded references")
	fs.BoolVar(&f.noGuessImages, "no-guess-images", false, "leave as written and unlisted the images found in custom resources of unknown kinds by their key's name (image, baseImage, sidecarImage, ...; listed and rewritten by default, marked \"guessed\")")
	fs.BoolVar(&f.noAddRegistry, "no-add-registry", false, "do not add absent registry settings of operators (tigera Installation spec.registry); report them")
	fs.StringArrayVar(&f.imagesFrom, "images-from", nil, "also take the images of this hand-kept image list `FILE` (one reference a line, # comments; - for stdin; repeatable); files named imageList in input directories are read without it")
}

// registerCharts registers the flags of GitOps chart sources, for the
// commands that rewrite or list them.
func (f *mappingFlags) registerCharts(cmd *cobra.Command) {
	f.charts = true
	fs := cmd.Flags()
	fs.StringVar(&f.chartsPath, "charts-path", rewrite.DefaultChartsPath, "repository `PATH` of the charts below the target registry and its prefix, where rehost mirror pushes them: Flux and Argo CD chart sources are rewritten to <registry>/PATH")
	fs.BoolVar(&f.noChartSources, "no-chart-sources", false, "leave the chart sources of Flux (HelmRepository, OCIRepository) and Argo CD (Application, ApplicationSet) objects as written and unlisted")
}

// registerMapping registers the flags of the mapping alone (config,
// registry, exclusions, path style): for commands that map images but read
// no manifests (rehost policy).
func (f *mappingFlags) registerMapping(cmd *cobra.Command) {
	fs := cmd.Flags()
	fs.StringVar(&f.config, "config", "", "RewriteConfig file (flags override its fields)")
	fs.StringVar(&f.registry, "registry", rewrite.DefaultRegistry, "target registry, host[:port] or host[:port]/prefix")
	fs.StringArrayVar(&f.exclude, "exclude", nil, "registry host or repository prefix to leave as written (repeatable)")
	fs.StringVar(&f.pathStyle, "path-style", string(rewrite.PathStyleStrip), "target layout: strip (drop the source host) or nest (keep it as the first path component)")
}

// load reads the config file, if any, and applies the flags the user set.
func (f *mappingFlags) load(cmd *cobra.Command) (rewrite.Config, error) {
	var c rewrite.Config
	if f.config != "" {
		data, err := os.ReadFile(f.config)
		if err != nil {
			return c, err
		}
		if c, err = rewrite.LoadConfig(data); err != nil {
			return c, fmt.Errorf("%s: %w", f.config, err)
		}
	}
	fs := cmd.Flags()
	if fs.Changed("registry") && f.registry == "" {
		return c, fmt.Errorf("--registry: %w", rewrite.ErrEmptyRegistry)
	}
	if fs.Changed("registry") || c.Registry == "" {
		c.Registry = f.registry
	}
	if fs.Changed("path-style") || c.PathStyle == "" {
		c.PathStyle = rewrite.PathStyle(f.pathStyle)
	}
	c.Exclude = append(c.Exclude, f.exclude...)
	if fs.Changed("skip-invalid") {
		c.SkipInvalid = f.skipInvalid
	}
	if fs.Changed("rewrite-embedded") {
		c.RewriteEmbedded = f.rewriteEmbedded
	}
	if fs.Changed("no-named-embedded") {
		c.NoNamedEmbedded = f.noNamedEmbedded
	}
	if fs.Changed("no-guess-images") {
		c.NoGuessImages = f.noGuessImages
	}
	if fs.Changed("no-add-registry") {
		c.NoAddRegistry = f.noAddRegistry
	}
	if f.charts && fs.Changed("charts-path") {
		if f.chartsPath == "" {
			return c, fmt.Errorf("--charts-path: empty: give a repository path, like %s", rewrite.DefaultChartsPath)
		}
		c.ChartsPath = f.chartsPath
	}
	if f.charts && fs.Changed("no-chart-sources") {
		c.NoChartSources = f.noChartSources
	}
	if err := c.Validate(); err != nil {
		var ce *rewrite.ConfigError
		if errors.As(err, &ce) && ce.Field == "chartsPath" && fs.Changed("charts-path") {
			return c, fmt.Errorf("--charts-path: %s", ce.Reason)
		}
		if errors.As(err, &ce) && ce.Field == "registry" && fs.Changed("registry") {
			return c, fmt.Errorf("--registry: %s", ce.Reason)
		}
		return c, err
	}
	return c, nil
}

// newRewriter builds the Rewriter for a command, printing warnings on
// stderr.
func (f *mappingFlags) newRewriter(cmd *cobra.Command, s streams, opts ...manifest.Option) (*manifest.Rewriter, error) {
	c, err := f.load(cmd)
	if err != nil {
		return nil, err
	}
	f.loaded = c
	rw, err := manifest.New(c, append([]manifest.Option{manifest.WithWarnings(func(err error) {
		fmt.Fprintf(s.err, "rehost: warning: %v\n", err)
	})}, opts...)...)
	if err != nil {
		return nil, err
	}
	return rw, readImageLists(rw, f.imagesFrom, s.in)
}

// The report* functions word the run's findings (manifest.Summary, the
// same facts pkg/app and pkg/krmfn report) on stderr.

// reportEmbedded prints one line on stderr when embedded image references
// were found and left out (not listed, or not rewritten), so that none is
// missed silently.
func reportEmbedded(s streams, sum manifest.Summary, what, hint string) {
	if msg := manifest.EmbeddedSummary(sum.EmbeddedLeftOut, what, hint); msg != "" {
		fmt.Fprintf(s.err, "rehost: %s\n", msg)
	}
}

// reportGuessed sums up the images found by key name in custom resources
// in one warning (Summary.Guessed), with where they are told apart and the
// flag that leaves them as written.
func reportGuessed(s streams, sum manifest.Summary) {
	if sum.Guessed != nil {
		fmt.Fprintf(s.err, "rehost: warning: %v (\"guessed\": true in rehost images -o json); --no-guess-images (noGuessImages: true) leaves them as written, imageFields makes them known\n", sum.Guessed)
	}
}

// reportOperators warns about the operators that start images no manifest
// names (none when an image list was read): one line per operator, with
// the image list that answers it.
func reportOperators(s streams, sum manifest.Summary) {
	for _, n := range sum.Operators {
		fmt.Fprintf(s.err, "rehost: warning: %s: list them in an imageList file beside the manifests (or pass one with --images-from) so that they are mirrored\n", n.Message())
	}
}

// reportSettings prints one line per registry setting rehost added, with
// the flag that leaves it out.
func reportSettings(s streams, sum manifest.Summary) {
	for _, st := range sum.Settings {
		if msg := st.Message(); msg != "" {
			fmt.Fprintf(s.err, "rehost: %s (--no-add-registry, noAddRegistry: true, leaves it out)\n", msg)
		}
	}
}

// reportCharts prints one line when GitOps chart sources were rewritten,
// with the flag that leaves them as written.
func reportCharts(s streams, rw *manifest.Rewriter, sum manifest.Summary) {
	if msg := manifest.ChartsSummary(sum.Charts, rw.Mapper().ChartsRepository()); msg != "" {
		fmt.Fprintf(s.err, "rehost: %s (noChartSources: true, --no-chart-sources, leaves the sources as written)\n", msg)
	}
}

// readImageLists reads the --images-from files into rw ("-" is stdin).
func readImageLists(rw *manifest.Rewriter, files []string, stdin io.Reader) error {
	for _, f := range files {
		if err := readImageList(rw, f, stdin); err != nil {
			return err
		}
	}
	return nil
}
