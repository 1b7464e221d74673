package policy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	admissionv1alpha1 "k8s.io/api/admissionregistration/v1alpha1"
	admissionv1beta1 "k8s.io/api/admissionregistration/v1beta1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/admission/initializer"
	"k8s.io/apiserver/pkg/admission/plugin/policy/mutating"
	"k8s.io/apiserver/pkg/admission/plugin/policy/validating"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/util/compatibility"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/apiserver/pkg/warning"
	"k8s.io/client-go/discovery"
	fakediscovery "k8s.io/client-go/discovery/fake"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/openapi"
	"k8s.io/client-go/openapi/openapitest"
)

var (
	podGVK = schema.GroupVersionKind{Version: "v1", Kind: "Pod"}
	podGVR = schema.GroupVersionResource{Version: "v1", Resource: "pods"}
)

// apiServer is the admission half of an API server: the
// MutatingAdmissionPolicy and ValidatingAdmissionPolicy plugins of
// k8s.io/apiserver, initialised as the API server initialises them, with a
// fake clientset holding the policies, their bindings and the namespaces,
// and the Pod schema that client-go embeds (for ApplyConfiguration's
// structured merge).
type apiServer struct {
	mutating   *mutating.Plugin
	validating *validating.Plugin
	oi         admission.ObjectInterfaces
}

// clientset serves the embedded OpenAPI v3 schemas from discovery, which
// the fake clientset does not.
type clientset struct{ *fake.Clientset }

func (c clientset) Discovery() discovery.DiscoveryInterfaces {
	return openAPIDiscovery{c.Clientset.Discovery().(*fakediscovery.FakeDiscovery)}
}

type openAPIDiscovery struct{ *fakediscovery.FakeDiscovery }

func (openAPIDiscovery) OpenAPIV3() openapi.Client { return openapitest.NewEmbeddedFileClient() }

// allowAll authorizes everything: the policies make no authorizer checks.
var allowAll = authorizer.AuthorizerFunc(func(context.Context, authorizer.Attributes) (authorizer.Decision, string, error) {
	return authorizer.DecisionAllow, "", nil
})

// namespaces of the test cluster, labelled as the API server labels them.
var namespaces = []string{"default", "kube-system", "apps"}

// newAPIServer loads the YAML stream rehost policy wrote and starts the
// admission plugins with it.
func newAPIServer(t testing.TB, stream []byte) *apiServer {
	t.Helper()
	objs, err := decodePolicies(stream)
	if err != nil {
		t.Fatal(err)
	}
	for _, ns := range namespaces {
		objs = append(objs, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: map[string]string{"kubernetes.io/metadata.name": ns}}})
	}
	cs := clientset{fake.NewSimpleClientset(objs...)}
	scheme := runtime.NewScheme()
	if err := corev1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	rm := meta.NewDefaultRESTMapper(nil)
	rm.Add(podGVK, meta.RESTScopeNamespace)
	stop := make(chan struct{})
	t.Cleanup(func() { close(stop) })
	factory := informers.NewSharedInformerFactory(cs, 0)
	init := initializer.New(cs, dynamicfake.NewSimpleDynamicClient(scheme), factory, allowAll, utilfeature.DefaultFeatureGate, compatibility.DefaultBuildEffectiveVersion(), stop, rm)

	s := &apiServer{oi: admission.NewObjectInterfacesFromScheme(scheme)}
	if s.mutating, err = mutating.NewPlugin(nil); err != nil {
		t.Fatal(err)
	}
	if s.validating, err = validating.NewPlugin(nil); err != nil {
		t.Fatal(err)
	}
	for _, p := range []admission.InitializationValidator{s.mutating, s.validating} {
		init.Initialize(p.(admission.Interface))
		if err := p.ValidateInitialization(); err != nil {
			t.Fatal(err)
		}
	}
	factory.Start(stop)
	factory.WaitForCacheSync(stop)
	if !s.mutating.WaitForReady() || !s.validating.WaitForReady() {
		t.Fatal("admission plugins not ready")
	}
	return s
}

// decodePolicies decodes the documents strictly into the types of their
// apiVersion, and returns them as the v1 objects the plugins read (the
// versions have the same fields).
func decodePolicies(stream []byte) ([]runtime.Object, error) {
	var out []runtime.Object
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(stream), 4096)
	for {
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			return nil, err
		}
		var tm metav1.TypeMeta
		if err := json.Unmarshal(raw, &tm); err != nil {
			return nil, err
		}
		versioned, v1obj := typesOf(tm)
		if versioned == nil {
			return nil, fmt.Errorf("unexpected document %s %s", tm.APIVersion, tm.Kind)
		}
		strict := json.NewDecoder(bytes.NewReader(raw))
		strict.DisallowUnknownFields()
		if err := strict.Decode(versioned); err != nil {
			return nil, fmt.Errorf("%s %s: %v", tm.APIVersion, tm.Kind, err)
		}
		data, err := json.Marshal(versioned)
		if err != nil {
			return nil, err
		}
		if err := json.Unmarshal(data, v1obj); err != nil {
			return nil, err
		}
		out = append(out, v1obj)
	}
}

func typesOf(tm metav1.TypeMeta) (versioned any, v1obj runtime.Object) {
	switch tm.APIVersion + " " + tm.Kind {
	case "admissionregistration.k8s.io/v1 MutatingAdmissionPolicy":
		return &admissionv1.MutatingAdmissionPolicy{}, &admissionv1.MutatingAdmissionPolicy{}
	case "admissionregistration.k8s.io/v1 MutatingAdmissionPolicyBinding":
		return &admissionv1.MutatingAdmissionPolicyBinding{}, &admissionv1.MutatingAdmissionPolicyBinding{}
	case "admissionregistration.k8s.io/v1beta1 MutatingAdmissionPolicy":
		return &admissionv1beta1.MutatingAdmissionPolicy{}, &admissionv1.MutatingAdmissionPolicy{}
	case "admissionregistration.k8s.io/v1beta1 MutatingAdmissionPolicyBinding":
		return &admissionv1beta1.MutatingAdmissionPolicyBinding{}, &admissionv1.MutatingAdmissionPolicyBinding{}
	case "admissionregistration.k8s.io/v1alpha1 MutatingAdmissionPolicy":
		return &admissionv1alpha1.MutatingAdmissionPolicy{}, &admissionv1.MutatingAdmissionPolicy{}
	case "admissionregistration.k8s.io/v1alpha1 MutatingAdmissionPolicyBinding":
		return &admissionv1alpha1.MutatingAdmissionPolicyBinding{}, &admissionv1.MutatingAdmissionPolicyBinding{}
	case "admissionregistration.k8s.io/v1 ValidatingAdmissionPolicy":
		return &admissionv1.ValidatingAdmissionPolicy{}, &admissionv1.ValidatingAdmissionPolicy{}
	case "admissionregistration.k8s.io/v1 ValidatingAdmissionPolicyBinding":
		return &admissionv1.ValidatingAdmissionPolicyBinding{}, &admissionv1.ValidatingAdmissionPolicyBinding{}
	}
	return nil, nil
}

// warnings records the warnings admission adds to a response.
type warnings struct {
	mu   sync.Mutex
	text []string
}

func (w *warnings) AddWarning(_, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.text = append(w.text, text)
}

// admit runs a Pod request through the mutating plugin, then the
// validating plugin, as the API server does: it returns the Pod as it
// would be stored, the warnings, and the error that rejects the request.
func (s *apiServer) admit(pod *corev1.Pod, op admission.Operation, old *corev1.Pod) (*corev1.Pod, []string, error) {
	obj := pod.DeepCopy()
	var oldObj runtime.Object
	if old != nil {
		oldObj = old
	}
	var opts runtime.Object = &metav1.CreateOptions{}
	if op == admission.Update {
		opts = &metav1.UpdateOptions{}
	}
	w := &warnings{}
	ctx := warning.WithWarningRecorder(context.Background(), w)
	attrs := admission.NewAttributesRecord(obj, oldObj, podGVK, obj.Namespace, obj.Name, podGVR, "", op, opts, false, &user.DefaultInfo{Name: "tester"})
	if err := s.mutating.Admit(ctx, attrs, s.oi); err != nil {
		return nil, w.text, err
	}
	if err := s.validating.Validate(ctx, attrs, s.oi); err != nil {
		return nil, w.text, err
	}
	return attrs.GetObject().(*corev1.Pod), w.text, nil
}

// podOf builds a Pod whose containers, init containers and ephemeral
// containers (in turn) have the given images.
func podOf(ns string, images []string) *corev1.Pod {
	p := &corev1.Pod{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: ns},
	}
	for i, img := range images {
		name := fmt.Sprintf("c%d", i)
		switch i % 3 {
		case 0:
			p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: name, Image: img})
		case 1:
			p.Spec.InitContainers = append(p.Spec.InitContainers, corev1.Container{Name: name, Image: img})
		case 2:
			p.Spec.EphemeralContainers = append(p.Spec.EphemeralContainers, corev1.EphemeralContainer{EphemeralContainerCommon: corev1.EphemeralContainerCommon{Name: name, Image: img}})
		}
	}
	return p
}

// imagesOf lists a Pod's images in podOf's order.
func imagesOf(p *corev1.Pod) []string {
	n := len(p.Spec.Containers) + len(p.Spec.InitContainers) + len(p.Spec.EphemeralContainers)
	out := make([]string, n)
	for i := range out {
		switch k := i / 3; i % 3 {
		case 0:
			out[i] = p.Spec.Containers[k].Image
		case 1:
			out[i] = p.Spec.InitContainers[k].Image
		case 2:
			out[i] = p.Spec.EphemeralContainers[k].Image
		}
	}
	return out
}

func shorten(s string) string {
	if len(s) > 120 {
		return s[:117] + "..."
	}
	return strings.ToValidUTF8(s, "?")
}
