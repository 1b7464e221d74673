package manifest

import (
	"sort"
	"strings"

	"github.com/rehost/rehost/pkg/rewrite"
)

// This file is the built-in table of image fields of widely used operators
// and workflow engines: the images that do not sit in a Pod spec, so that
// the container-list rule does not find them. Each entry is an ordinary
// rewrite.ImageField, as a user would configure one with imageFields; the
// few fields that hold only part of a reference (a repository whose tag sits
// in another field, an URL with a scheme) are composite entries below.
//
// Kinds covered without an entry, by the container-list rule (any list under
// containers, initContainers or ephemeralContainers of maps with a string
// image): Argo Rollouts Rollout, Knative Service/Configuration/Revision,
// OpenKruise CloneSet, the Prometheus operator's spec.containers, Argo
// Workflows templates[].initContainers and templates[].containerSet.

// BuiltinImageFields returns the built-in table of image fields on custom
// kinds, in the form of the imageFields config entries. Composite fields
// (see BuiltinCompositeFields) are not included.
func BuiltinImageFields() []rewrite.ImageField {
	var out []rewrite.ImageField
	add := func(group string, kinds []string, paths ...string) {
		for _, k := range kinds {
			for _, p := range paths {
				out = append(out, rewrite.ImageField{Group: group, Kind: k, Path: p})
			}
		}
	}

	// Prometheus operator: the image of the managed server; Prometheus
	// also runs a Thanos sidecar. The deprecated baseImage/tag/sha forms
	// are composite entries.
	const monitoring = "monitoring.coreos.com"
	add(monitoring, []string{"Prometheus", "Alertmanager", "ThanosRuler", "PrometheusAgent"}, "spec.image")
	add(monitoring, []string{"Prometheus"}, "spec.thanos.image")

	// Tekton: steps, sidecars and the step template of a task spec, in
	// Tasks and ClusterTasks, embedded in TaskRuns, in the tasks and
	// finally tasks of Pipelines and of PipelineRuns' embedded pipelines.
	const tekton = "tekton.dev"
	taskSpec := func(prefix string) []string {
		return []string{prefix + ".steps[].image", prefix + ".sidecars[].image", prefix + ".stepTemplate.image"}
	}
	add(tekton, []string{"Task", "ClusterTask"}, taskSpec("spec")...)
	add(tekton, []string{"TaskRun"}, taskSpec("spec.taskSpec")...)
	add(tekton, []string{"Pipeline"}, append(taskSpec("spec.tasks[].taskSpec"), taskSpec("spec.finally[].taskSpec")...)...)
	add(tekton, []string{"PipelineRun"}, append(taskSpec("spec.pipelineSpec.tasks[].taskSpec"), taskSpec("spec.pipelineSpec.finally[].taskSpec")...)...)
	add(tekton, []string{"StepAction"}, "spec.image")

	// Argo Workflows: the container, script, sidecars, init containers and
	// container sets of every template (the last two are also container
	// lists).
	const argo = "argoproj.io"
	templates := func(prefix string) []string {
		t := prefix + ".templates[]"
		return []string{t + ".container.image", t + ".script.image", t + ".sidecars[].image", t + ".initContainers[].image", t + ".containerSet.containers[].image"}
	}
	add(argo, []string{"Workflow", "WorkflowTemplate", "ClusterWorkflowTemplate"}, templates("spec")...)
	add(argo, []string{"CronWorkflow"}, templates("spec.workflowSpec")...)

	// KubeVirt: container disks and kernel boot containers of virtual
	// machines, their instances, replica sets and pools.
	const kubevirt = "kubevirt.io"
	vmi := func(prefix string) []string {
		return []string{prefix + ".volumes[].containerDisk.image", prefix + ".domain.firmware.kernelBoot.container.image"}
	}
	add(kubevirt, []string{"VirtualMachine", "VirtualMachineInstanceReplicaSet"}, vmi("spec.template.spec")...)
	add(kubevirt, []string{"VirtualMachineInstance"}, vmi("spec")...)
	add("pool.kubevirt.io", []string{"VirtualMachinePool"}, vmi("spec.virtualMachineTemplate.spec.template.spec")...)

	// Operator Lifecycle Manager: the images an operator bundle relates to.
	add("operators.coreos.com", []string{"ClusterServiceVersion"}, "spec.relatedImages[].image")
	return out
}

// CompositeField is an image reference a kind spreads over several fields,
// or writes inside an URL. The field at Repository holds the repository
// (after Scheme, when set); the tag or digest, if any, comes from the first
// non-empty of the Digest fields, else of the Tag fields, all relative to
// the map at Path. A rewrite replaces only the repository part, in place.
type CompositeField struct {
	Group string
	Kinds []string
	// Path is the map holding the fields, "spec" or "spec.thanos"; "[]"
	// after a segment means every item of that list.
	Path string
	// Repository is the key of the field holding the repository.
	Repository string
	// Scheme is the prefix the repository field's value must start with
	// ("oci://"); the field is not an image when it does not.
	Scheme string
	// Digest and Tag are dot-separated paths, relative to Path, of the
	// fields that hold the digest and the tag; the first non-empty wins,
	// digests before tags.
	Digest, Tag []string
	// DigestPrefix is prepended to a digest value that lacks it
	// (the Prometheus operator's sha holds only the hex).
	DigestPrefix string
	// Unless is a key that, when set, makes the kind ignore these fields
	// (the Prometheus operator uses spec.image over spec.baseImage).
	Unless string
}

// BuiltinCompositeFields returns the built-in composite image fields.
func BuiltinCompositeFields() []CompositeField {
	prom := func(path string, kinds ...string) CompositeField {
		return CompositeField{Group: "monitoring.coreos.com", Kinds: kinds, Path: path, Repository: "baseImage", Digest: []string{"sha"}, DigestPrefix: "sha256:", Tag: []string{"tag", "version"}, Unless: "image"}
	}
	return []CompositeField{
		prom("spec", "Prometheus", "Alertmanager", "ThanosRuler", "PrometheusAgent"),
		prom("spec.thanos", "Prometheus"),
		// Flux: the artifact of an OCIRepository is an OCI image.
		{Group: "source.toolkit.fluxcd.io", Kinds: []string{"OCIRepository"}, Path: "spec", Repository: "url", Scheme: "oci://", Digest: []string{"ref.digest"}, Tag: []string{"ref.tag"}},
		// KubeVirt CDI: a disk imported from a registry.
		{Group: "cdi.kubevirt.io", Kinds: []string{"DataVolume"}, Path: "spec.source.registry", Repository: "url", Scheme: "docker://"},
		{Group: "kubevirt.io", Kinds: []string{"VirtualMachine"}, Path: "spec.dataVolumeTemplates[].spec.source.registry", Repository: "url", Scheme: "docker://"},
	}
}

// placeholders says, per API group and kind, which image values are not
// images but placeholders the kind's controller fills in or patterns it
// matches: Kyverno policies hold patterns ("registry/*") and JMESPath
// variables ("{{ request.object... }}") in container lists, so any value
// that is not a valid reference; Tekton uses "$(params.IMAGE)"; Argo
// Workflows "{{inputs.parameters.image}}". Such values are skipped without
// an error; valid references in these kinds are still images.
func placeholders(group, kind string) func(string) bool {
	switch group {
	case "kyverno.io":
		return func(v string) bool {
			_, err := rewrite.ParseRef(v)
			return err != nil
		}
	case "tekton.dev":
		return func(v string) bool { return strings.Contains(v, "$(") }
	case "argoproj.io":
		switch kind {
		case "Workflow", "WorkflowTemplate", "ClusterWorkflowTemplate", "CronWorkflow":
			return func(v string) bool { return strings.Contains(v, "{{") }
		}
	}
	return nil
}

// isPattern reports whether an image value in a custom resource is a glob
// pattern rather than an image reference: "*" and "?" never occur in a
// reference.
func isPattern(v string) bool { return strings.ContainsAny(v, "*?") }

// schemes are the URL schemes of composite fields. A document holding a
// composite field holds one of them (see mayHoldImages).
func (f *Finder) schemeList() []string {
	var out []string
	seen := map[string]bool{}
	for _, cs := range f.composites {
		for _, c := range cs {
			if c.Scheme != "" && !seen[c.Scheme] {
				seen[c.Scheme] = true
				out = append(out, c.Scheme)
			}
		}
	}
	sort.Strings(out)
	return out
}
