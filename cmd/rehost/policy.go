package main

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"github.com/rehost/rehost/pkg/policy"
	"github.com/spf13/cobra"
)

func newPolicyCmd(s streams) *cobra.Command {
	var (
		mf       mappingFlags
		o        policy.Options
		format   string
		pinsFile string
	)
	cmd := &cobra.Command{
		Use:   "policy",
		Short: "Print an admission policy that rewrites Pod images as rehost rewrite does",
		Long: `Print an admission policy that gives every container, init container and
ephemeral container of a Pod the image "rehost rewrite" gives it, from the same
mapping flags and config (--registry, --path-style, --exclude, --config): a net
for the Pods that never pass through rehost at render time (kubectl run, Pods
that operators and controllers create, Helm 3 hooks, anything applied by hand).

Formats (--format):
  admission  a MutatingAdmissionPolicy and its binding (Kubernetes 1.32 onwards;
             --api-version admissionregistration.k8s.io/v1 from 1.36, v1beta1 for
             1.34-1.35, v1alpha1 for 1.32-1.33; the feature gate
             MutatingAdmissionPolicy must be on before 1.36)
  kyverno    a Kyverno ClusterPolicy (Kyverno 1.6 onwards)

The mapping is restated in the policy (CEL, or Kyverno's JMESPath): Docker
Hub's normalisation (nginx is docker.io/library/nginx), tags and digests kept,
exclusions, and images already in the target left alone, so applying the
policy again changes nothing. Invalid references are left as written.

--validate adds the matching validating policy (a ValidatingAdmissionPolicy,
or Kyverno check rules), which reports Pods with images outside the target
registry that the mutation did not cover; with --deny it rejects them.

Config settings that concern other fields than container images (imageFields,
rewriteEmbedded, ...) apply at render time only: the policy's header lists
them, and so does one line on stderr. Image references in args and env values
are rewritten at render time only. A setting the chosen format cannot express
is an error naming it.`,
		Example: `  # The net for a Kubernetes 1.36 cluster, same mapping as the render.
  rehost policy --config rehost.yaml | kubectl apply -f -

  # Kubernetes 1.34 (feature gate MutatingAdmissionPolicy on), with the check that rejects what slips through.
  rehost policy --api-version admissionregistration.k8s.io/v1beta1 --validate --deny

  # A Kyverno cluster, every namespace.
  rehost policy --format kyverno --registry harbor.local:8443/mirror --namespace-selector ''`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := mf.load(cmd)
			if err != nil {
				return err
			}
			o.Format = policy.Format(format)
			if pinsFile != "" {
				if o.Pins, err = readPins(pinsFile); err != nil {
					return err
				}
			}
			// Nothing is written unless the whole policy is.
			docs, err := policy.Documents(c, o)
			if err != nil {
				return policyError(err)
			}
			var out bytes.Buffer
			if err := policy.Encode(&out, docs); err != nil {
				return err
			}
			if kind, size, err := policy.LargestObject(docs); err == nil && size > policy.ClientSideApplyLimit {
				fmt.Fprintf(s.err, "rehost: warning: the %s is %d bytes as JSON, over the %d that kubectl apply without --server-side can store in its last-applied-configuration annotation: apply it with kubectl apply --server-side (or kubectl create)\n", kind, size, policy.ClientSideApplyLimit)
			}
			if ro := policy.RenderOnly(c); len(ro) > 0 {
				names := make([]string, len(ro))
				for i, r := range ro {
					names[i], _, _ = strings.Cut(r, " ")
				}
				fmt.Fprintf(s.err, "rehost: config settings %s apply at render time only (rehost rewrite); the policy rewrites container images\n", strings.Join(names, ", "))
			}
			_, err = out.WriteTo(s.out)
			return err
		},
	}
	mf.registerMapping(cmd)
	fs := cmd.Flags()
	fs.StringVar(&format, "format", string(policy.Admission), "admission (MutatingAdmissionPolicy) or kyverno (ClusterPolicy)")
	fs.StringVar(&o.APIVersion, "api-version", "", "MutatingAdmissionPolicy API version: "+policy.V1+" (default), "+policy.V1beta1+" or "+policy.V1alpha1)
	fs.StringVar(&o.Name, "name", policy.DefaultName, "name of the policies and bindings (the validating policy adds -check)")
	fs.BoolVar(&o.Validate, "validate", false, "add the validating policy that reports Pods with images outside the target registry")
	fs.BoolVar(&o.Deny, "deny", false, "make the validating policy reject those Pods (implies --validate)")
	fs.StringVar(&o.NamespaceSelector, "namespace-selector", policy.DefaultNamespaceSelector, "label selector of the namespaces the policy applies to ('' for all)")
	fs.StringVar(&pinsFile, "pins", "", "give pinned images their pinned target, as rehost rewrite --pins (`FILE` of SOURCE<TAB>TARGET lines; --format admission)")
	return cmd
}

// policyError words an error of policy.Documents with the flags of rehost
// policy: a feature the format asked for cannot express names the --format
// that can (the library's message names no flag).
func policyError(err error) error {
	var ue *policy.UnsupportedError
	if !errors.As(err, &ue) || ue.Format != policy.Kyverno {
		return err
	}
	switch ue.Feature {
	case "api-version":
		return fmt.Errorf("rehost policy: api-version: only for --format %s", policy.Admission)
	case "pins":
		return fmt.Errorf("rehost policy: pins: not supported with --format %s: the Kyverno policy carries no table of pinned digests; use --format %s, or pin at render time (rehost rewrite --pins)", policy.Kyverno, policy.Admission)
	}
	return err
}
