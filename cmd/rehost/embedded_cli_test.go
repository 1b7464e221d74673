package main

import (
	"strings"
	"testing"
)

const certManager = `apiVersion: apps/v1
kind: Deployment
metadata: {name: cert-manager, namespace: cert-manager}
spec:
  template:
    spec:
      containers:
      - name: controller
        image: quay.io/jetstack/cert-manager-controller:v1.16.1
        args:
        - --v=2
        - --acme-http01-solver-image=quay.io/jetstack/cert-manager-acmesolver:v1.16.1
        env:
        - {name: HELPER_IMAGE, value: "busybox:1.36"}
`

// TestEmbeddedImages: with --no-named-embedded, "images" lists embedded
// references only with --embedded, after the others; otherwise one stderr
// line counts them. (TestNamedEmbedded: the default.)
func TestEmbeddedImages(t *testing.T) {
	out, errOut, code := rehost(t, certManager, "images", "--no-named-embedded")
	if code != 0 || out != "quay.io/jetstack/cert-manager-controller:v1.16.1\n" {
		t.Fatalf("code %d, stdout %q, stderr %q", code, out, errOut)
	}
	if !hasFacts(errOut, "rehost: 2 image reference(s)", "(2 image(s))", "not listed", "--embedded") || strings.Count(errOut, "\n") != 1 {
		t.Errorf("stderr %q: want one summary line", errOut)
	}

	out, errOut, code = rehost(t, certManager, "images", "--embedded", "--no-named-embedded")
	want := "quay.io/jetstack/cert-manager-controller:v1.16.1\ndocker.io/library/busybox:1.36\nquay.io/jetstack/cert-manager-acmesolver:v1.16.1\n"
	if code != 0 || out != want || errOut != "" {
		t.Errorf("--embedded: code %d, stdout %q (want %q), stderr %q", code, out, want, errOut)
	}

	out, _, code = rehost(t, certManager, "images", "--embedded", "-o", "json")
	var images []struct {
		Source      string
		Occurrences []struct {
			Line     int
			Field    string
			Value    string
			Embedded bool
		}
	}
	if err := decodeImages(out, &images); code != 0 || err != nil || len(images) != 3 {
		t.Fatalf("code %d, %v: %s", code, err, out)
	}
	if o := images[2].Occurrences[0]; images[2].Source != "quay.io/jetstack/cert-manager-acmesolver:v1.16.1" || !o.Embedded || o.Line != 12 || o.Field != "spec.template.spec.containers[0].args[1]" {
		t.Errorf("json: %+v", images[2])
	}
	if images[0].Occurrences[0].Embedded {
		t.Errorf("the Pod-spec image is marked embedded: %+v", images[0])
	}
}

// TestEmbeddedRewrite: with --no-named-embedded, "rewrite" leaves embedded
// references and says so; --rewrite-embedded (or rewriteEmbedded in the
// config) rewrites them in place.
func TestEmbeddedRewrite(t *testing.T) {
	field := strings.Replace(certManager, "image: quay.io/jetstack", "image: sea.hub:5000/jetstack", 1)
	out, errOut, code := rehost(t, certManager, "rewrite", "--no-named-embedded")
	if code != 0 || out != field || !hasFacts(errOut, "2 image reference(s)", "not rewritten", "--rewrite-embedded") {
		t.Errorf("code %d, stdout:\n%s\nstderr %q", code, out, errOut)
	}
	all := strings.NewReplacer("image: quay.io/jetstack", "image: sea.hub:5000/jetstack", "=quay.io/jetstack", "=sea.hub:5000/jetstack", `"busybox:1.36"`, `"sea.hub:5000/library/busybox:1.36"`).Replace(certManager)
	out, errOut, code = rehost(t, certManager, "rewrite", "--rewrite-embedded")
	if code != 0 || out != all || errOut != "" {
		t.Errorf("--rewrite-embedded: code %d, stdout:\n%s\nstderr %q", code, out, errOut)
	}
	dir := writeFiles(t, map[string]string{"c.yaml": "kind: RewriteConfig\nrewriteEmbedded: true\n"})
	out, _, code = rehost(t, certManager, "rewrite", "--config", dir+"/c.yaml")
	if code != 0 || out != all {
		t.Errorf("config rewriteEmbedded: code %d, stdout:\n%s", code, out)
	}
	out, _, code = rehost(t, certManager, "images", "--config", dir+"/c.yaml")
	if code != 0 || strings.Count(out, "\n") != 3 {
		t.Errorf("images with rewriteEmbedded lists what is rewritten: code %d, stdout:\n%s", code, out)
	}
}

// TestNamedEmbedded: by default the references in image-named flags and
// env vars are listed, rewritten and mirrored like image fields; the free
// text ones are summed up in one line by images, rewrite and mirror alike.
func TestNamedEmbedded(t *testing.T) {
	in := certManager + `---
apiVersion: v1
kind: ConfigMap
metadata: {name: kiali}
data:
  config.yaml: |
    deployment:
      image: docker.io/jaegertracing/all-in-one:1.60
`
	out, errOut, code := rehost(t, in, "images")
	want := "quay.io/jetstack/cert-manager-controller:v1.16.1\ndocker.io/library/busybox:1.36\nquay.io/jetstack/cert-manager-acmesolver:v1.16.1\n"
	summary := "rehost: 1 image reference(s) embedded in args, env values, ConfigMap data or annotations (1 image(s)) found and not "
	if code != 0 || out != want || !strings.HasPrefix(errOut, summary+"listed; --embedded lists them") || strings.Count(errOut, "\n") != 1 {
		t.Errorf("images: code %d, stdout %q, stderr %q", code, out, errOut)
	}

	out, errOut, code = rehost(t, in, "rewrite")
	wantOut := strings.NewReplacer("image: quay.io/jetstack", "image: sea.hub:5000/jetstack", "=quay.io/jetstack", "=sea.hub:5000/jetstack", `"busybox:1.36"`, `"sea.hub:5000/library/busybox:1.36"`).Replace(in)
	if code != 0 || out != wantOut || !strings.HasPrefix(errOut, summary+"rewritten;") {
		t.Errorf("rewrite: code %d, stdout:\n%s\nstderr %q", code, out, errOut)
	}

	out, errOut, code = rehost(t, in, "mirror", "--dry-run", "--progress", "plain")
	if code != 0 || !strings.Contains(out+errOut, "quay.io/jetstack/cert-manager-acmesolver:v1.16.1") || !strings.Contains(out+errOut, "docker.io/library/busybox:1.36") ||
		strings.Contains(out+errOut, "jaegertracing/all-in-one:1.60 ") || !strings.Contains(errOut, summary+"copied;") {
		t.Errorf("mirror: code %d, stdout %q, stderr %q", code, out, errOut)
	}
	out, errOut, code = rehost(t, in, "mirror", "--dry-run", "--progress", "plain", "--no-named-embedded")
	if plan := out + errOut; code != 0 || !strings.Contains(plan, "cert-manager-controller:v1.16.1") || strings.Contains(plan, "acmesolver:v1.16.1 ") || strings.Contains(plan, "acmesolver:v1.16.1\n") {
		t.Errorf("mirror --no-named-embedded: code %d, stdout %q, stderr %q", code, out, errOut)
	}

	// -o json marks them named.
	out, _, _ = rehost(t, in, "images", "-o", "json")
	if strings.Count(out, `"named": true`) != 2 {
		t.Errorf("json:\n%s", out)
	}
}
