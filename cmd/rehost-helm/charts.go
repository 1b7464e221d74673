package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/rehost/rehost/internal/bytesize"
	"github.com/rehost/rehost/pkg/helm"
	"github.com/rehost/rehost/pkg/rendered"
	"github.com/rehost/rehost/pkg/rewrite"
	"github.com/spf13/cobra"
	"helm.sh/helm/v3/pkg/cli"
)

// pullCmd fetches a chart reference into a directory and prints the chart
// file as JSON (rendered.ChartFile).
func pullCmd(stdout io.Writer) *cobra.Command {
	var (
		o    helm.PullOptions
		dest string
		ff   fetchFlags
	)
	cmd := &cobra.Command{
		Use:   "pull [flags] --dest DIR REF",
		Short: "Fetch a chart reference (oci://…, NAME with --repo, REPO/NAME) into DIR, as JSON, for rehost",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if dest == "" {
				return fmt.Errorf("--dest is required")
			}
			if err := ff.check(); err != nil {
				return err
			}
			o.PlainHTTP, o.Settings, o.SourceMirrors = ff.plainHTTP, ff.settings, ff.mirrors
			o.MaxChartSize, o.MaxIndexSize, o.StallTimeout = ff.maxChartSize, ff.maxIndexSize, ff.stallTimeout
			ctx, stop := interruptible()
			defer stop()
			p, err := helm.PullContext(ctx, args[0], dest, o)
			if err != nil {
				return pullError(err)
			}
			return json.NewEncoder(stdout).Encode(rendered.ChartFile{
				Format: rendered.ChartFileFormat, Name: p.Name, Version: p.Version,
				Path: p.Path, Provenance: p.Provenance, URL: p.URL,
			})
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&dest, "dest", "", "directory to write the chart into")
	fs.StringVar(&o.Version, "version", "", "chart version or SemVer constraint (default: the latest)")
	fs.StringVar(&o.RepoURL, "repo", "", "chart repository URL; REF is then the chart's name")
	ff.register(cmd, "use the user's Helm configuration and cache instead of private empty ones",
		"read oci:// references and repository URLs under PREFIX=MIRROR from MIRROR (repeatable)",
		"refuse a chart whose downloads (the packaged chart and its provenance file, or an OCI chart's manifest and blobs) are larger than this, together")
	return cmd
}

// dependenciesCmd fetches the dependencies a chart misses from its charts/
// directory into a copy of it under --dest, and prints the chart to render
// as JSON (rendered.Dependencies).
func dependenciesCmd(stdout io.Writer) *cobra.Command {
	var (
		o    helm.DependencyOptions
		dest string
		ff   fetchFlags
	)
	cmd := &cobra.Command{
		Use:   "dependencies [flags] --dest DIR CHART",
		Short: "Fetch the dependencies missing from a chart's charts/ into a copy of it under DIR, as JSON, for rehost",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if dest == "" {
				return fmt.Errorf("--dest is required")
			}
			if err := ff.check(); err != nil {
				return err
			}
			o.PlainHTTP, o.Settings, o.SourceMirrors = ff.plainHTTP, ff.settings, ff.mirrors
			o.MaxChartSize, o.MaxIndexSize, o.StallTimeout = ff.maxChartSize, ff.maxIndexSize, ff.stallTimeout
			if err := os.MkdirAll(dest, 0o700); err != nil {
				return err
			}
			ctx, stop := interruptible()
			defer stop()
			path, fetched, err := helm.FetchDependencies(ctx, args[0], dest, o)
			if err != nil {
				return pullError(err)
			}
			out := rendered.Dependencies{Format: rendered.DependenciesFormat, Path: path}
			for _, f := range fetched {
				out.Fetched = append(out.Fetched, rendered.Dependency{
					Name: f.Name, Version: f.Version, Repository: f.Repository, From: f.From, Locked: f.Locked, Fetched: f.Fetched,
				})
			}
			return json.NewEncoder(stdout).Encode(out)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&dest, "dest", "", "directory to write the chart's copy into")
	ff.register(cmd, "use the user's Helm configuration (repositories file, registry logins) instead of private empty ones",
		"read the repositories under PREFIX=MIRROR from MIRROR (repeatable)",
		"refuse a dependency whose downloads are larger than this, together")
	return cmd
}

// fetchFlags are the flags of the commands that download charts (pull,
// dependencies): the Helm environment, source mirrors and download
// limits.
type fetchFlags struct {
	plainHTTP, userConfig bool
	mirrorValues          []string
	maxChartSize          int64
	maxIndexSize          int64
	stallTimeout          time.Duration

	// Set by check.
	settings *cli.EnvSettings
	mirrors  *rewrite.SourceMirrors
}

// register adds the flags to cmd, with the help of those whose meaning
// differs between the commands.
func (f *fetchFlags) register(cmd *cobra.Command, userConfigHelp, mirrorHelp, chartSizeHelp string) {
	fs := cmd.Flags()
	fs.BoolVar(&f.plainHTTP, "plain-http", false, "reach OCI registries over plain HTTP")
	fs.BoolVar(&f.userConfig, "helm-user-config", false, userConfigHelp)
	fs.StringArrayVar(&f.mirrorValues, "source-mirror", nil, mirrorHelp)
	f.maxChartSize, f.maxIndexSize = helm.DefaultMaxChartSize, helm.DefaultMaxIndexSize
	fs.Var(bytesize.Value{N: &f.maxChartSize}, "max-chart-size", chartSizeHelp)
	fs.Var(bytesize.Value{N: &f.maxIndexSize}, "max-index-size", "refuse a chart repository index (index.yaml) larger than this")
	fs.DurationVar(&f.stallTimeout, "stall-timeout", helm.DefaultStallTimeout, "give up on a download that moves less than 1 KiB/s over this long (waiting for an answer included)")
}

// check validates the flags and sets settings and mirrors.
func (f *fetchFlags) check() error {
	if f.stallTimeout <= 0 {
		return fmt.Errorf("--stall-timeout %s: want a positive duration, like 2m", f.stallTimeout)
	}
	if f.userConfig {
		f.settings = cli.New()
	}
	sm, err := sourceMirrors(f.mirrorValues)
	if err != nil {
		return err
	}
	f.mirrors = sm
	return nil
}

// sourceMirrors reads the --source-mirror values.
func sourceMirrors(values []string) (*rewrite.SourceMirrors, error) {
	var ms []rewrite.SourceMirror
	for _, v := range values {
		m, err := rewrite.ParseSourceMirror(v)
		if err != nil {
			return nil, fmt.Errorf("--source-mirror %s: %w", v, err)
		}
		ms = append(ms, m)
	}
	sm, err := rewrite.NewSourceMirrors(ms)
	if err != nil {
		return nil, fmt.Errorf("--source-mirror: %w", err)
	}
	return sm, nil
}

// pullError adds to a refused download the flag that sets its limit.
func pullError(err error) error {
	var tooLarge *helm.TooLargeError
	switch {
	case errors.As(err, &tooLarge) && tooLarge.Index:
		return fmt.Errorf("%w (--max-index-size)", err)
	case errors.As(err, &tooLarge):
		return fmt.Errorf("%w (--max-chart-size)", err)
	case errors.Is(err, helm.ErrStalled):
		return fmt.Errorf("%w (--stall-timeout)", err)
	}
	return err
}

// packageCmd packages a chart reproducibly and prints the chart file as
// JSON (rendered.ChartFile).
func packageCmd(stdout io.Writer) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "package --output FILE.tgz CHART",
		Short: "Package a chart reproducibly, as JSON, for rehost",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if output == "" {
				return fmt.Errorf("--output is required")
			}
			ch, err := helm.Package(args[0], output)
			if err != nil {
				return err
			}
			return json.NewEncoder(stdout).Encode(rendered.ChartFile{
				Format: rendered.ChartFileFormat, Name: ch.Name(), Version: ch.Metadata.Version, Path: output,
			})
		},
	}
	cmd.Flags().StringVar(&output, "output", "", "the packaged chart to write (FILE.tgz)")
	return cmd
}

// interruptible is a context that SIGINT and SIGTERM cancel, so that a
// download ends and its temporary directories are removed before the
// process exits; the first signal also restores the default handling, so
// that a second one kills the process the default way.
func interruptible() (context.Context, context.CancelFunc) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		<-ctx.Done()
		stop()
	}()
	return ctx, stop
}
