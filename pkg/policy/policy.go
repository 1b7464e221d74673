package policy

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/rehost/rehost/internal/bounded"
	"github.com/rehost/rehost/pkg/rewrite"
	"go.yaml.in/yaml/v3"
)

// Format is the kind of policy written.
type Format string

const (
	// Admission is a Kubernetes MutatingAdmissionPolicy with its binding
	// (and, with Validate, a ValidatingAdmissionPolicy with its binding).
	Admission Format = "admission"
	// Kyverno is a Kyverno ClusterPolicy.
	Kyverno Format = "kyverno"
)

// API versions of MutatingAdmissionPolicy.
const (
	// V1 is stable from Kubernetes 1.36.
	V1 = "admissionregistration.k8s.io/v1"
	// V1beta1 is in Kubernetes 1.34 and 1.35, behind the
	// MutatingAdmissionPolicy feature gate.
	V1beta1 = "admissionregistration.k8s.io/v1beta1"
	// V1alpha1 is in Kubernetes 1.32 and 1.33, behind the feature gate and
	// the v1alpha1 API; it is also the version the Kyverno CLI evaluates.
	V1alpha1 = "admissionregistration.k8s.io/v1alpha1"
)

// DefaultName is the name of the policies and bindings.
const DefaultName = "rehost"

// Options say which policy to write. The zero value writes a
// MutatingAdmissionPolicy at V1 named DefaultName for every namespace.
type Options struct {
	// Format is Admission (the default) or Kyverno.
	Format Format
	// APIVersion is the MutatingAdmissionPolicy version: V1 (the
	// default), V1beta1 or V1alpha1. Only for Admission.
	APIVersion string
	// Name names the policies and bindings; the validating policy gets
	// the suffix "-check". Default DefaultName.
	Name string
	// Validate adds the validating policy, which reports Pods whose images
	// the mutation left outside the target registry (invalid references,
	// targets too long, images the mutation did not see because it was
	// not installed or failed open).
	Validate bool
	// Deny makes the validating policy reject those Pods instead of
	// reporting them. It implies Validate.
	Deny bool
	// NamespaceSelector is a label selector in kubectl's syntax
	// (ParseSelector) for the namespaces whose Pods the policies apply to;
	// empty means every namespace. The rehost command defaults it to
	// DefaultNamespaceSelector.
	NamespaceSelector string
	// Pins give rewritten images the pinned target rehost rewrite --pins
	// gives them. Admission format only.
	Pins rewrite.Pins
}

// UnsupportedError reports a part of the mapping that the requested policy
// cannot express: rather than a policy that does something else, no
// policy. Its message names no flag of a front end: Format says which
// format refused the feature, and a front end adds how to ask for another
// in its own terms (the CLI --format).
type UnsupportedError struct {
	// Feature names the config field or option.
	Feature string
	// Format, when set, is the policy format that cannot express Feature,
	// which another format can (Options.Format).
	Format Format
	Reason string
	// Err, when set, is the typed cause (a *rewrite.PinConflictError);
	// Reason is its message.
	Err error
}

func (e *UnsupportedError) Error() string {
	return fmt.Sprintf("rehost policy: %s: %s", e.Feature, e.Reason)
}

func (e *UnsupportedError) Unwrap() error { return e.Err }

// renderOnly lists the config fields that decide which fields other than
// Pod container images rehost rewrites at render time. The policies
// rewrite container images only; these settings do not change them, and
// the policy's header says that they were left to render time.
func renderOnly(c rewrite.Config) []string {
	var out []string
	if len(c.ImageFields) > 0 {
		out = append(out, "imageFields (images in custom resources; the Pods their operators start are covered)")
	}
	if c.RewriteEmbedded {
		out = append(out, "rewriteEmbedded (references in free text: ConfigMap data, annotations, args)")
	}
	if c.NoNamedEmbedded {
		out = append(out, "noNamedEmbedded")
	}
	if c.NoAddRegistry {
		out = append(out, "noAddRegistry")
	}
	if c.ImageList != nil {
		out = append(out, "imageList")
	}
	if c.SkipInvalid {
		out = append(out, "skipInvalid (the policies always leave invalid references as written)")
	}
	return out
}

// RenderOnly returns the settings of c that apply at render time only
// (see the policy header), for a command to mention.
func RenderOnly(c rewrite.Config) []string { return renderOnly(c) }

// Write writes the policy for the mapping of c as a YAML stream.
func Write(w io.Writer, c rewrite.Config, o Options) error {
	docs, err := Documents(c, o)
	if err != nil {
		return err
	}
	return Encode(w, docs)
}

// ClientSideApplyLimit is the most bytes an object may have as JSON for
// kubectl apply without --server-side: kubectl stores the whole object in
// its kubectl.kubernetes.io/last-applied-configuration annotation, and the
// annotations of an object hold at most 256 KiB. Server-side apply and
// kubectl create store no such annotation; etcd then takes requests of up
// to 1.5 MiB (its default --max-request-bytes).
const ClientSideApplyLimit = 256 << 10

// LargestObject returns the kind and the size as JSON (what kubectl sends)
// of the largest of docs.
func LargestObject(docs []*yaml.Node) (kind string, size int, err error) {
	for _, d := range docs {
		var v map[string]any
		if err := d.Decode(&v); err != nil {
			return "", 0, err
		}
		b, err := json.Marshal(v)
		if err != nil {
			return "", 0, err
		}
		if len(b) > size {
			k, _ := v["kind"].(string)
			kind, size = k, len(b)
		}
	}
	return kind, size, nil
}

// Encode writes documents (from Documents) as a YAML stream.
func Encode(w io.Writer, docs []*yaml.Node) error {
	enc := yaml.NewEncoder(w)
	enc.SetIndent(2)
	for _, d := range docs {
		if err := enc.Encode(d); err != nil {
			return err
		}
	}
	return enc.Close()
}

// Documents returns the policy documents for the mapping of c.
func Documents(c rewrite.Config, o Options) ([]*yaml.Node, error) {
	m, err := rewrite.NewMapper(c)
	if err != nil {
		return nil, err
	}
	if o.Name == "" {
		o.Name = DefaultName
	}
	if o.Deny {
		o.Validate = true
	}
	if err := checkDNSLabel(o.Name); err != nil {
		return nil, &UnsupportedError{Feature: "name", Reason: err.Error()}
	}
	sel, err := ParseSelector(o.NamespaceSelector)
	if err != nil {
		return nil, err
	}
	pins, err := resolvePins(m, o.Pins)
	if err != nil {
		return nil, err
	}
	g := generator{m: m, o: o, sel: sel, pins: pins, header: header(c, m, o)}
	switch o.Format {
	case "", Admission:
		switch o.APIVersion {
		case "":
			g.o.APIVersion = V1
		case V1, V1beta1, V1alpha1:
		default:
			return nil, &UnsupportedError{Feature: "api-version", Reason: fmt.Sprintf("got %s, want %s, %s or %s", bounded.Quote(o.APIVersion), V1, V1beta1, V1alpha1)}
		}
		return g.admission(), nil
	case Kyverno:
		if o.APIVersion != "" {
			return nil, &UnsupportedError{Feature: "api-version", Format: Kyverno, Reason: "only for the admission format"}
		}
		if len(pins) > 0 {
			return nil, &UnsupportedError{Feature: "pins", Format: Kyverno, Reason: "not supported by the kyverno format: the Kyverno policy carries no table of pinned digests; use the admission format, or pin at render time"}
		}
		return g.kyverno(), nil
	}
	return nil, &UnsupportedError{Feature: "format", Reason: fmt.Sprintf("got %s, want %s or %s", bounded.Quote(string(o.Format)), Admission, Kyverno)}
}

// resolvePins keeps the pins that change a rewritten image, as qualified
// source -> pinned value: the pin's digest alone when the pinned target is
// the target the mapping gives plus that digest (what the policy then
// writes), else the whole pinned target (a source without tag or digest,
// which may be written with or without ":latest"; a pin that changes the
// tag). It rejects a pin the mapper would reject when it met the image: a
// repository not the one the mapping gives, a digest not the one written.
func resolvePins(m *rewrite.Mapper, pins rewrite.Pins) (map[string]string, error) {
	out := map[string]string{}
	keys := make([]string, 0, len(pins))
	for k := range pins {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	pinned := m.WithPins(pins)
	for _, src := range keys {
		mp, err := pinned.Map(src)
		if err != nil {
			return nil, &UnsupportedError{Feature: "pins", Reason: err.Error(), Err: err}
		}
		if mp.Action != rewrite.Rewritten {
			continue
		}
		plain, err := m.Map(src)
		if err != nil {
			return nil, &UnsupportedError{Feature: "pins", Reason: err.Error(), Err: err}
		}
		target, unpinned := mp.Target.String(), plain.Target.String()
		switch {
		case target == unpinned:
			// The digest written: nothing to pin.
		case !(mp.Source.Tag == "latest" && mp.Source.Digest == "") && target == unpinned+"@"+mp.Target.Digest:
			// Not a source that may be written without its tag.
			out[src] = mp.Target.Digest
		default:
			out[src] = target
		}
	}
	return out, nil
}

// checkDNSLabel checks a policy name: the validating policy adds "-check".
func checkDNSLabel(s string) error {
	if len(s) > 63-len("-check") || !labelValue.MatchString(s) || strings.ToLower(s) != s || strings.ContainsAny(s, "_.") {
		return fmt.Errorf("%s: want a lower-case DNS label of at most %d characters", bounded.Quote(s), 63-len("-check"))
	}
	return nil
}

// header is the comment at the top of the stream.
func header(c rewrite.Config, m *rewrite.Mapper, o Options) string {
	hosts, repos := m.Exclusions()
	ex := append(append([]string{}, hosts...), repos...)
	var b strings.Builder
	fmt.Fprintf(&b, "Generated by rehost policy: gives every container, init container and\n")
	fmt.Fprintf(&b, "ephemeral container of a Pod the image rehost rewrite gives it.\n")
	fmt.Fprintf(&b, "  registry: %s (path style %s)\n", m.Root(), m.Style())
	if len(ex) > 0 {
		fmt.Fprintf(&b, "  left as written: %s\n", strings.Join(ex, ", "))
	}
	fmt.Fprintf(&b, "  images already under %s are left as written (applying it again changes nothing);\n", m.Registry())
	fmt.Fprintf(&b, "  invalid references too (the validating policy, rehost policy --validate, reports them).\n")
	if len(o.Pins) > 0 {
		fmt.Fprintf(&b, "  pinned images: %d\n", len(o.Pins))
	}
	if ro := renderOnly(c); len(ro) > 0 {
		fmt.Fprintf(&b, "Config settings that apply at render time only (rehost rewrite), not here:\n")
		for _, s := range ro {
			fmt.Fprintf(&b, "  %s\n", s)
		}
	}
	fmt.Fprintf(&b, "Images in args and env values are rewritten at render time only.")
	return b.String()
}

// generator writes the documents.
type generator struct {
	m      *rewrite.Mapper
	o      Options
	sel    []Requirement
	pins   map[string]string
	header string
}

// containerLists are the Pod's lists of containers: the policies treat each.
var containerLists = []string{"containers", "initContainers", "ephemeralContainers"}
