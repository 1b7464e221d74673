// Command rehost-helm renders one Helm chart offline, as `helm template`
// does, and prints it as JSON on standard output for the rehost command:
// the rendered documents with the template each came from, in `helm
// template` order with hooks, and the images the chart's helm.sh/images
// annotations declare (the JSON form of rendered.Chart). With
// REHOST_HELM_DRAFT=1 in its environment it writes before it the
// documents of the chart's templates as soon as they are rendered
// (rendered.Draft), for rehost to work on them while Helm sorts them,
// and the chart after it without the contents the draft holds.
//
// It is rehost's helper, not a user command: rehost runs it to render the
// charts it is given, so that rehost itself does not link Helm and starts
// fast. It takes rehost's chart rendering flags:
//
//	rehost-helm [-f FILE]... [--set K=V]... [--set-string K=V]... [--set-file K=PATH]...
//	            [--release-name NAME] [-n NAMESPACE] [--kube-version V]
//	            [--api-versions V]... [--include-crds=false] [--skip-tests] CHART
//
// Its subcommands values and relocate compute a chart's air-gap values
// overlay (and write the relocated chart) for rehost values and rehost
// relocate, and print the report as JSON (rendered.Airgap); they take the
// same flags and --rewrite-config JSON (and relocate --output).
//
// Its subcommand pull fetches a chart reference (oci://host/path/name,
// NAME with --repo URL, REPO/NAME) into --dest with Helm's getters and
// private Helm directories (--helm-user-config: the user's), and package
// packages a chart directory reproducibly into --output; both print the
// chart file as JSON (rendered.ChartFile). Its subcommand dependencies
// fetches the dependencies a chart misses from its charts/ directory into
// a copy of it (helm.FetchDependencies) and prints the chart to render as
// JSON (rendered.Dependencies). Its subcommand version prints
// its version and commit.
//
// Errors go to standard error; the exit code is 1 on any error.
package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime/debug"

	"github.com/rehost/rehost/pkg/helm"
	"github.com/rehost/rehost/pkg/rendered"
	"github.com/spf13/cobra"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run executes the command line and returns the exit code.
func run(args []string, stdout, stderr io.Writer) int {
	var (
		opts        helm.Options
		includeCRDs bool
	)
	cmd := &cobra.Command{
		Use:           "rehost-helm [flags] CHART",
		Short:         "Render a Helm chart offline to JSON, for rehost",
		Args:          cobra.ExactArgs(1),
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.SkipCRDs = !includeCRDs
			tuneGC()
			var draft *rendered.Draft
			if os.Getenv(rendered.DraftEnv) == "1" {
				// rehost works on the draft while Helm sorts.
				opts.Draft = func(d *rendered.Draft) {
					draft = d
					d.Write(stdout) // an error writes no chart after it either
				}
			}
			c, err := helm.Render(args[0], opts)
			if err != nil {
				return err
			}
			if draft != nil {
				c.LeaveOutDrafted(draft) // rehost has them
			}
			return json.NewEncoder(stdout).Encode(c)
		},
	}
	renderFlags(cmd.Flags(), &opts, &includeCRDs)
	cmd.AddCommand(airgapCmd("values", stdout), airgapCmd("relocate", stdout), pullCmd(stdout), dependenciesCmd(stdout), packageCmd(stdout), versionCmd(stdout))
	cmd.SetArgs(args)
	cmd.SetOut(stderr)
	cmd.SetErr(stderr)
	if err := cmd.Execute(); err != nil {
		if errors.Is(err, helm.ErrKubeVersion) {
			err = fmt.Errorf("%w (--kube-version, default %s): give the cluster's version with --kube-version VERSION", err, helm.DefaultKubeVersion)
		}
		fmt.Fprintf(stderr, "rehost-helm: %v\n", err)
		writeFailure(stdout, err)
		return 1
	}
	return 0
}

// tuneGC fits the garbage collector to rendering a chart, which holds
// the whole chart and its output and allocates several times their size
// while Helm parses each document to sort it: GOGC=400 instead of 100
// takes 12 to 19% off the CPU time of rendering 20,000 Pods, for 170 MB
// of peak memory instead of 104 MB, and a soft limit of 1 GiB keeps a
// huge chart's heap from growing to five times its live size. The cost
// falls on a chart whose live heap comes near 1 GiB: its collector runs
// more often than Go's default would make it, up to Go's cap of half the
// CPU time. GOGC and GOMEMLIMIT, when set, win. Only rendering: pull
// keeps Go's defaults (its peak memory is measured by the hostile-server
// tests).
func tuneGC() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(1 << 30)
	}
}

// writeFailure writes the facts of a failure (rendered.Failure) on
// standard output, for rehost to word without matching the message: a
// registry that answered HTTPS in plain HTTP (rehost suggests
// --plain-http).
func writeFailure(stdout io.Writer, err error) {
	f := rendered.Failure{Format: rendered.FailureFormat, PlainHTTP: errors.Is(err, http.ErrSchemeMismatch)}
	if f.PlainHTTP {
		json.NewEncoder(stdout).Encode(f)
	}
}
