package main

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/rehost/rehost/pkg/helm"
	"github.com/rehost/rehost/pkg/rendered"
	"github.com/rehost/rehost/pkg/rewrite"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// renderFlags registers the chart rendering flags on a subcommand.
func renderFlags(fs *pflag.FlagSet, opts *helm.Options, includeCRDs *bool) {
	fs.StringSliceVarP(&opts.Values.ValueFiles, "values", "f", nil, "values YAML file (repeatable)")
	fs.StringArrayVar(&opts.Values.Values, "set", nil, "set values, key1=val1,key2=val2 (repeatable)")
	fs.StringArrayVar(&opts.Values.StringValues, "set-string", nil, "set STRING values (repeatable)")
	fs.StringArrayVar(&opts.Values.FileValues, "set-file", nil, "set values from files, key=path (repeatable)")
	fs.StringVar(&opts.ReleaseName, "release-name", helm.DefaultReleaseName, "release name")
	fs.StringVarP(&opts.Namespace, "namespace", "n", helm.DefaultNamespace, "release namespace")
	fs.StringVar(&opts.KubeVersion, "kube-version", helm.DefaultKubeVersion, "Kubernetes version for Capabilities.KubeVersion and the charts' kubeVersion checks")
	fs.StringSliceVar(&opts.APIVersions, "api-versions", nil, "Kubernetes API versions for Capabilities.APIVersions (repeatable)")
	fs.BoolVar(includeCRDs, "include-crds", true, "include the CRDs of crds/ directories")
	fs.BoolVar(&opts.SkipTests, "skip-tests", false, "leave out test hooks")
}

// airgapCmd is the values or relocate subcommand: it computes the overlay
// (and, with relocate, writes the relocated chart) and prints the report as
// JSON (rendered.Airgap).
func airgapCmd(name string, stdout io.Writer) *cobra.Command {
	var (
		opts        helm.Options
		includeCRDs bool
		config      string
		output      string
	)
	cmd := &cobra.Command{
		Use:   name + " [flags] CHART",
		Short: "Compute the air-gap values overlay of a chart, as JSON, for rehost " + name,
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.SkipCRDs = !includeCRDs
			var cfg rewrite.Config
			if config != "" {
				if err := json.Unmarshal([]byte(config), &cfg); err != nil {
					return fmt.Errorf("--rewrite-config: %w", err)
				}
			}
			if err := cfg.Validate(); err != nil {
				return err
			}
			var (
				o   *helm.Overlay
				rel *helm.Relocated
				err error
			)
			if name == "relocate" {
				if output == "" {
					return fmt.Errorf("--output is required")
				}
				rel, err = helm.Relocate(args[0], output, opts, cfg)
				if rel != nil {
					o = rel.Overlay
				}
			} else {
				o, err = helm.AirgapValues(args[0], opts, cfg)
			}
			if err != nil {
				return err
			}
			r, err := report(o)
			if err != nil {
				return err
			}
			if rel != nil {
				r.Output, r.Edited = rel.Output, rel.Edited
			}
			return json.NewEncoder(stdout).Encode(r)
		},
	}
	renderFlags(cmd.Flags(), &opts, &includeCRDs)
	cmd.Flags().StringVar(&config, "rewrite-config", "", "the mapping (rewrite.Config) as JSON")
	if name == "relocate" {
		cmd.Flags().StringVar(&output, "output", "", "write the relocated chart to DIR or FILE.tgz")
	}
	return cmd
}

func report(o *helm.Overlay) (*rendered.Airgap, error) {
	b, err := o.Bytes()
	if err != nil {
		return nil, err
	}
	r := &rendered.Airgap{Format: rendered.AirgapFormat, Chart: o.Chart, Version: o.Version, Overlay: string(b), Warnings: o.Warnings, Candidates: o.Candidates, Renders: o.Renders}
	for _, k := range o.Keys {
		rk := rendered.AirgapKey{Path: helm.PathString(k.Path), Value: k.Value, Why: k.Why}
		for _, m := range k.Images {
			rk.Images = append(rk.Images, m.String())
		}
		r.Keys = append(r.Keys, rk)
	}
	for _, u := range o.Unmoved {
		r.Unmoved = append(r.Unmoved, rendered.AirgapUnmoved{
			Image: u.Image, Target: u.Target, Template: u.Template, Line: u.Line,
			Object: u.Object(), Field: u.Field, Reason: u.Reason, Message: u.String(),
		})
	}
	return r, nil
}
