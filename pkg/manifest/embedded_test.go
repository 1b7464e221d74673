package manifest

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/rehost/rehost/pkg/rewrite"
	"go.yaml.in/yaml/v3"
)

// TestScanString: the three places a token can sit in a string, and the
// context that lets a bare name:tag count.
func TestScanString(t *testing.T) {
	tests := []struct {
		s    string
		ctx  bool
		want []string // "at:value"
	}{
		{"quay.io/jetstack/cert-manager-acmesolver:v1.16.1", false, []string{"0:quay.io/jetstack/cert-manager-acmesolver:v1.16.1"}},
		{"  ghcr.io/a/b:1\n", false, []string{"2:ghcr.io/a/b:1"}},
		{"--acme-http01-solver-image=quay.io/jetstack/cert-manager-acmesolver:v1.16.1", false, []string{"27:quay.io/jetstack/cert-manager-acmesolver:v1.16.1"}},
		{"--prometheus-config-reloader=quay.io/prometheus-operator/prometheus-config-reloader:v0.75.0", false, []string{"29:quay.io/prometheus-operator/prometheus-config-reloader:v0.75.0"}},
		{"-helper-image=busybox:1.36", false, []string{"14:busybox:1.36"}},
		{"--helper=busybox:1.36", false, nil},
		{"--prometheus-default-base-image=quay.io/prometheus/prometheus", false, []string{"32:quay.io/prometheus/prometheus"}},
		{"nginx:1.25", false, nil},
		{"nginx:1.25", true, []string{"0:nginx:1.25"}},
		{"nginx", true, nil},
		{"quay.io/org/app", false, nil},
		{"quay.io/org/app", true, []string{"0:quay.io/org/app"}},
		{"image: nginx:1.25", false, []string{"7:nginx:1.25"}},
		{"a: b\n  image: 'quay.io/x/y:1' # comment\nc: d", false, []string{"15:quay.io/x/y:1"}},
		{"- image: nginx:1.25\n- name: x", false, []string{"9:nginx:1.25"}},
		{`{"image": "nginx:1.25",`, false, nil},
		{"{\n  \"image\": \"nginx:1.25\",\n  \"x\": 1\n}", false, []string{"14:nginx:1.25"}},
		{"BUSYBOX_IMAGE=busybox:1.36\nOTHER=redis:7", false, []string{"14:busybox:1.36"}},
		{"image: nginx:1.25 in an annotation is not an image field", false, nil},
		{"imagePullPolicy: IfNotPresent", false, nil},
		{"image_version: v1.89", false, nil},
		{"image: \"{{ .Values.image }}\"", false, nil},
	}
	for _, tt := range tests {
		name := tt.s
		if tt.ctx {
			name += " in an image context"
		}
		t.Run(name, func(t *testing.T) {
			var got []string
			for _, tok := range scanString(tt.s, tt.ctx, false) {
				got = append(got, fmt.Sprintf("%d:%s", tok.at, tok.value))
				if tt.s[tok.at:tok.at+len(tok.value)] != tok.value {
					t.Errorf("token %q is not at %d", tok.value, tok.at)
				}
			}
			if strings.Join(got, " ") != strings.Join(tt.want, " ") {
				t.Errorf("scanString(%q, %v) = %q, want %q", tt.s, tt.ctx, got, tt.want)
			}
		})
	}
}

// TestIsCandidate: what is and is not an image reference, in and out of an
// image context.
func TestIsCandidate(t *testing.T) {
	tests := []struct {
		v         string
		plain, in bool // a candidate without, with the image context
	}{
		{"quay.io/jetstack/cert-manager-acmesolver:v1.16.1", true, true},
		{"docker.io/library/redis:7", true, true},
		{"registry.example.com:5000/team/app@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", true, true},
		{"localhost:5000/app:1", true, true},
		{"localhost/app:1", true, true},
		{"longhornio/csi-attacher:v4.7.0", false, true},
		{"busybox:1.36", false, true},
		{"registry:2", false, true},
		{"quay.io/prometheus/prometheus", false, true},
		// IPv6 registry hosts (issue 29: an IPv6 target writes them).
		{"[fd00::1]:5000/team/app:1", true, true},
		{"[::1]/app@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", true, true},
		{"[::1]:5000/app", false, true},
		{"[::1]:5000", false, false},
		{"[::g]:5000/app:1", false, false},
		{"[1::2::3]/app:1", false, false},
		{"[::1]/[x]:1", false, false},
		{"a[::1]/app:1", false, false},
		{"[::1/app]:1", false, false},
		// Not images, anywhere.
		{"https://quay.io/org/app:1", false, false},
		{"http://127.0.0.1:8080/", false, false},
		{"oci://ghcr.io/a/b:1", false, false},
		{"127.0.0.1:8080", false, false},
		{"registry.local:5000", false, false},
		{"localhost:8080", false, false},
		{"redis-master:6379", false, false},
		{":8443", false, false},
		{"0.0.0.0:8443", false, false},
		{"system:auth-delegator", false, true}, // a bare name:tag: only where the key says image
		{"system:serviceaccounts", false, true},
		{"/etc/prometheus/prometheus.yml", false, false},
		{"/var/lib/kubelet", false, false},
		{"./config:ro", false, false},
		{"registry/*", false, false},
		{"ghcr.io/kyverno/*", false, false},
		{"!*:latest", false, false},
		{"v1.2.3", false, false},
		{"1.16.1", false, false},
		{"foo=bar:baz", false, false},
		{"replicate:3", false, true},
		{"kube-system/kubelet", false, false},
		{"runtime/default", false, false},
		{"localhost/k8s-apparmor-example-deny-write", false, true},
		{"sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", false, false},
		{"IfNotPresent", false, false},
		{"UPPER/case:1", false, false},
		{"user@example.com", false, false},
		{"git@github.com:org/repo.git", false, false},
		{"nginx:1.25 extra", false, false},
		{"", false, false},
	}
	for _, tt := range tests {
		name := tt.v
		if name == "" {
			name = "empty"
		}
		t.Run(name, func(t *testing.T) {
			if got := isCandidate(tt.v, false); got != tt.plain {
				t.Errorf("isCandidate(%q, false) = %v, want %v", tt.v, got, tt.plain)
			}
			if got := isCandidate(tt.v, true); got != tt.in {
				t.Errorf("isCandidate(%q, true) = %v, want %v", tt.v, got, tt.in)
			}
		})
	}
}

// TestEmbeddedSnippets: realistic documents; the embedded references found
// (field=source), and the output with RewriteEmbedded. Negative snippets
// find nothing.
func TestEmbeddedSnippets(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []string // field=source of embedded occurrences
		repl []string // old, new pairs: the output with RewriteEmbedded
	}{
		{
			name: "cert-manager controller args",
			in: `apiVersion: apps/v1
kind: Deployment
metadata: {name: cert-manager, namespace: cert-manager}
spec:
  template:
    spec:
      containers:
      - name: cert-manager-controller
        image: quay.io/jetstack/cert-manager-controller:v1.16.1
        args:
        - --v=2
        - --cluster-resource-namespace=$(POD_NAMESPACE)
        - --leader-election-namespace=kube-system
        - --acme-http01-solver-image=quay.io/jetstack/cert-manager-acmesolver:v1.16.1
        - --max-concurrent-challenges=60
`,
			want: []string{"spec.template.spec.containers[0].args[3]=quay.io/jetstack/cert-manager-acmesolver:v1.16.1"},
			repl: []string{"image: quay.io/jetstack", "image: sea.hub:5000/jetstack", "=quay.io/jetstack", "=sea.hub:5000/jetstack"},
		},
		{
			name: "prometheus-operator args",
			in: `apiVersion: apps/v1
kind: Deployment
metadata: {name: prometheus-operator}
spec:
  template:
    spec:
      containers:
      - name: prometheus-operator
        image: "quay.io/prometheus-operator/prometheus-operator:v0.75.0"
        args:
        - --kubelet-service=kube-system/kubelet
        - "--prometheus-config-reloader=quay.io/prometheus-operator/prometheus-config-reloader:v0.75.0"
        - '--thanos-default-base-image=quay.io/thanos/thanos:v0.36.1'
        - --web.listen-address=:8080
        - --config-reloader-cpu-limit=0
`,
			want: []string{
				"spec.template.spec.containers[0].args[1]=quay.io/prometheus-operator/prometheus-config-reloader:v0.75.0",
				"spec.template.spec.containers[0].args[2]=quay.io/thanos/thanos:v0.36.1",
			},
			repl: []string{`"quay.io/prometheus-operator/prometheus-operator`, `"sea.hub:5000/prometheus-operator/prometheus-operator`,
				"=quay.io/prometheus-operator", "=sea.hub:5000/prometheus-operator", "=quay.io/thanos", "=sea.hub:5000/thanos"},
		},
		{
			name: "longhorn manager command with separate flag values, CSI image env values",
			in: `apiVersion: apps/v1
kind: DaemonSet
metadata: {name: longhorn-manager, namespace: longhorn-system}
spec:
  template:
    spec:
      containers:
      - name: longhorn-manager
        image: longhornio/longhorn-manager:v1.7.2
        command:
        - longhorn-manager
        - -d
        - daemon
        - --engine-image
        - "longhornio/longhorn-engine:v1.7.2"
        - --instance-manager-image
        - longhornio/longhorn-instance-manager:v1.7.2
        - --service-account
        - longhorn-service-account
        - --upgrade-version-check
        env:
        - name: CSI_ATTACHER_IMAGE
          value: longhornio/csi-attacher:v4.7.0
        - name: POD_IP
          valueFrom: {fieldRef: {fieldPath: status.podIP}}
        - name: DEFAULT_SETTING_PATH
          value: /var/lib/longhorn-setting/default-setting.yaml
`,
			want: []string{
				"spec.template.spec.containers[0].command[4]=docker.io/longhornio/longhorn-engine:v1.7.2",
				"spec.template.spec.containers[0].command[6]=docker.io/longhornio/longhorn-instance-manager:v1.7.2",
				"spec.template.spec.containers[0].env[0].value=docker.io/longhornio/csi-attacher:v4.7.0",
			},
			repl: []string{"image: longhornio", "image: sea.hub:5000/longhornio", `"longhornio/longhorn-engine`, `"sea.hub:5000/longhornio/longhorn-engine`,
				"- longhornio/longhorn-instance-manager", "- sea.hub:5000/longhornio/longhorn-instance-manager", "value: longhornio/csi", "value: sea.hub:5000/longhornio/csi"},
		},
		{
			name: "ConfigMap holding YAML and JSON with image lines; data keys that say image",
			in: `apiVersion: v1
kind: ConfigMap
metadata: {name: kiali, namespace: istio-system}
data:
  config.yaml: |
    deployment:
      image_name: quay.io/kiali/kiali
      image_version: v1.89
      namespace: istio-system
    external_services:
      prometheus: {url: "http://prometheus.istio-system:9090"}
    addons:
    - name: jaeger
      image: "docker.io/jaegertracing/all-in-one:1.60" # comment
  runner.json: '{"image": "alpine:3.20"}'
  HELPER_IMAGE: "busybox:1.36"
  plain: quay.io/org/tool:v2
`,
			want: []string{
				"data.HELPER_IMAGE=docker.io/library/busybox:1.36",
				"data.config.yaml=docker.io/jaegertracing/all-in-one:1.60",
				"data.config.yaml=quay.io/kiali/kiali:latest",
				"data.plain=quay.io/org/tool:v2",
			},
			repl: []string{"image_name: quay.io/", "image_name: sea.hub:5000/", `"docker.io/jaegertracing`, `"sea.hub:5000/jaegertracing`,
				`"busybox`, `"sea.hub:5000/library/busybox`, "plain: quay.io/", "plain: sea.hub:5000/"},
		},
		{
			name: "annotations of the object and of its Pod template",
			in: `apiVersion: apps/v1
kind: Deployment
metadata:
  name: app
  annotations:
    sidecar.istio.io/proxyImage: docker.io/istio/proxyv2:1.23.2
    deployment.kubernetes.io/revision: "3"
spec:
  template:
    metadata:
      annotations:
        debug-image: "nicolaka/netshoot:v0.13"
        kubectl.kubernetes.io/default-container: app
    spec:
      containers: [{name: app, image: "ghcr.io/org/app:1"}]
`,
			want: []string{
				"metadata.annotations.sidecar.istio.io/proxyImage=docker.io/istio/proxyv2:1.23.2",
				"spec.template.metadata.annotations.debug-image=docker.io/nicolaka/netshoot:v0.13",
			},
			repl: []string{"proxyImage: docker.io/istio", "proxyImage: sea.hub:5000/istio", `"nicolaka`, `"sea.hub:5000/nicolaka`, `"ghcr.io/org`, `"sea.hub:5000/org`},
		},
		{
			name: "negative: URLs, host:port, paths, versions, key=value, RBAC names",
			in: `apiVersion: apps/v1
kind: Deployment
metadata:
  name: metrics-server
  annotations:
    homepage: https://github.com/kubernetes-sigs/metrics-server:main
    note: "see docs.example.com/guide:intro"
spec:
  template:
    spec:
      containers:
      - name: metrics-server
        image: registry.k8s.io/metrics-server/metrics-server:v0.7.2
        args:
        - --secure-port=10250
        - --kubelet-preferred-address-types=InternalIP,ExternalIP,Hostname
        - --requestheader-client-ca-file=/etc/ca/ca.crt
        - --authorization-kubeconfig=./kubeconfig:ro
        - --upstream=http://127.0.0.1:8080/metrics:v1
        - --redis=redis-master:6379
        - --registry-host=registry.local:5000
        - --version=v1.2.3
        - foo=bar:baz
        - --group=system:auth-delegator
        - https://quay.io/org/app:1
        env:
        - {name: VERSION, value: "1.16.1"}
        - {name: ROLE, value: "system:auth-delegator"}
        - {name: ADDR, value: "10.0.0.1:6789/pool"}
        - {name: PATTERN, value: "registry/*"}
`,
		},
		{
			name: "negative: RBAC, StorageClass parameters, Kyverno policy",
			in: `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: "metrics-server:system:auth-delegator"}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: "system:auth-delegator"}
subjects: [{kind: ServiceAccount, name: metrics-server, namespace: kube-system}]
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: ceph, annotations: {storageclass.kubernetes.io/is-default-class: "true"}}
provisioner: rbd.csi.ceph.com
parameters: {replicate: "replicate:3", imageFeatures: layering, imageFormat: "2"}
---
apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata:
  name: restrict-image-registries
  annotations:
    policies.kyverno.io/title: Restrict Image Registries
    policies.kyverno.io/description: "Images from unknown registries (registry/*) are rejected."
spec:
  rules:
  - name: validate-registries
    match: {any: [{resources: {kinds: [Pod]}}]}
    validate:
      message: "Unknown image registry."
      pattern:
        spec:
          containers:
          - image: "registry/* | ghcr.io/corp/*"
`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Named references opted out: every embedded reference is
			// reported, none listed or rewritten (see
			// TestNamedEmbeddedDefault for the default).
			rw, err := New(rewrite.Config{NoNamedEmbedded: true})
			if err != nil {
				t.Fatal(err)
			}
			out, err := rw.RewriteBytes([]byte(tt.in), "in.yaml")
			if err != nil {
				t.Fatal(err)
			}
			got := occurrences(rw.Embedded())
			for i := range got {
				got[i] = strings.TrimPrefix(got[i], "~")
			}
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("found:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
			for _, img := range rw.Images() {
				for _, l := range img.Occurrences {
					if l.Embedded {
						t.Errorf("embedded reference listed with noNamedEmbedded: %+v", l)
					}
				}
			}
			if n := countOccurrences(rw.EmbeddedLeftOut()); n != len(tt.want) {
				t.Errorf("left out %d, want %d", n, len(tt.want))
			}
			// Only image fields change.
			assertOnlyImagesChanged(t, mapperTarget(t, rw.Mapper()), []byte(tt.in), out, rw.Images(), "in.yaml")

			rwe, _ := New(rewrite.Config{RewriteEmbedded: true})
			out, err = rwe.RewriteBytes([]byte(tt.in), "in.yaml")
			if err != nil {
				t.Fatal(err)
			}
			want := tt.in
			if tt.repl != nil {
				want = replaceAll(t, tt.in, tt.repl...)
			} else {
				want = string(mustRewrite(t, rewrite.Config{NoNamedEmbedded: true}, tt.in))
			}
			if string(out) != want {
				t.Errorf("rewriteEmbedded output:\n%s\nwant:\n%s", out, want)
			}
			if n := countOccurrences(rwe.EmbeddedLeftOut()); n != 0 {
				t.Errorf("rewriteEmbedded left %d out", n)
			}
			again, _ := New(rewrite.Config{RewriteEmbedded: true})
			if out2, err := again.RewriteBytes(out, "in.yaml"); err != nil || !bytes.Equal(out2, out) {
				t.Errorf("not idempotent (%v):\n%s", err, out2)
			}
		})
	}
}

func countOccurrences(images []rewrite.Image) int {
	n := 0
	for _, img := range images {
		n += len(img.Occurrences)
	}
	return n
}

func mustRewrite(t *testing.T, cfg rewrite.Config, in string) []byte {
	t.Helper()
	rw, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	out, err := rw.RewriteBytes([]byte(in), "in.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func envDoc(value string) string {
	return "kind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: c\n    image: sea.hub:5000/app:1\n    env:\n    - name: HELPER_IMAGE\n      value: " + value + "\n"
}

// TestEmbeddedInPlace: the token is replaced inside the string, whatever
// the scalar's style, and only there; a token written with an escape
// sequence is reported and left as written, with a warning.
func TestEmbeddedInPlace(t *testing.T) {
	tests := []struct {
		name     string
		in, want string
		warn     string // substring of the one warning, if any
	}{
		{"plain", envDoc("busybox:1.36"), envDoc("sea.hub:5000/library/busybox:1.36"), ""},
		{"single-quoted", envDoc("'busybox:1.36'"), envDoc("'sea.hub:5000/library/busybox:1.36'"), ""},
		{"double-quoted", envDoc(`"busybox:1.36"`), envDoc(`"sea.hub:5000/library/busybox:1.36"`), ""},
		{"double-quoted with an escape after the token", envDoc(`"busybox:1.36\t"`), envDoc(`"sea.hub:5000/library/busybox:1.36\t"`), ""},
		{"double-quoted with an escape before the token", envDoc(`"\tbusybox:1.36"`), envDoc(`"\tsea.hub:5000/library/busybox:1.36"`), ""},
		{"token written with an escape", envDoc(`"\x62usybox:1.36"`), envDoc(`"\x62usybox:1.36"`), "left as written"},
		// The value is a line break and "ginx:1.25": that is the token.
		{"escape right before the token", envDoc(`"\nginx:1.25"`), envDoc(`"\nsea.hub:5000/library/ginx:1.25"`), ""},
		{"tagged and anchored", envDoc("!!str &a busybox:1.36"), envDoc("!!str &a sea.hub:5000/library/busybox:1.36"), ""},
		{"folded block", envDoc(">-\n        busybox:1.36"), envDoc(">-\n        sea.hub:5000/library/busybox:1.36"), ""},
		{
			"block scalar: the token in the header comment and twice in the text",
			"kind: ConfigMap\nmetadata: {name: c}\ndata:\n  a.yaml: |  # image: nginx:1.25\n    x:\n      image: nginx:1.25\n    y:\n      image: nginx:1.25\n    nginx:1.25: not a value\n",
			"kind: ConfigMap\nmetadata: {name: c}\ndata:\n  a.yaml: |  # image: nginx:1.25\n    x:\n      image: sea.hub:5000/library/nginx:1.25\n    y:\n      image: sea.hub:5000/library/nginx:1.25\n    nginx:1.25: not a value\n",
			"",
		},
		{
			"the same token earlier in the document, outside the string",
			"kind: ConfigMap\nmetadata: {name: c, labels: {v: \"x\"}}\n# BUSYBOX_IMAGE: busybox:1.36\ndata: {BUSYBOX_IMAGE: busybox:1.36}\n",
			"kind: ConfigMap\nmetadata: {name: c, labels: {v: \"x\"}}\n# BUSYBOX_IMAGE: busybox:1.36\ndata: {BUSYBOX_IMAGE: sea.hub:5000/library/busybox:1.36}\n",
			"",
		},
		{
			"multi-line plain scalar: a word of a command line",
			"kind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: c\n    image: x/y:1\n    args:\n    - crictl pull\n      quay.io/a/b:1 && sleep 1\n",
			"kind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: c\n    image: sea.hub:5000/x/y:1\n    args:\n    - crictl pull\n      sea.hub:5000/a/b:1 && sleep 1\n",
			"",
		},
		{
			"multi-line double-quoted with an escaped line break",
			"kind: ConfigMap\nmetadata: {name: c}\ndata:\n  a: \"image: quay.io/a/b:1\\n\\\n    image: quay.io/c/d:2\"\n",
			"kind: ConfigMap\nmetadata: {name: c}\ndata:\n  a: \"image: sea.hub:5000/a/b:1\\n\\\n    image: sea.hub:5000/c/d:2\"\n",
			"",
		},
		{
			"flow sequence of args, CRLF line ends",
			"kind: Pod\r\nmetadata: {name: p}\r\nspec:\r\n  containers:\r\n  - {name: c, image: \"a/b:1\", args: [\"--x-image=quay.io/x/y:1\", --z=quay.io/z/z:2]}\r\n",
			"kind: Pod\r\nmetadata: {name: p}\r\nspec:\r\n  containers:\r\n  - {name: c, image: \"sea.hub:5000/a/b:1\", args: [\"--x-image=sea.hub:5000/x/y:1\", --z=sea.hub:5000/z/z:2]}\r\n",
			"",
		},
		{
			"JSON",
			`{"kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "a/b:1", "args": ["--helper-image=busybox:1.36"]}]}}` + "\n",
			`{"kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "sea.hub:5000/a/b:1", "args": ["--helper-image=sea.hub:5000/library/busybox:1.36"]}]}}` + "\n",
			"",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var warns []error
			rw, err := New(rewrite.Config{RewriteEmbedded: true}, WithWarnings(func(err error) { warns = append(warns, err) }))
			if err != nil {
				t.Fatal(err)
			}
			out, err := rw.RewriteBytes([]byte(tt.in), "in.yaml")
			if err != nil {
				t.Fatal(err)
			}
			if string(out) != tt.want {
				t.Errorf("got:\n%q\nwant:\n%q", out, tt.want)
			}
			switch {
			case tt.warn == "" && len(warns) > 0:
				t.Errorf("warnings: %v", warns)
			case tt.warn != "" && (len(warns) != 1 || !strings.Contains(warns[0].Error(), tt.warn)):
				t.Errorf("warnings %v, want one containing %q", warns, tt.warn)
			}
			if tt.warn != "" && countOccurrences(rw.EmbeddedLeftOut()) != 1 {
				t.Errorf("left out: %v", rw.EmbeddedLeftOut())
			}
			assertOnlyImagesChanged(t, mapperTarget(t, rw.Mapper()), []byte(tt.in), out, rw.Images(), "in.yaml")
		})
	}
}

// TestAnchoredEmbeddedAndField: one scalar, an image field and an embedded
// reference through an alias, is rewritten once when both are rewritten;
// without RewriteEmbedded the env value is not an image field and keeps
// its value, so the alias is written out with the new value.
func TestAnchoredEmbeddedAndField(t *testing.T) {
	in := "kind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: c\n    env: [{name: HELPER_IMAGE, value: &img quay.io/a/b:1}]\n    image: *img\n"
	want := strings.Replace(in, "&img quay.io", "&img sea.hub:5000", 1)
	if got := string(mustRewrite(t, rewrite.Config{RewriteEmbedded: true}, in)); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
	// By default the env value is a named reference (HELPER_IMAGE), so
	// rewritten too: the anchored node is.
	if got := string(mustRewrite(t, rewrite.Config{}, in)); got != want {
		t.Errorf("default, got:\n%s\nwant:\n%s", got, want)
	}
	want = strings.Replace(in, "image: *img", "image: sea.hub:5000/a/b:1", 1)
	if got := string(mustRewrite(t, rewrite.Config{NoNamedEmbedded: true}, in)); got != want {
		t.Errorf("without named embedded references, got:\n%s\nwant:\n%s", got, want)
	}
}

// TestEmbeddedListing: embedded references are always collected; by default
// they are left out of Images; ListEmbedded lists them without rewriting;
// RewriteEmbedded rewrites and lists them. Mapping, exclusions and the
// collision check apply to them as to image fields once listed.
func TestEmbeddedListing(t *testing.T) {
	in := pod("docker.io/team/app:1") + "    args: [--helper-image=quay.io/jetstack/helper:1, --other-image=docker.io/library/busybox:1.36]\n"
	type want struct {
		images, left int
		out          string
	}
	tests := []struct {
		name string
		cfg  rewrite.Config
		opts []Option
		want want
	}{
		// --helper-image= and --other-image= name images: listed and
		// rewritten by default.
		{"default", rewrite.Config{}, nil, want{3, 0, strings.NewReplacer("image: docker.io/team", "image: sea.hub:5000/team", "=quay.io/jetstack", "=sea.hub:5000/jetstack", "=docker.io/library/busybox", "=sea.hub:5000/library/busybox").Replace(in)}},
		{"named opted out", rewrite.Config{NoNamedEmbedded: true}, nil, want{1, 2, strings.Replace(in, "image: docker.io/team", "image: sea.hub:5000/team", 1)}},
		{"listed", rewrite.Config{NoNamedEmbedded: true}, []Option{ListEmbedded()}, want{3, 0, strings.Replace(in, "image: docker.io/team", "image: sea.hub:5000/team", 1)}},
		{"rewritten, one excluded", rewrite.Config{RewriteEmbedded: true, Exclude: []string{"docker.io/library/busybox"}}, nil,
			want{3, 0, strings.NewReplacer("image: docker.io/team", "image: sea.hub:5000/team", "=quay.io/jetstack", "=sea.hub:5000/jetstack").Replace(in)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rw, err := New(tt.cfg, tt.opts...)
			if err != nil {
				t.Fatal(err)
			}
			out, err := rw.RewriteBytes([]byte(in), "in.yaml")
			if err != nil {
				t.Fatal(err)
			}
			if string(out) != tt.want.out {
				t.Errorf("output:\n%s\nwant:\n%s", out, tt.want.out)
			}
			if len(rw.Images()) != tt.want.images || countOccurrences(rw.EmbeddedLeftOut()) != tt.want.left || len(rw.Embedded()) != 2 {
				t.Errorf("images %d (want %d), left out %d (want %d), embedded %d (want 2)", len(rw.Images()), tt.want.images, countOccurrences(rw.EmbeddedLeftOut()), tt.want.left, len(rw.Embedded()))
			}
			for _, img := range rw.Embedded() {
				if l := img.Occurrences[0]; !l.Embedded || l.Line != 10 || l.Field == "" {
					t.Errorf("occurrence %+v: want embedded, line 10, a field path", l)
				}
			}
		})
	}

	// A collision: not an error while the embedded reference is only
	// reported; an error once it is listed or rewritten (by default, for
	// a named reference).
	coll := pod("docker.io/team/app:1") + "    args: [--helper-image=quay.io/team/app:1]\n"
	if _, err := mustNew(t, rewrite.Config{NoNamedEmbedded: true}).RewriteBytes([]byte(coll), "in.yaml"); err != nil {
		t.Errorf("reported only: %v", err)
	}
	for _, tt := range []struct {
		name string
		rw   *Rewriter
	}{
		{"collision/default", mustNew(t, rewrite.Config{})},
		{"collision/listed", mustNew(t, rewrite.Config{NoNamedEmbedded: true}, ListEmbedded())},
		{"collision/rewritten", mustNew(t, rewrite.Config{RewriteEmbedded: true})},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var ce *rewrite.CollisionError
			if _, err := tt.rw.RewriteBytes([]byte(coll), "in.yaml"); !errors.As(err, &ce) {
				t.Errorf("err = %v, want a collision", err)
			}
		})
	}
}

func mustNew(t *testing.T, cfg rewrite.Config, opts ...Option) *Rewriter {
	t.Helper()
	rw, err := New(cfg, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return rw
}

// TestFastPathEmbedded: documents that hold embedded references without the
// word image are parsed; documents without any candidate are not.
func TestFastPathEmbedded(t *testing.T) {
	rw := mustNew(t, rewrite.Config{})
	for _, tt := range []struct {
		name string
		doc  string
		want bool
	}{
		{"flag value", "kind: Deployment\nspec: {template: {spec: {containers: [{name: a, args: [--prometheus-config-reloader=quay.io/p/r:v0.75.0]}]}}}\n", true},
		{"localhost tag", "kind: ConfigMap\ndata: {a: \"localhost/app:1\"}\n", true},
		{"localhost digest", "kind: ConfigMap\ndata: {a: \"localhost:5000/app@sha256:0\"}\n", true},
		{"oci url", "kind: OCIRepository\nspec: {url: \"oci://ghcr.io/a/b\", ref: {tag: \"1\"}}\n", true},
		{"escaped", "kind: ConfigMap\ndata: {a: \"\\x71uay.io/a/b:1\"}\n", true},
		{"url only", "kind: Service\nmetadata: {name: s, annotations: {a: \"https://example.com/docs\"}}\nspec: {ports: [{port: 80}]}\n", false},
		{"no reference", "kind: ConfigMap\ndata: {a: \"redis:6379\", b: \"apps/v1\", c: \"kube-system/kubelet\"}\n", false},
		{"crd", "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nspec: {x: \"quay.io/a/b:1\", image: y}\n", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := rw.mayHoldImages([]byte(tt.doc)); got != tt.want {
				t.Errorf("mayHoldImages(%q) = %v, want %v", tt.doc, got, tt.want)
			}
		})
	}
}

// TestFastPathNeverSkipsEmbedded: for every document of the embedded
// corpus, the golden inputs and the snippets of this file's tests, a
// document the fast path skips holds no reference at all.
func TestFastPathNeverSkipsEmbedded(t *testing.T) {
	docs := corpusDocuments(t)
	rw := mustNew(t, rewrite.Config{})
	checked := 0
	for _, d := range docs {
		if rw.mayHoldImages(d) {
			continue
		}
		checked++
		var root yaml.Node
		if err := yaml.NewDecoder(bytes.NewReader(d)).Decode(&root); err != nil {
			continue
		}
		if fd := rw.finder.findAll(&root, true, true, nil); len(fd.fields)+len(fd.emb)+len(fd.skipped) > 0 {
			t.Errorf("fast path skips a document with references %v %v %v:\n%s", fd.fields, fd.emb, fd.skipped, d)
		}
	}
	if checked < 5 {
		t.Errorf("only %d documents skipped by the fast path: the test proves little", checked)
	}
}

// TestFilterEmbedded: the kio filter finds, and with RewriteEmbedded
// rewrites, the same embedded references.
func TestFilterEmbedded(t *testing.T) {
	in := `apiVersion: v1
kind: ConfigMap
metadata:
  name: c
  annotations: {proxy-image: "docker.io/istio/proxyv2:1.23.2"}
data:
  config.yaml: |
    image: quay.io/kiali/kiali:v1.89
    other: x
`
	for _, rewriteEmbedded := range []bool{false, true} {
		t.Run(fmt.Sprintf("rewriteEmbedded=%v", rewriteEmbedded), func(t *testing.T) {
			rw := mustNew(t, rewrite.Config{RewriteEmbedded: rewriteEmbedded})
			var out bytes.Buffer
			err := rewriteNodes(rw, in, &out)
			if err != nil {
				t.Fatal(err)
			}
			want := in
			if rewriteEmbedded {
				want = strings.NewReplacer(`"docker.io/istio`, `"sea.hub:5000/istio`, "image: quay.io/kiali", "image: sea.hub:5000/kiali").Replace(in)
			}
			if out.String() != want {
				t.Errorf("rewriteEmbedded=%v:\n%s\nwant:\n%s", rewriteEmbedded, out.String(), want)
			}
			if len(rw.Embedded()) != 2 {
				t.Errorf("embedded: %v", rw.Embedded())
			}
		})
	}
}

// FuzzRewriteEmbedded asserts, with RewriteEmbedded, for any input the
// rewriter accepts: the output parses into as many documents, rewriting it
// again is a no-op, and no byte but the image references changed.
func FuzzRewriteEmbedded(f *testing.F) {
	for _, d := range corpusDocuments(f) {
		f.Add(d)
	}
	f.Add([]byte(envDoc(`"\nginx:1.25 \x71uay.io/a/b:1"`)))
	f.Add([]byte("kind: ConfigMap\ndata:\n  a: |\n    image: nginx:1.25\n    image: nginx:1.25\n  b: >\n    --x-image=quay.io/a/b:1\n"))
	f.Add(issue11Seed)
	// Only image references change: GitOps chart sources are left out
	// (FuzzChartSources covers them).
	cfg := rewrite.Config{RewriteEmbedded: true, NoChartSources: true}
	model, _ := newRefModel(cfg)
	f.Fuzz(func(t *testing.T, in []byte) {
		rw, err := New(cfg, WithWorkers(2))
		if err != nil {
			t.Fatal(err)
		}
		out, err := rw.RewriteBytes(in, "in.yaml")
		if err != nil {
			return
		}
		if n, ok := countDocs(in); ok {
			if m, ok := countDocs(out); !ok || m != n {
				t.Fatalf("input parses into %d documents, output into %d (ok=%v):\n%q\n%q", n, m, ok, in, out)
			}
		}
		again, _ := New(cfg)
		out2, err := again.RewriteBytes(out, "in.yaml")
		if err != nil {
			t.Fatalf("rewriting the output again: %v\nin:  %q\nout: %q", err, in, out)
		}
		if !bytes.Equal(out, out2) {
			t.Fatalf("not idempotent:\nin:   %q\nout:  %q\nout2: %q", in, out, out2)
		}
		assertOnlyImagesChanged(t, model.target, in, out, rw.Images(), "in.yaml")
		assertValuesPreserved(t, model, in, out, rw.Images(), "in.yaml")
	})
}

// corpusDocuments returns the documents of the embedded corpus and of the
// golden inputs, raw.
func corpusDocuments(t testing.TB) [][]byte {
	t.Helper()
	var docs [][]byte
	for _, dir := range []string{corpusDir, goldenDir} {
		for _, p := range inputFiles(t, dir) {
			sp := newSplitter(bytes.NewReader(readFile(t, p)))
			for {
				d, err := sp.next()
				if err != nil {
					break
				}
				docs = append(docs, d.data)
			}
		}
	}
	return docs
}

// TestEmbeddedHostile: a multi-megabyte string holding a hundred thousand
// embedded references, on many lines and on one line, is rewritten whole;
// the work grows with the number of references, not with its square (one
// pass per string, not one per reference), bounded by allocation counts
// rather than time (BenchmarkEmbeddedHostile times it).
func TestEmbeddedHostile(t *testing.T) {
	in := embeddedHostile(50000)
	rw := mustNew(t, rewrite.Config{RewriteEmbedded: true})
	out, err := rw.RewriteBytes([]byte(in), "in.yaml")
	if err != nil {
		t.Fatal(err)
	}
	want := strings.NewReplacer("quay.io/a/b", "sea.hub:5000/a/b", "quay.io/c/d", "sea.hub:5000/c/d").Replace(in)
	if string(out) != want {
		t.Errorf("output differs from the input with every reference rewritten")
	}
	if n := countOccurrences(rw.Embedded()); n != 100000 {
		t.Errorf("%d embedded references, want 100000", n)
	}

	// 1,000 -> 4,000 references: linear work is about 4 times more,
	// quadratic 16.
	run := func(n int) func() {
		data := []byte(embeddedHostile(n))
		return func() {
			rw := mustNew(t, rewrite.Config{RewriteEmbedded: true})
			if _, err := rw.RewriteBytes(data, "in.yaml"); err != nil {
				t.Fatal(err)
			}
		}
	}
	run(1000)() // warm up
	ms, bs := workOf(run(1000))
	ml, bl := workOf(run(4000))
	if r := float64(ml) / float64(ms); r > 6 {
		t.Errorf("allocations grew %.1f times for 4 times the references (%d -> %d), want at most 6", r, ms, ml)
	}
	if r := float64(bl) / float64(bs); r > 6 {
		t.Errorf("allocated bytes grew %.1f times for 4 times the references (%d -> %d), want at most 6", r, bs, bl)
	}
}

// embeddedHostile is a ConfigMap with n embedded references on n lines of
// one string and n on one line of another.
func embeddedHostile(n int) string {
	var b strings.Builder
	b.WriteString("kind: ConfigMap\nmetadata: {name: c}\ndata:\n  a: |\n")
	for i := 0; i < n; i++ {
		b.WriteString("    image: quay.io/a/b:1\n")
	}
	b.WriteString("  b: \"")
	for i := 0; i < n; i++ {
		b.WriteString("image: quay.io/c/d:1\\n")
	}
	b.WriteString("\"\n")
	return b.String()
}

// BenchmarkEmbeddedHostile times TestEmbeddedHostile's input.
func BenchmarkEmbeddedHostile(b *testing.B) {
	data := []byte(embeddedHostile(50000))
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		rw, _ := New(rewrite.Config{RewriteEmbedded: true})
		if _, err := rw.RewriteBytes(data, "in.yaml"); err != nil {
			b.Fatal(err)
		}
	}
}
