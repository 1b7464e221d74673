package manifest

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/rehost/rehost/pkg/rewrite"
	"go.yaml.in/yaml/v3"
)

// TestGuessKey: which keys name an image by their name.
func TestGuessKey(t *testing.T) {
	for k, want := range map[string]bool{
		"image": true, "Image": true, "IMAGE": true,
		"baseImage": true, "initImage": true, "sidecarImage": true, "BaseImage": true, "toolImage": true,
		"sidecar_image": true, "sidecar-image": true, "SIDECAR_IMAGE": true, "HELPER-IMAGE": true,
		"imagePullPolicy": false, "imagePullSecrets": false, "imageTag": false, "imageRegistry": false,
		"imageRepository": false, "imageName": false, "images": false, "relatedImages": false,
		"myimage": false, "MYIMAGE": false, "Images": false, "_image": false, "iMaGe": false, "": false,
	} {
		name := k
		if name == "" {
			name = "empty"
		}
		t.Run(name, func(t *testing.T) {
			if got := guessKey(k); got != want {
				t.Errorf("guessKey(%q) = %v, want %v", k, got, want)
			}
		})
	}
}

// TestBuiltinGroup: the groups of Kubernetes' own kinds, never guessed in.
func TestBuiltinGroup(t *testing.T) {
	for g, want := range map[string]bool{
		"": true, "apps": true, "batch": true, "policy": true, "networking.k8s.io": true,
		"gateway.networking.k8s.io": true, "rbac.authorization.k8s.io": true,
		"ceph.rook.io": false, "pxc.percona.com": false, "cluster.x-k8s.io": false, "example.com": false,
	} {
		name := g
		if name == "" {
			name = "core"
		}
		t.Run(name, func(t *testing.T) {
			if got := builtinGroup(g); got != want {
				t.Errorf("builtinGroup(%q) = %v, want %v", g, got, want)
			}
		})
	}
}

// guessedOccurrences lists "field=source" for every occurrence, a guessed
// one marked with a leading "?", sorted.
func guessedOccurrences(images []rewrite.Image) []string {
	var out []string
	for _, img := range images {
		for _, l := range img.Occurrences {
			mark := ""
			if l.Guessed {
				mark = "?"
			}
			out = append(out, mark+l.Field+"="+img.Source)
		}
	}
	sort.Strings(out)
	return out
}

const guessWidget = "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\n"

// TestGuessedImages: in custom resources of unknown kinds, image keys
// hold images (listed, rewritten, marked guessed); values that are no
// image references are warnings (file, line, field) and left as written;
// values that are obviously no images, disks, metadata and status are
// ignored; known and built-in kinds and CRDs are never guessed in.
func TestGuessedImages(t *testing.T) {
	tests := []struct {
		name  string
		cfg   rewrite.Config
		in    string
		want  []string // field=source, "?" for guessed
		warns []string // a substring of each warning, in order
		repl  []string // old, new pairs: the expected output
	}{
		{
			name: "whole references under keys of any spelling",
			in: guessWidget + `spec:
  image: quay.io/a/app:1
  sidecarImage: "quay.io/a/sidecar:2"
  init:
    initImage: registry.local:5000/init@` + digest + `
  env-cfg:
    SIDECAR_IMAGE: ghcr.io/a/b:3
    helper-image: 'ghcr.io/a/h:4'
    IMAGE: nginx:1.27
`,
			want: []string{
				"?spec.env-cfg.IMAGE=docker.io/library/nginx:1.27", "?spec.env-cfg.SIDECAR_IMAGE=ghcr.io/a/b:3",
				"?spec.env-cfg.helper-image=ghcr.io/a/h:4", "?spec.image=quay.io/a/app:1",
				"?spec.init.initImage=registry.local:5000/init@" + digest, "?spec.sidecarImage=quay.io/a/sidecar:2",
			},
			repl: []string{"quay.io/a/app", "sea.hub:5000/a/app", "quay.io/a/sidecar", "sea.hub:5000/a/sidecar",
				"registry.local:5000/init", "sea.hub:5000/init", "ghcr.io/a/b", "sea.hub:5000/a/b", "ghcr.io/a/h", "sea.hub:5000/a/h",
				"nginx:1.27", "sea.hub:5000/library/nginx:1.27"},
		},
		{
			// Issue 29, item 11: ParseRef reads them as docker.io/library
			// images with a tag.
			name: "a digest alone and a registry address: warnings, left as written",
			in: guessWidget + `spec:
  image: ` + digest + `
  cacheImage: localhost:5000
  mirrorImage: "registry.example.com:5000"
  pull:
    image: sha512:` + strings.Repeat("f", 128) + `
    imagePullPolicy: Always
  keep:
    image: redis:6379
    tagImage: nginx:1.27
`,
			want: []string{"?spec.keep.image=docker.io/library/redis:6379", "?spec.keep.tagImage=docker.io/library/nginx:1.27"},
			warns: []string{
				`in.yaml:5: Widget w: spec.image: "` + digest + `" left as written: a digest alone, not an image reference`,
				`in.yaml:6: Widget w: spec.cacheImage: "localhost:5000" left as written: a registry address (host:port), not an image reference`,
				`in.yaml:7: Widget w: spec.mirrorImage: "registry.example.com:5000" left as written: a registry address`,
				`in.yaml:9: Widget w: spec.pull.image: "sha512:`,
			},
			repl: []string{"redis:6379", "sea.hub:5000/library/redis:6379", "nginx:1.27", "sea.hub:5000/library/nginx:1.27"},
		},
		{
			name: "keys that do not name an image",
			in: guessWidget + `spec:
  imagePullPolicy: Always
  imagePullSecrets: [{name: quay.io/a/b:1}]
  imageTag: "1.2"
  imageRegistry: quay.io
  imageRepository: quay.io/a/b
  imageName: quay.io/a/b:1
  images: [quay.io/a/b:1]
  myimage: quay.io/a/b:1
`,
		},
		{
			name: "values that are obviously no images, patterns, maps without repository",
			in: guessWidget + `spec:
  image: true
  initImage: 3
  baseImage: null
  sidecarImage: ~
  toolImage: [quay.io/a/b:1]
  vmImage: {filter: {name: ubuntu-2204}}
  patternImage: "registry.io/*"
`,
		},
		{
			name: "placeholders and names without registry, tag or digest: warnings, left as written",
			in: guessWidget + `spec:
  image: "<YOUR-IMAGE>"
  initImage: auto
  sidecarImage: ""
  toolImage: "{{ .Values.image }}"
  agentImage: ${AGENT_IMAGE}
  machine:
    image: ubuntu-2204-kube-v1.30
`,
			warns: []string{
				`in.yaml:5: Widget w: spec.image: "<YOUR-IMAGE>" left as written: invalid image reference`,
				`in.yaml:6: Widget w: spec.initImage: "auto" left as written: it names no registry host, tag or digest`,
				`in.yaml:7: Widget w: spec.sidecarImage: "" left as written: invalid image reference "": empty image reference`,
				`in.yaml:8: Widget w: spec.toolImage: "{{ .Values.image }}" left as written: invalid image reference`,
				`in.yaml:9: Widget w: spec.agentImage: "${AGENT_IMAGE}" left as written: invalid image reference`,
				`in.yaml:11: Widget w: spec.machine.image: "ubuntu-2204-kube-v1.30" left as written: it names no registry host, tag or digest`,
			},
		},
		{
			name: "Ceph RBD disks: an image beside pool or monitors",
			in: guessWidget + `spec:
  volume:
    rbd: {monitors: ["10.0.0.1:6789"], pool: rbd, image: disk1}
  disk: {pool: replicapool, image: quay.io/a/b:1}
`,
		},
		{
			name: "a container by its other keys: an image without tag is latest",
			in: guessWidget + `spec:
  sidecars:
  - name: s
    image: busybox
    command: [sh]
  helper: {image: alpine, imagePullPolicy: IfNotPresent}
`,
			want: []string{"?spec.helper.image=docker.io/library/alpine:latest", "?spec.sidecars[0].image=docker.io/library/busybox:latest"},
			repl: []string{"image: busybox", "image: sea.hub:5000/library/busybox", "image: alpine", "image: sea.hub:5000/library/alpine"},
		},
		{
			name: "split references under image keys, as Helm values write them",
			in: guessWidget + `spec:
  app:
    image: {registry: docker.io, repository: bitnami/redis, tag: 7.2.4, pullPolicy: IfNotPresent}
  exporter:
    image:
      repository: quay.io/oliver006/redis_exporter
      tag: v1.58.0
  pinned:
    image: {repository: ghcr.io/a/b, digest: "` + digest + `"}
  chart:
    image: {repository: ghcr.io/a/chart}
  empty:
    image: {repository: "", tag: "1"}
`,
			want: []string{
				"?spec.app.image.registry=docker.io/bitnami/redis:7.2.4",
				"?spec.exporter.image.repository=quay.io/oliver006/redis_exporter:v1.58.0",
				"?spec.pinned.image.repository=ghcr.io/a/b@" + digest,
			},
			warns: []string{`in.yaml:14: Widget w: spec.chart.image.repository: image ghcr.io/a/chart not listed: no digest or tag: the operator picks the tag`},
			repl: []string{"registry: docker.io", "registry: sea.hub:5000", "quay.io/oliver006", "sea.hub:5000/oliver006",
				"ghcr.io/a/b,", "sea.hub:5000/a/b,", "ghcr.io/a/chart", "sea.hub:5000/a/chart"},
		},
		{
			name: "base images take the version or tag beside them",
			in: guessWidget + `spec:
  server: {baseImage: pingcap/tidb-dashboard, version: v8.5.0}
  agent: {baseImage: quay.io/a/agent, tag: "2.0"}
  tagged: {baseImage: "quay.io/a/t:1.0", version: v9}
  bare: {baseImage: quay.io/a/bare}
`,
			want:  []string{"?spec.agent.baseImage=quay.io/a/agent:2.0", "?spec.server.baseImage=docker.io/pingcap/tidb-dashboard:v8.5.0", "?spec.tagged.baseImage=quay.io/a/t:1.0"},
			warns: []string{`in.yaml:8: Widget w: spec.bare.baseImage: image quay.io/a/bare not listed: no version or tag: the operator picks the tag`},
			repl: []string{"pingcap/tidb-dashboard", "sea.hub:5000/pingcap/tidb-dashboard", "quay.io/a/agent", "sea.hub:5000/a/agent",
				"quay.io/a/t:1.0", "sea.hub:5000/a/t:1.0", "quay.io/a/bare", "sea.hub:5000/a/bare"},
		},
		{
			name: "a kind of imageFields is known: its other image keys are not guessed",
			cfg:  rewrite.Config{ImageFields: []rewrite.ImageField{{Group: "example.com", Kind: "Widget", Path: "spec.runner"}}},
			in:   guessWidget + "spec:\n  runner: quay.io/a/r:1\n  image: quay.io/a/b:1\n",
			want: []string{"spec.runner=quay.io/a/r:1"},
			repl: []string{"quay.io/a/r", "sea.hub:5000/a/r"},
		},
		{
			name: "built-in and table kinds and CRDs are never guessed in",
			in: `apiVersion: v1
kind: Service
metadata: {name: s}
spec: {image: quay.io/a/b:1}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: g}
spec: {image: quay.io/a/b:1}
---
apiVersion: pingcap.com/v1alpha1
kind: TidbCluster
metadata: {name: t}
spec: {discovery: {image: quay.io/a/b:1}}
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  versions:
  - name: v1
    schema:
      openAPIV3Schema:
        properties:
          spec: {default: {image: quay.io/a/b:1}}
`,
		},
		{
			name: "metadata and the top-level status are not searched",
			in: `apiVersion: example.com/v1
kind: Widget
metadata:
  name: w
  annotations: {sidecar.example.com/proxyImage: quay.io/a/p:1}
spec:
  template:
    metadata: {annotations: {image: quay.io/a/b:1}}
status:
  image: quay.io/a/old:0
`,
		},
		{
			name: "merge keys: a merged image is found at each path",
			in: guessWidget + `spec:
  defaults: &d {image: quay.io/a/b:1, replicas: 1}
  primary:
    <<: *d
    replicas: 3
`,
			want: []string{"?spec.defaults.image=quay.io/a/b:1", "?spec.primary.image=quay.io/a/b:1"},
			repl: []string{"image: quay.io/a/b:1", "image: sea.hub:5000/a/b:1"},
		},
		{
			name: "a map merged into more than 16 places: a warning, left as written",
			in: guessWidget + "spec:\n  d: &d {image: quay.io/a/b:1}\n" + func() string {
				var b strings.Builder
				for i := 0; i < 17; i++ { // one more than maxMergeWalks
					fmt.Fprintf(&b, "  m%d: {<<: *d}\n", i)
				}
				return b.String()
			}(),
			warns: []string{`in.yaml:5: Widget w: spec.d.image: guessed image left as written: the value is shared through a YAML anchor`},
		},
		{
			name: "an anchor shared with a place not searched: a warning, left as written",
			in: guessWidget + `spec:
  cfg: &c {image: quay.io/a/b:1}
status:
  last: *c
`,
			warns: []string{`in.yaml:5: Widget w: spec.cfg.image: guessed image left as written: the value is shared through a YAML anchor`},
		},
		{
			name: "a kind's placeholders and patterns are ignored",
			in: `apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata: {name: p}
spec:
  rules:
  - name: r
    verifyImages:
    - image: "ghcr.io/org/*"
    mutate:
      patchStrategicMerge:
        spec:
          initImage: "{{ request.object.spec.image }}"
`,
		},
		{
			name: "noGuessImages: nothing guessed, no warning",
			cfg:  rewrite.Config{NoGuessImages: true},
			in:   guessWidget + "spec:\n  image: quay.io/a/app:1\n  initImage: auto\n  chart:\n    image: {repository: ghcr.io/a/chart}\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var warns []string
			rw := mustNew(t, tt.cfg, WithWarnings(func(err error) { warns = append(warns, err.Error()) }))
			out, err := rw.RewriteBytes([]byte(tt.in), "in.yaml")
			if err != nil {
				t.Fatal(err)
			}
			if got := guessedOccurrences(rw.Images()); strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("images:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
			if len(warns) != len(tt.warns) {
				t.Errorf("%d warnings, want %d:\n%s", len(warns), len(tt.warns), strings.Join(warns, "\n"))
			}
			for i := 0; i < len(warns) && i < len(tt.warns); i++ {
				if !strings.Contains(warns[i], tt.warns[i]) {
					t.Errorf("warning %d:\n%s\nwant it to hold:\n%s", i, warns[i], tt.warns[i])
				}
			}
			if want := replaceAll(t, tt.in, tt.repl...); string(out) != want {
				t.Errorf("output:\n%s\nwant:\n%s", out, want)
			}
			// Rewriting the output changes nothing; the fast path and a
			// full parse agree.
			if out2 := mustRewrite(t, tt.cfg, string(out)); string(out2) != string(out) {
				t.Errorf("not idempotent:\n%s", out2)
			}
			full := mustNew(t, tt.cfg)
			full.fullParse = true
			if out3, err := full.RewriteBytes([]byte(tt.in), "in.yaml"); err != nil || string(out3) != string(out) {
				t.Errorf("fast path and full parse differ (%v)", err)
			}
		})
	}
}

// TestGuessedSummary: one warning per run sums up the guessed images: how
// many, and the kinds and fields, unique, list indexes as [], at most ten
// named; the next call says nothing new; with noGuessImages there is none.
// The occurrences print "guessed": true in JSON.
func TestGuessedSummary(t *testing.T) {
	var in strings.Builder
	for i := 0; i < 12; i++ {
		fmt.Fprintf(&in, "---\napiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w%d}\nspec:\n  parts:\n  - image%02d: {image: quay.io/a/p%d:1}\n  - image%02d: {image: quay.io/a/q%d:1}\n", i, i, i, i, i)
	}
	in.WriteString("---\napiVersion: ceph.rook.io/v1\nkind: CephCluster\nmetadata: {name: c}\nspec:\n  cephVersion: {image: quay.io/ceph/ceph:v19.2.2}\n")
	var warns []error
	rw := mustNew(t, rewrite.Config{}, WithWarnings(func(err error) { warns = append(warns, err) }))
	if _, err := rw.RewriteBytes([]byte(in.String()), "in.yaml"); err != nil {
		t.Fatal(err)
	}
	if len(warns) != 0 {
		t.Fatalf("warnings before the summary: %v", warns)
	}
	rw.WarnGuessed()
	rw.WarnGuessed()
	if len(warns) != 1 {
		t.Fatalf("%d warnings, want the one summary: %v", len(warns), warns)
	}
	var g *GuessedImages
	if !errors.As(warns[0], &g) {
		t.Fatalf("summary %T, want *GuessedImages", warns[0])
	}
	if g.Count != 25 || len(g.Fields) != 13 || g.Fields[0] != "CephCluster spec.cephVersion.image" || g.Fields[1] != "Widget spec.parts[].image00.image" {
		t.Errorf("summary %+v", g)
	}
	if g.First.Name != "w0" || g.First.Line != 7 || g.First.Field != "spec.parts[0].image00.image" {
		t.Errorf("first %+v, want w0 at line 7", g.First)
	}
	msg := g.Error()
	if !strings.HasPrefix(msg, "25 image(s) in custom resources found by name: CephCluster spec.cephVersion.image, Widget spec.parts[].image00.image,") ||
		!strings.Contains(msg, "Widget spec.parts[].image08.image and 3 more; listed and rewritten like image fields") || strings.Contains(msg, "--") {
		t.Errorf("message %q", msg)
	}
	js, err := json.Marshal(rw.Images()[0].Occurrences[0])
	if err != nil || !strings.Contains(string(js), `"guessed":true`) {
		t.Errorf("occurrence JSON %s (%v), want \"guessed\":true", js, err)
	}

	warns = nil
	off := mustNew(t, rewrite.Config{NoGuessImages: true}, WithWarnings(func(err error) { warns = append(warns, err) }))
	if _, err := off.RewriteBytes([]byte(in.String()), "in.yaml"); err != nil {
		t.Fatal(err)
	}
	off.WarnGuessed()
	if len(warns) != 0 || len(off.Images()) != 0 {
		t.Errorf("noGuessImages: warnings %v, images %v", warns, off.Images())
	}
}

// TestFindGuessed: Finder.Find returns the guessed fields marked, after
// the known ones, and never a value it would not take for an image.
func TestFindGuessed(t *testing.T) {
	f, err := NewFinder(nil)
	if err != nil {
		t.Fatal(err)
	}
	doc := parseYAML(t, guessWidget+"spec:\n  initImage: auto\n  image: quay.io/a/b:1\n  containers: [{name: c, image: quay.io/a/c:1}]\n")
	var got []string
	for _, fd := range f.Find(doc) {
		got = append(got, fmt.Sprintf("%s=%s guessed=%v", fd.Path, fd.Value, fd.Guessed))
	}
	want := "spec.containers[0].image=quay.io/a/c:1 guessed=false spec.image=quay.io/a/b:1 guessed=true"
	if strings.Join(got, " ") != want {
		t.Errorf("Find: %s\nwant %s", strings.Join(got, " "), want)
	}
}

func parseYAML(t *testing.T, s string) *yaml.Node {
	t.Helper()
	var n yaml.Node
	if err := yaml.Unmarshal([]byte(s), &n); err != nil {
		t.Fatal(err)
	}
	return &n
}

// TestGuessBudget: a document whose guess walk would visit more than
// maxGuessNodes nodes is searched no further, with a warning naming the
// object; its known image fields are found all the same.
func TestGuessBudget(t *testing.T) {
	in := guessWidget + "spec:\n  containers: [{name: c, image: quay.io/a/c:1}]\n  xs: [" + strings.Repeat("0,", maxGuessNodes) + "0]\n  image: quay.io/a/b:1\n"
	var warns []string
	rw := mustNew(t, rewrite.Config{}, WithWarnings(func(err error) { warns = append(warns, err.Error()) }))
	if _, err := rw.RewriteBytes([]byte(in), "in.yaml"); err != nil {
		t.Fatal(err)
	}
	if got := guessedOccurrences(rw.Images()); strings.Join(got, " ") != "spec.containers[0].image=quay.io/a/c:1" {
		t.Errorf("images %v", got)
	}
	if len(warns) != 1 || !strings.HasPrefix(warns[0], "in.yaml:1: Widget w: ") || !strings.Contains(warns[0], "not searched for images by key name beyond 262144 nodes") {
		t.Errorf("warnings %q", warns)
	}
}
