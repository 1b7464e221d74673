package policy

import (
	"fmt"
	"strings"
	"testing"

	"github.com/rehost/rehost/pkg/policy"
	"github.com/rehost/rehost/pkg/rewrite"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/authentication/user"
)

// TestNamespaces: with the default selector, Pods in kube-system are left
// alone and Pods elsewhere rewritten; with an empty selector, every
// namespace is rewritten.
func TestNamespaces(t *testing.T) {
	for _, tt := range []struct {
		selector string
		want     map[string]string
	}{
		{policy.DefaultNamespaceSelector, map[string]string{"default": "sea.hub:5000/library/nginx", "apps": "sea.hub:5000/library/nginx", "kube-system": "nginx"}},
		{"", map[string]string{"default": "sea.hub:5000/library/nginx", "kube-system": "sea.hub:5000/library/nginx"}},
		{"kubernetes.io/metadata.name in (apps)", map[string]string{"default": "nginx", "apps": "sea.hub:5000/library/nginx"}},
	} {
		s := newAPIServer(t, generate(t, rewrite.Config{}, policy.Options{NamespaceSelector: tt.selector, Validate: true}))
		for ns, want := range tt.want {
			got, _, err := s.admit(podOf(ns, []string{"nginx"}), admission.Create, nil)
			if err != nil {
				t.Fatalf("selector %q, namespace %s: %v", tt.selector, ns, err)
			}
			if img := got.Spec.Containers[0].Image; img != want {
				t.Errorf("selector %q, namespace %s: image %s, want %s", tt.selector, ns, img, want)
			}
		}
	}
}

// TestMirrorPod: the API's copy of a static Pod is left as it is.
func TestMirrorPod(t *testing.T) {
	s := newAPIServer(t, generate(t, rewrite.Config{}, policy.Options{Validate: true, Deny: true}))
	p := podOf("apps", []string{"nginx", "busybox"})
	p.Annotations = map[string]string{"kubernetes.io/config.mirror": "0123"}
	got, _, err := s.admit(p, admission.Create, nil)
	if err != nil {
		t.Fatal(err)
	}
	if imgs := imagesOf(got); imgs[0] != "nginx" || imgs[1] != "busybox" {
		t.Errorf("mirror Pod changed: %v", imgs)
	}
	p.Annotations = map[string]string{"other": "x"}
	got, _, err = s.admit(p, admission.Create, nil)
	if err != nil || imagesOf(got)[0] != "sea.hub:5000/library/nginx" {
		t.Errorf("Pod with other annotations: %v, %v", err, got)
	}
}

// TestEphemeralContainers: kubectl debug adds an ephemeral container with
// an update of the pods/ephemeralcontainers subresource; its image is
// rewritten too, and reported by the check when it cannot be. The
// ephemeral containers the Pod had before (here one made before the policy,
// with a public image) are left alone: the API server refuses any change
// to them.
func TestEphemeralContainers(t *testing.T) {
	s := newAPIServer(t, generate(t, rewrite.Config{}, policy.Options{Validate: true, Deny: true}))
	ephemeral := func(name, image string) corev1.EphemeralContainer {
		return corev1.EphemeralContainer{EphemeralContainerCommon: corev1.EphemeralContainerCommon{Name: name, Image: image}}
	}
	old := podOf("apps", []string{"sea.hub:5000/library/nginx"})
	old.Spec.EphemeralContainers = []corev1.EphemeralContainer{ephemeral("before", "busybox")}
	debug := func(image string) (*corev1.Pod, error) {
		p := old.DeepCopy()
		p.Spec.EphemeralContainers = append(p.Spec.EphemeralContainers, ephemeral("debugger", image))
		attrs := admission.NewAttributesRecord(p, old, podGVK, p.Namespace, p.Name, podGVR, "ephemeralcontainers", admission.Update, &metav1.UpdateOptions{}, false, &user.DefaultInfo{Name: "tester"})
		if err := s.mutating.Admit(t.Context(), attrs, s.oi); err != nil {
			return nil, err
		}
		if err := s.validating.Validate(t.Context(), attrs, s.oi); err != nil {
			return nil, err
		}
		return attrs.GetObject().(*corev1.Pod), nil
	}
	got, err := debug("busybox:1.36")
	if err != nil {
		t.Fatal(err)
	}
	if e := got.Spec.EphemeralContainers; e[0].Image != "busybox" || e[1].Image != "sea.hub:5000/library/busybox:1.36" {
		t.Errorf("ephemeral container images %s, %s; want busybox (as it was), sea.hub:5000/library/busybox:1.36", e[0].Image, e[1].Image)
	}
	if _, err := debug("UPPER/case"); err == nil || !strings.Contains(err.Error(), "UPPER/case") || strings.Contains(err.Error(), "busybox") {
		t.Errorf("debugging with an invalid image: %v; want a denial naming UPPER/case alone", err)
	}
}

// TestPodUpdate: updates of a Pod (labels, annotations, images) are left
// alone: rewriting the images of a Pod created before the policy in an
// update would restart its containers; and the check does not block them.
func TestPodUpdate(t *testing.T) {
	s := newAPIServer(t, generate(t, rewrite.Config{}, policy.Options{Validate: true, Deny: true}))
	old := podOf("apps", []string{"nginx", "busybox"})
	p := old.DeepCopy()
	p.Labels = map[string]string{"a": "b"}
	got, _, err := s.admit(p, admission.Update, old)
	if err != nil {
		t.Fatal(err)
	}
	if imgs := imagesOf(got); imgs[0] != "nginx" || imgs[1] != "busybox" {
		t.Errorf("update changed images: %v", imgs)
	}
}

// TestFiftyContainers: Pods of 50 containers in one list, and 50 in each
// list, with the longest references the grammar allows (a 255-character
// path, a 128-character tag, a sha512 digest, an IPv6 registry), stay
// within the API server's CEL cost limits (a policy that exceeded them
// would reject the Pod: failurePolicy Fail) and are mapped right.
func TestFiftyContainers(t *testing.T) {
	long := func(i int) string {
		path := strings.Repeat("a", 200) + "/" + strings.Repeat("b", 40) + "/x" + strings.Repeat("0", 10-len(itoa(i))) + itoa(i)
		return "[1:2:3:4:5:6:7:8]:5000/" + path + ":" + strings.Repeat("t", 128) + "@sha512:" + strings.Repeat("f", 128)
	}
	for _, c := range configs {
		t.Run(c.name, func(t *testing.T) {
			m, err := rewrite.NewMapper(c.cfg)
			if err != nil {
				t.Fatal(err)
			}
			s := newAPIServer(t, generate(t, c.cfg, policy.Options{Validate: true}))
			var one, all []string
			for i := 0; i < 150; i++ {
				all = append(all, long(i))
				if i%3 == 0 {
					// podOf puts every third image in containers: 50 of
					// them, the rest in the other two lists.
					one = append(one, long(i))
				}
			}
			checkImages(t, s, m, all, 150)
			p := podOf("apps", nil)
			for i, img := range one {
				p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: "c" + itoa(i), Image: img})
			}
			got, _, err := s.admit(p, admission.Create, nil)
			if err != nil {
				t.Fatalf("50 containers: %v", err)
			}
			for i, ctr := range got.Spec.Containers {
				if w := want(m, one[i]); ctr.Image != w {
					t.Errorf("container %d: %s, want %s", i, shorten(ctr.Image), shorten(w))
				}
			}
		})
	}
}

func itoa(i int) string {
	if i == 0 {
		return "0"
	}
	var b []byte
	for ; i > 0; i /= 10 {
		b = append([]byte{byte('0' + i%10)}, b...)
	}
	return string(b)
}

// TestValidate: the validating policy reports (Warn) or, with --deny,
// rejects Pods with images the mutation left outside the target registry,
// and passes Pods whose images are all in the target or excluded.
func TestValidate(t *testing.T) {
	cfg := rewrite.Config{Registry: "sea.hub:5000/mirror", Exclude: []string{"quay.io"}}
	// Invalid references, and a target path over 255 characters
	// (mirror/ + 250), which rehost rewrite reports as errors.
	uncovered := []string{"UPPER/case:1", "nginx@sha256:abc", "ghcr.io/" + strings.Repeat("a", 250)}
	clean := []string{"nginx", "quay.io/team/app:1", "sea.hub:5000/x:1", "ghcr.io/org/app@" + dig}
	for _, deny := range []bool{false, true} {
		s := newAPIServer(t, generate(t, cfg, policy.Options{Validate: true, Deny: deny}))
		_, warns, err := s.admit(podOf("apps", clean), admission.Create, nil)
		if err != nil || len(warns) > 0 {
			t.Errorf("deny=%v: clean Pod: error %v, warnings %q", deny, err, warns)
		}
		_, warns, err = s.admit(podOf("apps", append(append([]string{}, clean...), uncovered...)), admission.Create, nil)
		msg := strings.Join(warns, "\n")
		if deny {
			if err == nil {
				t.Fatalf("deny: Pod with uncovered images admitted")
			}
			msg = err.Error()
		} else if err != nil {
			t.Fatalf("report: Pod rejected: %v", err)
		}
		for _, img := range uncovered {
			if !strings.Contains(msg, img) {
				t.Errorf("deny=%v: message %q does not name %s", deny, msg, img)
			}
		}
		for _, img := range clean[1:] {
			if strings.Contains(msg, img) {
				t.Errorf("deny=%v: message %q names covered image %s", deny, msg, img)
			}
		}
	}
}

// TestValidateWithoutMutation: the validating policy alone (a cluster
// without MutatingAdmissionPolicy, or with the mutation removed) reports
// the images that were not rewritten.
func TestValidateWithoutMutation(t *testing.T) {
	stream := string(generate(t, rewrite.Config{}, policy.Options{Validate: true}))
	docs := strings.Split(stream, "\n---\n")
	var kept []string
	for _, d := range docs {
		if strings.Contains(d, "kind: Validating") {
			kept = append(kept, d)
		}
	}
	if len(kept) != 2 {
		t.Fatalf("%d validating documents, want 2", len(kept))
	}
	s := newAPIServer(t, []byte(strings.Join(kept, "\n---\n")))
	got, warns, err := s.admit(podOf("apps", []string{"nginx", "sea.hub:5000/library/nginx"}), admission.Create, nil)
	if err != nil || got.Spec.Containers[0].Image != "nginx" {
		t.Fatalf("admit: %v", err)
	}
	if len(warns) != 1 || !strings.Contains(warns[0], "nginx") || strings.Contains(warns[0], "sea.hub:5000/library/nginx") {
		t.Errorf("warnings %q, want one naming nginx only", warns)
	}
}

// TestPins: pinned images get their pinned target, as with rehost rewrite
// --pins; others the mapped one.
func TestPins(t *testing.T) {
	pinned := "sea.hub:5000/library/nginx:1.25@" + dig
	pins := rewrite.Pins{}
	for src, dst := range map[string]string{"docker.io/library/nginx:1.25": pinned, "quay.io/a/b:latest": "sea.hub:5000/a/b@" + dig} {
		r, err := rewrite.ParseRef(dst)
		if err != nil {
			t.Fatal(err)
		}
		pins[src] = r
	}
	m, err := rewrite.NewMapper(rewrite.Config{})
	if err != nil {
		t.Fatal(err)
	}
	m = m.WithPins(pins)
	s := newAPIServer(t, generate(t, rewrite.Config{}, policy.Options{Pins: pins}))
	images := []string{"nginx:1.25", "docker.io/library/nginx:1.25", "nginx:1.26", "nginx", "quay.io/a/b", "quay.io/a/b:latest", "quay.io/a/b:2", "nginx:1.25@" + dig}
	checkImages(t, s, m, images, 10)
	if want(m, "nginx:1.25") != pinned {
		t.Fatalf("the mapper does not pin: %s", want(m, "nginx:1.25"))
	}
}

// TestContainerWithoutImage (issue 29, item 10): a container without an
// image is skipped by the mutation and by the check, in every list; the
// other containers of the Pod are rewritten. The Kyverno form does the
// same (test/e2e TestPolicyKyvernoNoImage).
func TestContainerWithoutImage(t *testing.T) {
	s := newAPIServer(t, generate(t, rewrite.Config{}, policy.Options{Validate: true, Deny: true}))
	p := podOf("apps", []string{"nginx", "busybox", "alpine"})
	p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: "noimage"})
	p.Spec.InitContainers = append([]corev1.Container{{Name: "noimage-init"}}, p.Spec.InitContainers...)
	p.Spec.EphemeralContainers = append(p.Spec.EphemeralContainers, corev1.EphemeralContainer{EphemeralContainerCommon: corev1.EphemeralContainerCommon{Name: "noimage-debug"}})
	got, warns, err := s.admit(p, admission.Create, nil)
	if err != nil {
		t.Fatalf("%v (warnings %v)", err, warns)
	}
	if got.Spec.Containers[0].Image != "sea.hub:5000/library/nginx" || got.Spec.Containers[1].Image != "" ||
		got.Spec.InitContainers[0].Image != "" || got.Spec.InitContainers[1].Image != "sea.hub:5000/library/busybox" ||
		got.Spec.EphemeralContainers[0].Image != "sea.hub:5000/library/alpine" || got.Spec.EphemeralContainers[1].Image != "" {
		t.Errorf("got %+v %+v %+v", got.Spec.Containers, got.Spec.InitContainers, got.Spec.EphemeralContainers)
	}
}

// TestPinsAtScale (issue 29, item 9): a policy with 3,000 pins, defined
// once in spec.variables (split in maps the API server's CEL parser
// takes), compiles and evaluates within the admission plugins' limits at
// every API version, and gives each image what rehost rewrite --pins
// gives it: pinned sources in any spelling, sources with another tag or
// without one, unpinned images.
func TestPinsAtScale(t *testing.T) {
	pins := rewrite.Pins{}
	var images []string
	for i := 0; i < 3000; i++ {
		src := fmt.Sprintf("registry.example.com/team-%02d/app-%04d:1.%02d", i%97, i, i%89)
		dst, err := rewrite.ParseRef(fmt.Sprintf("sea.hub:5000/team-%02d/app-%04d:1.%02d@sha256:%064x", i%97, i, i%89, i*7919+1))
		if err != nil {
			t.Fatal(err)
		}
		pins[src] = dst
		if i%100 == 0 {
			images = append(images, src, strings.Replace(src, ":1.", ":2.", 1), strings.ToUpper(src[:8])+src[8:])
		}
	}
	// Docker Hub spellings and a source pinned without a tag.
	for src, dst := range map[string]string{"docker.io/library/nginx:1.25": "sea.hub:5000/library/nginx:1.25@" + dig, "docker.io/library/redis:latest": "sea.hub:5000/library/redis:latest@" + dig} {
		r, err := rewrite.ParseRef(dst)
		if err != nil {
			t.Fatal(err)
		}
		pins[src] = r
	}
	images = append(images, "nginx:1.25", "index.docker.io/nginx:1.25", "redis", "redis:latest", "docker.io/library/redis", "redis:7", "nginx")
	m, err := rewrite.NewMapper(rewrite.Config{})
	if err != nil {
		t.Fatal(err)
	}
	m = m.WithPins(pins)
	pinned := 0
	for _, img := range images {
		if strings.Contains(want(m, img), "@sha256:") {
			pinned++
		}
	}
	if pinned < 35 {
		t.Fatalf("only %d of %d images pinned: the test pins nothing", pinned, len(images))
	}
	for _, v := range []string{policy.V1, policy.V1beta1, policy.V1alpha1} {
		t.Run(v[strings.LastIndex(v, "/")+1:], func(t *testing.T) {
			s := newAPIServer(t, generate(t, rewrite.Config{}, policy.Options{APIVersion: v, Pins: pins, Validate: true, Deny: true}))
			checkImages(t, s, m, images, 30)
		})
	}
}
