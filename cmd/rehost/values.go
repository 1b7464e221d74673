package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/rehost/rehost/cmd/rehost/internal/output"
	"github.com/rehost/rehost/pkg/rendered"
	"github.com/spf13/cobra"
)

// exitPartial is the exit status of rehost values and rehost relocate when
// some image is left unmoved (and --allow-partial is not given).
const exitPartial = 3

func newValuesCmd(s streams) *cobra.Command {
	var (
		mf           mappingFlags
		hf           helmFlags
		outFile      string
		allowPartial bool
	)
	cmd := &cobra.Command{
		Use:   "values CHART",
		Short: "Print the values that make a chart pull its images from the private registry",
		Long: `Print a values overlay that makes the chart render every image in the private
registry, with no post-renderer: rendering the chart with your values followed
by the overlay gives exactly what "rehost rewrite CHART" gives with your values,
document by document, hooks and subcharts included.

  helm install RELEASE CHART -f your-values.yaml -f airgap-values.yaml

That is what charts deployed by Flux, Argo CD, Rancher Fleet or sealer need,
and what pre-install hooks need under Helm 3, which never post-renders hooks.

rehost finds the keys by rendering, without relying on chart annotations. The
candidates are the strings of the merged values that occur in an image; the
empty or null keys named like a registry or a repository, and those the
templates read that no values file holds (traefik's image.repository); and the
key of an operator's registry setting in the values map a template writes whole
into its object (tigera-operator's installation.registry, rendered by toYaml of
installation). rehost renders the chart with a marker in place of each to learn
which image fields it drives and how, then chooses the fewest keys: a shared
registry key such as global.imageRegistry before per-image keys, and keys that
build one reference together when one is not enough (registry docker.io and
repository traefik become sea.hub:5000 and library/traefik, the target of
"rehost rewrite"). It checks the result by rendering with it. Each key comes
with a comment naming the images it moves.

Renders: at most N + 12 for N candidates, never more than 200. The candidates
with a value are probed together in one render, the empty or absent ones in
another; what a render cannot attribute is probed again in halves, or alone,
so keys that behave alike cost one render (1,000 empty registry keys: 2 to 4
renders) and the search stays deterministic.

Besides image fields, the overlay changes only what "rehost rewrite" changes
(the named references it rewrites with them, --*-image=REF arguments and
*_IMAGE env values; free-text references too with --rewrite-embedded), with
one exception: a ConfigMap in which the chart echoes its own values (Istio's
istio-sidecar-injector and values ConfigMaps, where injected sidecars find
their proxy's hub) may change, in a data entry that parses as YAML or JSON,
exactly where it holds a key the overlay sets, at that key's path, to that
key's value. A key that changes anything else (a label, an annotation, free
text, a value echoed under another name) is never used.

Charts that verify their images at render time fail with relocated images;
rehost knows their documented switch and sets it, with a comment saying why,
only when the render with the relocated values fails that check. Known:
Bitnami (common.errors.insecureImages): global.security.allowInsecureImages:
true. "rehost relocate" rewrites the chart's image annotations to the target,
so a relocated Bitnami chart passes the check without the switch.

Images that no value moves (written literally in a template) are listed on
stderr and in the overlay's header, with template file and line; rewrite them
with the post-renderer ("rehost rewrite"). The exit status is then 3, unless
--allow-partial; 0 means every image moves, 1 an error.

The overlay goes after your values files and before --set values, which Helm
applies last: a registry you pin with --set cannot be overridden.

CHART is a chart directory, a packaged chart, or a chart reference as for
"rehost rewrite" (oci://… with --version, NAME with --repo URL).`,
		Example: `  # The overlay for a chart, then install with it.
  rehost values charts/my-app -f prod.yaml > airgap-values.yaml
  helm install shop charts/my-app -f prod.yaml -f airgap-values.yaml

  # Another registry, keeping the source host in the path.
  rehost values my-app-1.2.0.tgz --registry harbor.local:8443/mirror --path-style nest

  # A Bitnami chart: global.imageRegistry, and Bitnami's documented switch
  # global.security.allowInsecureImages with a comment saying why.
  rehost values redis-20.1.0.tgz -o redis-airgap.yaml

  # For Flux: the overlay in a ConfigMap the HelmRelease reads (valuesFrom).
  rehost values charts/my-app -o airgap-values.yaml --allow-partial
  kubectl create configmap my-app-airgap --from-file=values.yaml=airgap-values.yaml`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			defer hf.src.cleanup()
			chart, err := hf.src.local(args[0])
			if err != nil {
				return err
			}
			r, err := runAirgap(cmd, "values", chart, &mf, &hf, s, nil)
			if err != nil {
				return err
			}
			if outFile != "" && outFile != "-" {
				var files output.Staged
				defer files.Abort()
				f, err := files.Create(outFile, 0o644)
				if err != nil {
					return err
				}
				_, err = f.Write([]byte(r.Overlay))
				if cerr := f.Close(); err == nil {
					err = cerr
				}
				if err != nil {
					return err
				}
				if err := files.Commit(); err != nil {
					return err
				}
			} else if _, err := fmt.Fprint(s.out, r.Overlay); err != nil {
				return err
			}
			return reportAirgap(s, r, allowPartial, fmt.Sprintf("%d key(s) set", len(r.Keys)))
		},
	}
	mf.register(cmd)
	hf.register(cmd)
	cmd.Flags().StringVarP(&outFile, "output", "o", "", "write the overlay to `FILE` instead of stdout (a file there keeps its mode and owner; a device, FIFO or link is written into, never replaced)")
	cmd.Flags().BoolVar(&allowPartial, "allow-partial", false, "exit 0 even when some image cannot be moved by values")
	return cmd
}

func newRelocateCmd(s streams) *cobra.Command {
	var (
		mf           mappingFlags
		hf           helmFlags
		out          string
		allowPartial bool
	)
	cmd := &cobra.Command{
		Use:   "relocate CHART --output DIR|FILE.tgz",
		Short: "Write the chart with its air-gap values merged into its own values files",
		Long: `Write a copy of the chart that pulls its images from the private registry with
no extra values file: the overlay of "rehost values" is merged into the chart's
own values.yaml files (the parent's, and a subchart's own for its keys), each
existing value replaced in place so that every other line, comments and order
included, stays as it was; missing keys are added with a comment naming the
images they move. The image annotations of every Chart.yaml (helm.sh/images,
images, artifacthub.io/images) are updated to the target references.

A chart family's switch (Bitnami's global.security.allowInsecureImages) is
merged only when the relocated chart fails the family's check without it:
its image annotations name the target images, which Bitnami's check accepts.

--output is a directory (created; it must not exist or be empty) or, ending in
.tgz, a packaged chart. The result is checked by rendering it. Images no value
moves are reported as by "rehost values", with exit status 3 unless
--allow-partial. A packaged chart is written reproducibly: relocating the same
chart for the same mapping gives the same bytes.

CHART is a chart directory, a packaged chart, or a chart reference as for
"rehost rewrite" (oci://… with --version, NAME with --repo URL).`,
		Example: `  # A packaged chart for the air-gapped cluster.
  rehost relocate charts/my-app --output my-app-airgap.tgz
  helm install shop my-app-airgap.tgz

  # sealer: relocate into the application image's chart directory.
  rehost relocate charts/my-app --output build/charts/my-app --registry sea.hub:5000

  # A chart of a chart repository, relocated.
  rehost relocate ingress-nginx --repo https://kubernetes.github.io/ingress-nginx --version 4.11.0 --output ingress-nginx-airgap.tgz`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			defer hf.src.cleanup()
			if out == "" {
				return errors.New("--output DIR|FILE.tgz is required")
			}
			chart, err := hf.src.local(args[0])
			if err != nil {
				return err
			}
			r, err := runAirgap(cmd, "relocate", chart, &mf, &hf, s, []string{"--output=" + out})
			if err != nil {
				return err
			}
			msg := fmt.Sprintf("%s written", r.Output)
			if len(r.Edited) > 0 {
				msg += " (edited: " + strings.Join(r.Edited, ", ") + ")"
			}
			return reportAirgap(s, r, allowPartial, msg)
		},
	}
	mf.register(cmd)
	hf.register(cmd)
	cmd.Flags().StringVar(&out, "output", "", "write the relocated chart to `DIR` or FILE.tgz")
	cmd.Flags().BoolVar(&allowPartial, "allow-partial", false, "exit 0 even when some image cannot be moved by values")
	return cmd
}

// runAirgap runs rehost-helm values or relocate on a chart.
func runAirgap(cmd *cobra.Command, sub, chart string, mf *mappingFlags, hf *helmFlags, s streams, extra []string) (*rendered.Airgap, error) {
	if st, err := os.Stat(chart); err != nil {
		return nil, err
	} else if st.IsDir() {
		if _, err := os.Stat(chart + string(os.PathSeparator) + "Chart.yaml"); err != nil {
			return nil, fmt.Errorf("%s is not a chart: it has no Chart.yaml", chart)
		}
	}
	cfg, err := mf.load(cmd)
	if err != nil {
		return nil, err
	}
	js, err := json.Marshal(cfg)
	if err != nil {
		return nil, err
	}
	args := append([]string{sub, "--rewrite-config=" + string(js)}, extra...)
	hc, err := hf.src.helmClient()
	if err != nil {
		return nil, err
	}
	local, err := hf.src.withDependencies(chart)
	if err != nil {
		return nil, err
	}
	r, err := hc.Airgap(append(args, hf.args(local)...), hf.valuesStdin(s))
	if err != nil {
		return nil, helperError("chart "+hf.src.show(chart)+": ", err)
	}
	return r, nil
}

// reportAirgap prints the summary and the unmoved images on stderr and
// returns the exit status: 3 when an image is unmoved, unless allowed.
func reportAirgap(s streams, r *rendered.Airgap, allowPartial bool, done string) error {
	for _, w := range r.Warnings {
		fmt.Fprintf(s.err, "rehost: warning: %s: %s\n", r.Chart, w)
	}
	fmt.Fprintf(s.err, "rehost: chart %s: %s, %d candidate value(s) probed in %d renders\n", r.Chart, done, r.Candidates, r.Renders)
	if len(r.Unmoved) == 0 {
		return nil
	}
	fmt.Fprintf(s.err, "rehost: %d image field(s) no value moves; rewrite them with the post-renderer (rehost rewrite):\n", len(r.Unmoved))
	for _, u := range r.Unmoved {
		fmt.Fprintf(s.err, "  %s\n", u.Message)
	}
	if allowPartial {
		return nil
	}
	return exitCode(exitPartial)
}
