package main

import (
	"fmt"
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
	// loaded is the config newRewriter built the Rewriter from.
	loaded rewrite.Config
}

func (f *mappingFlags) register(cmd *cobra.Command) {
	fs := cmd.Flags()
	fs.StringVar(&f.config, "config", "", "RewriteConfig file (flags override its fields)")
	fs.StringVar(&f.registry, "registry", rewrite.DefaultRegistry, "target registry, host[:port] or host[:port]/prefix")
	fs.StringArrayVar(&f.exclude, "exclude", nil, "registry host or repository prefix to leave as written (repeatable)")
	fs.StringVar(&f.pathStyle, "path-style", string(rewrite.PathStyleStrip), "target layout: strip (drop the source host) or nest (keep it as the first path component)")
	fs.BoolVar(&f.skipInvalid, "skip-invalid", false, "warn about invalid image references and leave them as written instead of failing")
	fs.BoolVar(&f.rewriteEmbedded, "rewrite-embedded", false, "also rewrite (and list) the image references embedded in args, command, env values, ConfigMap data and annotations")
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
	return c, c.Validate()
}

// newRewriter builds the Rewriter for a command, printing warnings on
// stderr.
func (f *mappingFlags) newRewriter(cmd *cobra.Command, s streams, opts ...manifest.Option) (*manifest.Rewriter, error) {
	c, err := f.load(cmd)
	if err != nil {
		return nil, err
	}
	f.loaded = c
	return manifest.New(c, append([]manifest.Option{manifest.WithWarnings(func(err error) {
		fmt.Fprintf(s.err, "rehost: warning: %v\n", err)
	})}, opts...)...)
}

// reportEmbedded prints one line on stderr when embedded image references
// were found and left out (not listed, or not rewritten), so that none is
// missed silently.
func reportEmbedded(s streams, rw *manifest.Rewriter, what, hint string) {
	left := rw.EmbeddedLeftOut()
	if len(left) == 0 {
		return
	}
	n := 0
	for _, img := range left {
		n += img.Count
	}
	fmt.Fprintf(s.err, "rehost: %d image reference(s) embedded in args, env values, ConfigMap data or annotations (%d image(s)) found and not %s; %s\n", n, len(left), what, hint)
}
