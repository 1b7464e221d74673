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

	// TiDB operator: the helper image of log tailers and init containers
	// (spec.helper.image; the TiDB slow log tailer's image before it), the
	// MySQL client of TidbInitializer. The components' images are
	// composite entries (tidbComponents); the other kinds of the group
	// (TidbMonitor, TidbDashboard, Backup, Restore) are guessed well.
	add(pingcap, []string{"TidbCluster"}, "spec.helper.image", "spec.tidb.slowLogTailer.image")
	add(pingcap, []string{"TidbInitializer"}, "spec.image")
	return out
}

// CompositeField is an image reference a kind spreads over several fields
// (a split reference), or writes inside an URL. The field at Repository
// holds the repository (after Scheme, when set), prefixed by the value of
// the field at Registry when that is set; the tag or digest, if any, comes
// from the first non-empty of the Digest fields, else of the Tag fields,
// all relative to the map at Path. A rewrite replaces only the registry
// part (the repository part when there is no registry field), in place.
type CompositeField struct {
	Group string
	Kinds []string
	// Path is the map holding the fields, "spec" or "spec.thanos"; "[]"
	// after a segment means every item of that list.
	Path string
	// Repository is the dot-separated path of the field holding the
	// repository.
	Repository string
	// Registry, when set, is the path of a field holding the registry
	// part: the reference is registry/repository.
	Registry string
	// Scheme is the prefix the repository field's value must start with
	// ("oci://"); the field is not an image when it does not.
	Scheme string
	// Digest and Tag are dot-separated paths, relative to Path, of the
	// fields that hold the digest and the tag; the first non-empty wins,
	// digests before tags.
	Digest, Tag []string
	// ObjectTag are dot-separated paths, relative to the object, of the
	// fields that hold the tag when none of Digest and Tag is set (TiDB's
	// spec.version, for spec.pd.baseImage without spec.pd.version).
	ObjectTag []string
	// DigestPrefix is prepended to a digest value that lacks it
	// (the Prometheus operator's sha holds only the hex).
	DigestPrefix string
	// Unless is a key that, when set, makes the kind ignore these fields
	// (the Prometheus operator uses spec.image over spec.baseImage).
	Unless string
	// Algorithm, when set, is the path of a field holding a digest
	// algorithm ("sha256"); when it is non-empty, the tag field holds the
	// digest's hex instead of a tag (Kiali's image_digest and
	// image_version).
	Algorithm string
	// OperatorTag says that an absent tag and digest is not ":latest" but
	// a version the operator chooses, and NotTags lists values of the tag
	// field that are such choices ("operator_version"). Such a reference
	// cannot be composed: its registry or repository part is rewritten,
	// and it is reported instead of listed.
	OperatorTag bool
	NotTags     []string
}

// BuiltinCompositeFields returns the built-in composite image fields.
func BuiltinCompositeFields() []CompositeField {
	prom := func(path string, kinds ...string) CompositeField {
		return CompositeField{Group: "monitoring.coreos.com", Kinds: kinds, Path: path, Repository: "baseImage", Digest: []string{"sha"}, DigestPrefix: "sha256:", Tag: []string{"tag", "version"}, Unless: "image"}
	}
	out := []CompositeField{
		prom("spec", "Prometheus", "Alertmanager", "ThanosRuler", "PrometheusAgent"),
		prom("spec.thanos", "Prometheus"),
		// Flux: the artifact of an OCIRepository is an OCI image.
		{Group: "source.toolkit.fluxcd.io", Kinds: []string{"OCIRepository"}, Path: "spec", Repository: "url", Scheme: "oci://", Digest: []string{"ref.digest"}, Tag: []string{"ref.tag"}},
		// KubeVirt CDI: a disk imported from a registry.
		{Group: "cdi.kubevirt.io", Kinds: []string{"DataVolume"}, Path: "spec.source.registry", Repository: "url", Scheme: "docker://"},
		{Group: "kubevirt.io", Kinds: []string{"VirtualMachine"}, Path: "spec.dataVolumeTemplates[].spec.source.registry", Repository: "url", Scheme: "docker://"},
		// Kiali (https://kiali.io/docs/configuration/kialis.kiali.io/):
		// spec.deployment.image_name "determines which image of Kiali to
		// download and install" (empty: the operator's own choice);
		// image_version is a version, "latest", "lastrelease" (the last
		// Kiali release) or "operator_version" (the operator's version), or
		// a digest's hex when image_digest names its type ("sha256"). The
		// operator composes image_name@image_digest:image_version.
		{Group: "kiali.io", Kinds: []string{"Kiali"}, Path: "spec.deployment", Repository: "image_name", Tag: []string{"image_version"}, Algorithm: "image_digest", OperatorTag: true, NotTags: []string{"lastrelease", "operator_version"}},
		// Kiali's OSSMConsole (https://kiali.io/docs/configuration/ossmconsoles.kiali.io/):
		// the same scheme in camelCase.
		{Group: "kiali.io", Kinds: []string{"OSSMConsole"}, Path: "spec.deployment", Repository: "imageName", Tag: []string{"imageVersion"}, Algorithm: "imageDigest", OperatorTag: true},
		// VictoriaMetrics operator (https://docs.victoriametrics.com/operator/api/#image):
		// an Image is {repository, tag, pullPolicy}; an absent tag is the
		// operator's default version.
		vm("spec.image", "VMSingle", "VMAgent", "VMAlert", "VMAlertmanager", "VMAuth", "VLogs", "VLSingle", "VMAnomaly"),
		vm("spec.vmstorage.image", "VMCluster"),
		vm("spec.vmselect.image", "VMCluster"),
		vm("spec.vminsert.image", "VMCluster"),
	}
	out = append(out, tidbComponents("TidbCluster", "spec.pd", "spec.pdms[]", "spec.tikv", "spec.tidb", "spec.tiflash", "spec.ticdc", "spec.pump", "spec.tiproxy")...)
	out = append(out, tidbComponents("DMCluster", "spec.master", "spec.worker")...)
	out = append(out, tidbComponents("TidbNGMonitoring", "spec.ngMonitoring")...)
	return out
}

const pingcap = "pingcap.com"

// tidbComponents are the images of TiDB operator components
// (https://docs.pingcap.com/tidb-in-kubernetes/stable/configure-a-tidb-cluster,
// pkg/apis/pingcap/v1alpha1 PDImage, TiKVImage, ...): each component map
// holds baseImage, and its image is baseImage:version, the version being
// the component's own or else the object's spec.version (baseImage alone
// when neither is set). A component's deprecated image field is its whole
// reference, used only without baseImage.
func tidbComponents(kind string, paths ...string) []CompositeField {
	var out []CompositeField
	for _, p := range paths {
		out = append(out,
			CompositeField{Group: pingcap, Kinds: []string{kind}, Path: p, Repository: "baseImage", Tag: []string{"version"}, ObjectTag: []string{"spec.version"}},
			CompositeField{Group: pingcap, Kinds: []string{kind}, Path: p, Repository: "image", Unless: "baseImage"})
	}
	return out
}

// vm is a VictoriaMetrics operator Image at path of kinds.
func vm(path string, kinds ...string) CompositeField {
	return CompositeField{Group: "operator.victoriametrics.com", Kinds: kinds, Path: path, Repository: "repository", Tag: []string{"tag"}, OperatorTag: true}
}

// RegistryField is a registry setting of an operator's kind: a field
// holding a registry host with an optional path prefix that the operator
// puts before the names of the images it starts. Its value is rewritten so
// that the images the operator builds from it are the targets rehost would
// write (rewrite.Mapper.MapRegistry).
type RegistryField struct {
	Group string
	Kinds []string
	// Path is the dot-separated path of the field; "[]" after a segment
	// means every item of that list.
	Path string
	// Add says that an absent or empty field (or one of Defaults) means a
	// public registry without a path: rehost then sets the target
	// registry, in strip style (in nest style the target depends on which
	// public registry the operator's version defaults to, so it reports
	// the field instead).
	Add bool
	// TrailingSlash says an added value ends in "/".
	TrailingSlash bool
	// Defaults are values that stand for the operator's default registry
	// ("UseDefault").
	Defaults []string
}

// BuiltinRegistryFields returns the built-in registry settings.
func BuiltinRegistryFields() []RegistryField {
	istio := func(group string, kinds []string, paths ...string) []RegistryField {
		var out []RegistryField
		for _, p := range paths {
			out = append(out, RegistryField{Group: group, Kinds: kinds, Path: p})
		}
		return out
	}
	out := []RegistryField{
		// tigera operator (Calico), Installation.spec.registry
		// (https://docs.tigera.io/calico/latest/reference/installation/api#operator.tigera.io/v1.InstallationSpec):
		// "the default Docker registry used for component Docker images.
		// If specified then the given value must end with a slash
		// character (/) and all images will be pulled from this registry.
		// If not specified then the default registries will be used. A
		// special case value, UseDefault, is supported to explicitly
		// specify the default registries will be used. Image format:
		// <registry><imagePath>/<imagePrefix><imageName>:<image-tag>".
		// imagePath and imagePrefix follow the registry in every image, so
		// they are kept as written. The default registry is docker.io/ or
		// quay.io/ depending on the operator's version
		// (pkg/components/images.go, CalicoRegistry).
		{Group: "operator.tigera.io", Kinds: []string{"Installation"}, Path: "spec.registry", Add: true, TrailingSlash: true, Defaults: []string{"UseDefault"}},
	}
	// Istio's in-cluster operator and istioctl, IstioOperator
	// (https://istio.io/latest/docs/reference/config/istio.operator.v1alpha1/):
	// spec.hub is the "root for docker image paths e.g. docker.io/istio",
	// each component may override it (components.<name>.hub), and the
	// Helm values it passes on name it again (values.global.hub and the
	// per-chart hub). An absent hub is the profile's, which depends on the
	// Istio version: it is never added.
	out = append(out, istio("install.istio.io", []string{"IstioOperator"},
		"spec.hub", "spec.values.global.hub", "spec.values.pilot.hub", "spec.values.cni.hub", "spec.values.ztunnel.hub",
		"spec.components.base.hub", "spec.components.pilot.hub", "spec.components.cni.hub", "spec.components.ztunnel.hub", "spec.components.istiodRemote.hub",
		"spec.components.ingressGateways[].hub", "spec.components.egressGateways[].hub")...)
	// The Sail operator (https://github.com/istio-ecosystem/sail-operator,
	// API group sailoperator.io, formerly operator.istio.io): its resources
	// carry Istio's Helm values under spec.values, the hub in
	// values.global.hub and per chart.
	for _, g := range []string{"sailoperator.io", "operator.istio.io"} {
		out = append(out, istio(g, []string{"Istio", "IstioRevision"}, "spec.values.global.hub", "spec.values.pilot.hub")...)
		out = append(out, istio(g, []string{"IstioCNI"}, "spec.values.global.hub", "spec.values.cni.hub")...)
		out = append(out, istio(g, []string{"ZTunnel"}, "spec.values.global.hub", "spec.values.ztunnel.hub")...)
	}
	return out
}

// OperatorKind is a kind whose operator starts images that no manifest
// names, unless the object names them itself.
type OperatorKind struct {
	// Operator names the operator in warnings, "the tigera operator".
	Operator string
	Group    string
	Kinds    []string
	// Starts says which images it starts.
	Starts string
	// Unless are dot paths of fields: when one of them is set, the object
	// names its images itself and the operator starts no other.
	Unless []string
}

// BuiltinOperatorKinds returns the kinds of the operators that start
// images no manifest names.
func BuiltinOperatorKinds() []OperatorKind {
	prom := []string{"Prometheus", "Alertmanager", "ThanosRuler", "PrometheusAgent"}
	var out []OperatorKind
	out = append(out,
		OperatorKind{Operator: "the tigera operator", Group: "operator.tigera.io", Kinds: []string{"Installation"},
			Starts: "calico/node, cni, kube-controllers, typha, csi, node-driver-registrar, pod2daemon-flexvol, apiserver and others, at the operator's version"},
		OperatorKind{Operator: "Istio (IstioOperator)", Group: "install.istio.io", Kinds: []string{"IstioOperator"},
			Starts: "pilot, proxyv2 and, with their components, install-cni and ztunnel, from its hub and tag"},
		OperatorKind{Operator: "the Kiali operator", Group: "kiali.io", Kinds: []string{"Kiali", "OSSMConsole"},
			Starts: "the Kiali server (or console plugin) image it picks for its version", Unless: []string{"spec.deployment.image_name", "spec.deployment.imageName"}},
		OperatorKind{Operator: "the Prometheus operator", Group: "monitoring.coreos.com", Kinds: prom,
			Starts: "its default image of the kind, at spec.version", Unless: []string{"spec.image", "spec.baseImage"}},
		// HelperImage: busybox:1.26.2 unless spec.helper.image (or the
		// older spec.tidb.slowLogTailer.image) is set; the TiDB slow log
		// tailer runs it by default.
		OperatorKind{Operator: "the TiDB operator", Group: pingcap, Kinds: []string{"TidbCluster"},
			Starts: "its default helper image busybox:1.26.2, for log tailers and init containers", Unless: []string{"spec.helper.image", "spec.tidb.slowLogTailer.image"}},
	)
	for _, g := range []string{"sailoperator.io", "operator.istio.io"} {
		out = append(out, OperatorKind{Operator: "the Sail operator", Group: g, Kinds: []string{"Istio", "IstioRevision", "IstioCNI", "ZTunnel"},
			Starts: "pilot, proxyv2, install-cni and ztunnel, from values.global.hub at spec.version"})
	}
	return out
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
