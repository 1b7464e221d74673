package policy

import (
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Comments written above the fields whose values are choices.
const (
	commentFailure = `Fail: a Pod the policy cannot map (an evaluation error) is rejected with
the policy's name in the error, not let through with a public image it
cannot pull in an air gap. The mapping itself never fails: invalid
references are left as written.`
	commentReinvocation = `IfNeeded: sidecar injectors (Istio, Linkerd, Vault) add containers in
mutating webhooks, which run after admission policies; the API server
then runs this policy again, and it rewrites the injected images too.
A second run changes nothing else: images already in the target
registry are left as written.`
	commentMirror = `Mirror Pods are the API's copies of static Pods: the kubelet runs the
static Pod's own manifest, so a changed mirror would only misreport it.`
	commentMutation = `ApplyConfiguration merges by container name (the lists are keyed by
name), so no index is needed and no other container is touched; CEL
maps each image as rehost's mapper does (pkg/rewrite).`
	commentRules = `Pod creations, and updates of the ephemeralcontainers subresource
(kubectl debug). Not other Pod updates: they carry label and annotation
changes too, and rewriting the images of a Pod created before the policy
there would restart its containers.`
	commentPins = `The pins (rehost policy --pins), qualified source -> digest to append to
the target, or the whole pinned target: defined once for every container
list, in maps of at most 90,000 characters each (the API server's CEL
parser takes expressions of up to 100,000).`
	commentValidationActions = `Warn and Audit report Pods with images outside the target registry that
the mutation did not cover; rehost policy --deny writes Deny.`
)

// admission writes the MutatingAdmissionPolicy and its binding, and with
// Validate the ValidatingAdmissionPolicy and its binding.
func (g generator) admission() []*yaml.Node {
	c := celMapping{m: g.m, pins: g.pins}
	var variables *yaml.Node
	if len(g.pins) > 0 {
		names, exprs := pinVariables(g.pins)
		c.pinVars = names
		var vars []*yaml.Node
		for i := range names {
			vars = append(vars, mapping("name", names[i], "expression", literal(exprs[i])))
		}
		variables = seq(vars...)
	}
	var mutations []*yaml.Node
	for _, list := range containerLists {
		mutations = append(mutations, mapping(
			"patchType", "ApplyConfiguration",
			"applyConfiguration", mapping("expression", literal(applyExpr(c, list))),
		))
	}
	mutations[0].Content[0].HeadComment = commentMutation
	policy := mapping(
		"apiVersion", g.o.APIVersion,
		"kind", "MutatingAdmissionPolicy",
		"metadata", mapping("name", g.o.Name),
		"spec", mapping(
			key{"failurePolicy", commentFailure}, "Fail",
			key{"reinvocationPolicy", commentReinvocation}, "IfNeeded",
			"matchConstraints", g.matchConstraints(),
			key{"matchConditions", commentMirror}, g.matchConditions(),
			key{"variables", commentPins}, variables,
			"mutations", seq(mutations...),
		),
	)
	policy.HeadComment = g.header
	binding := mapping(
		"apiVersion", g.o.APIVersion,
		"kind", "MutatingAdmissionPolicyBinding",
		"metadata", mapping("name", g.o.Name),
		"spec", mapping(
			"policyName", g.o.Name,
			"matchResources", g.matchResources(),
		),
	)
	docs := []*yaml.Node{policy, binding}
	if g.o.Validate {
		docs = append(docs, g.validating(c)...)
	}
	return docs
}

// applyExpr is the mutation of one container list. Ephemeral containers
// that the Pod had before the request (oldObject, on an update of the
// ephemeralcontainers subresource) are left alone: the API server refuses
// any change to them.
func applyExpr(c celMapping, list string) string {
	filter := "has(c.image)"
	if list == "ephemeralContainers" {
		filter = "has(c.image) && !(" + oldEphemeral + ")"
	}
	return fmt.Sprintf(`has(object.spec.%[1]s) ?
Object{spec: Object.spec{%[1]s: object.spec.%[1]s.filter(c, %[3]s).map(c,
  Object.spec.%[1]s{name: c.name, image:
%[2]s
  })}} :
Object{}`, list, indent(c.image("c.image"), "  "), filter)
}

// oldEphemeral is true when the ephemeral container c was in the Pod
// before the request.
const oldEphemeral = "oldObject != null && has(oldObject.spec.ephemeralContainers) && oldObject.spec.ephemeralContainers.exists(o, o.name == c.name)"

func indent(s, by string) string {
	return by + strings.ReplaceAll(s, "\n", "\n"+by)
}

// matchConstraints selects Pod creations and updates, and updates of the
// ephemeralcontainers subresource (kubectl debug), whose object is the Pod.
func (g generator) matchConstraints() *yaml.Node {
	return mapping(
		"matchPolicy", "Equivalent",
		"namespaceSelector", emptySelector(),
		"objectSelector", emptySelector(),
		key{"resourceRules", commentRules}, seq(
			mapping(
				"apiGroups", []string{""},
				"apiVersions", []string{"v1"},
				"operations", []string{"CREATE"},
				"resources", []string{"pods"},
				"scope", "Namespaced",
			),
			mapping(
				"apiGroups", []string{""},
				"apiVersions", []string{"v1"},
				"operations", []string{"UPDATE"},
				"resources", []string{"pods/ephemeralcontainers"},
				"scope", "Namespaced",
			),
		))
}

// emptySelector selects everything. The API server defaults absent
// selectors to it; the policies spell it out.
func emptySelector() *yaml.Node {
	return &yaml.Node{Kind: yaml.MappingNode, Style: yaml.FlowStyle}
}

func (g generator) matchConditions() *yaml.Node {
	return seq(mapping(
		"name", "not-a-mirror-pod",
		"expression", "!has(object.metadata.annotations) || !('kubernetes.io/config.mirror' in object.metadata.annotations)",
	))
}

// matchResources holds the namespace selector.
func (g generator) matchResources() *yaml.Node {
	return mapping(
		"matchPolicy", "Equivalent",
		key{"namespaceSelector", selectorComment(g.o.NamespaceSelector)}, g.labelSelector(),
		"objectSelector", emptySelector(),
	)
}

func selectorComment(s string) string {
	if s == "" {
		return "every namespace"
	}
	if s == DefaultNamespaceSelector {
		return "every namespace but kube-system (rehost policy --namespace-selector):\nits Pods are the cluster's own, deployed already rewritten, and a net\nthere can only get in the way of repairing the control plane."
	}
	return "rehost policy --namespace-selector " + s
}

func (g generator) labelSelector() *yaml.Node {
	if len(g.sel) == 0 {
		return emptySelector()
	}
	var exprs []*yaml.Node
	for _, r := range g.sel {
		var values any
		if len(r.Values) > 0 {
			values = r.Values
		}
		exprs = append(exprs, mapping("key", r.Key, "operator", r.Operator, "values", values))
	}
	return mapping("matchExpressions", seq(exprs...))
}

// validating is the ValidatingAdmissionPolicy (always v1: stable since
// Kubernetes 1.30, before any MutatingAdmissionPolicy) and its binding.
func (g generator) validating(c celMapping) []*yaml.Node {
	name := g.o.Name + "-check"
	var lists []string
	for _, l := range containerLists {
		lists = append(lists, fmt.Sprintf("(has(object.spec.%[1]s) ? object.spec.%[1]s : [])", l))
	}
	images := "(oldObject == null ?\n" + strings.Join(lists, " +\n") +
		" :\n(has(object.spec.ephemeralContainers) ? object.spec.ephemeralContainers.filter(c, !(" + oldEphemeral + ")) : [])" +
		")\n.filter(c, has(c.image)).map(c, c.image)"
	uncovered := "variables.images.filter(s, !(\n" + indent(c.covered("s"), "  ") + "\n))"
	failure, actions := "Ignore", []string{"Warn", "Audit"}
	failureComment := "Ignore: a report must never block a Pod."
	if g.o.Deny {
		failure, actions = "Fail", []string{"Deny"}
		failureComment = "Fail: with --deny, a Pod the check cannot evaluate is rejected too."
	}
	policy := mapping(
		"apiVersion", "admissionregistration.k8s.io/v1",
		"kind", "ValidatingAdmissionPolicy",
		"metadata", mapping("name", name),
		"spec", mapping(
			key{"failurePolicy", failureComment}, failure,
			"matchConstraints", g.matchConstraints(),
			"matchConditions", g.matchConditions(),
			"variables", seq(
				mapping(key{"name", "The images of a new Pod, or of the ephemeral containers an update adds."}, "images", "expression", literal(images)),
				mapping(key{"name", "Valid references in the target registry or excluded need no rewriting;\nanything else the mutation did not cover."}, "uncovered", "expression", literal(uncovered)),
			),
			"validations", seq(mapping(
				"expression", "size(variables.uncovered) == 0",
				"messageExpression", fmt.Sprintf("'images outside %s that the rehost policy did not rewrite: ' + variables.uncovered.join(', ')", g.m.Root()),
				"reason", "Forbidden",
			)),
		),
	)
	binding := mapping(
		"apiVersion", "admissionregistration.k8s.io/v1",
		"kind", "ValidatingAdmissionPolicyBinding",
		"metadata", mapping("name", name),
		"spec", mapping(
			"policyName", name,
			key{"validationActions", commentValidationActions}, actions,
			"matchResources", g.matchResources(),
		),
	)
	return []*yaml.Node{policy, binding}
}
