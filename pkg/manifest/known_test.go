package manifest

import (
	"sort"
	"strings"
	"testing"

	"github.com/rehost/rehost/pkg/rewrite"
)

// occurrences lists "field=source" for every occurrence of images, sorted;
// embedded occurrences are marked with a leading "~".
func occurrences(images []rewrite.Image) []string {
	var out []string
	for _, img := range images {
		for _, l := range img.Occurrences {
			mark := ""
			if l.Embedded {
				mark = "~"
			}
			out = append(out, mark+l.Field+"="+img.Source)
		}
	}
	sort.Strings(out)
	return out
}

// replaceAll applies old/new pairs to s, each exactly once.
func replaceAll(t *testing.T, s string, pairs ...string) string {
	t.Helper()
	for i := 0; i+1 < len(pairs); i += 2 {
		if strings.Count(s, pairs[i]) != 1 {
			t.Fatalf("test bug: %q occurs %d times in the input", pairs[i], strings.Count(s, pairs[i]))
		}
		s = strings.Replace(s, pairs[i], pairs[i+1], 1)
	}
	return s
}

// TestKnownKinds: the built-in table finds and rewrites the images of
// operator kinds without any configured imageFields; composite references
// are reported whole and rewritten only in their repository part.
func TestKnownKinds(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []string // field=source
		repl []string // old, new pairs: the expected output
	}{
		{
			name: "Prometheus spec.image wins over baseImage",
			in: `apiVersion: monitoring.coreos.com/v1
kind: Prometheus
metadata: {name: k8s}
spec:
  image: quay.io/prometheus/prometheus:v2.54.1
  baseImage: quay.io/prometheus/ignored
  tag: v0.0.0
`,
			want: []string{"spec.image=quay.io/prometheus/prometheus:v2.54.1"},
			repl: []string{"image: quay.io/", "image: sea.hub:5000/"},
		},
		{
			name: "Prometheus baseImage with sha, tag and version: the sha wins",
			in: `apiVersion: monitoring.coreos.com/v1
kind: Prometheus
metadata: {name: k8s}
spec:
  baseImage: 'quay.io/prometheus/prometheus'
  tag: v2.54.1
  version: v2.0.0
  sha: 0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef
`,
			want: []string{"spec.baseImage=quay.io/prometheus/prometheus@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"},
			repl: []string{"'quay.io/prometheus/prometheus'", "'sea.hub:5000/prometheus/prometheus'"},
		},
		{
			name: "Alertmanager baseImage with tag over version",
			in: `apiVersion: monitoring.coreos.com/v1
kind: Alertmanager
metadata: {name: main}
spec: {baseImage: prom/alertmanager, version: v0.26.0, tag: v0.27.0}
`,
			want: []string{"spec.baseImage=docker.io/prom/alertmanager:v0.27.0"},
			repl: []string{"baseImage: prom/alertmanager", "baseImage: sea.hub:5000/prom/alertmanager"},
		},
		{
			name: "Prometheus thanos sidecar, baseImage with version; no baseImage: the operator's default",
			in: `apiVersion: monitoring.coreos.com/v1
kind: Prometheus
metadata: {name: k8s}
spec:
  version: v2.54.1
  thanos:
    baseImage: "quay.io/thanos/thanos"
    version: "v0.36.1"
`,
			want: []string{"spec.thanos.baseImage=quay.io/thanos/thanos:v0.36.1"},
			repl: []string{`"quay.io/thanos/thanos"`, `"sea.hub:5000/thanos/thanos"`},
		},
		{
			name: "ThanosRuler and PrometheusAgent spec.image",
			in: `apiVersion: monitoring.coreos.com/v1
kind: ThanosRuler
metadata: {name: r}
spec: {image: "quay.io/thanos/thanos:v0.36.1"}
---
apiVersion: monitoring.coreos.com/v1alpha1
kind: PrometheusAgent
metadata: {name: a}
spec:
  image: quay.io/prometheus/prometheus:v2.54.1
`,
			want: []string{"spec.image=quay.io/prometheus/prometheus:v2.54.1", "spec.image=quay.io/thanos/thanos:v0.36.1"},
			repl: []string{`"quay.io/thanos`, `"sea.hub:5000/thanos`, "image: quay.io/prometheus", "image: sea.hub:5000/prometheus"},
		},
		{
			name: "Tekton Task: steps, sidecars, stepTemplate, and the args and env of steps",
			in: `apiVersion: tekton.dev/v1
kind: Task
metadata: {name: build}
spec:
  stepTemplate:
    image: alpine:3.20
  steps:
  - name: build
    image: gcr.io/kaniko-project/executor:v1.23.2
    args: ["--destination=registry.example.com/app:1", "--context=dir:///workspace"]
  - name: inherits
    script: echo hi
  sidecars:
  - {name: registry, image: "registry:2"}
`,
			want: []string{
				"spec.sidecars[0].image=docker.io/library/registry:2",
				"spec.stepTemplate.image=docker.io/library/alpine:3.20",
				"spec.steps[0].image=gcr.io/kaniko-project/executor:v1.23.2",
				// A reference, if one the cluster pushes rather than
				// pulls: reported, rewritten only on request.
				"~spec.steps[0].args[0]=registry.example.com/app:1",
			},
			repl: []string{"alpine:3.20", "sea.hub:5000/library/alpine:3.20", "gcr.io/kaniko-project", "sea.hub:5000/kaniko-project", `"registry:2"`, `"sea.hub:5000/library/registry:2"`},
		},
		{
			name: "Tekton TaskRun and PipelineRun embedded specs",
			in: `apiVersion: tekton.dev/v1
kind: TaskRun
metadata: {name: tr}
spec:
  taskSpec:
    steps: [{name: s, image: "ubuntu:24.04"}]
---
apiVersion: tekton.dev/v1
kind: PipelineRun
metadata: {name: pr}
spec:
  pipelineSpec:
    tasks:
    - name: t
      taskSpec:
        sidecars: [{name: s, image: "redis:7"}]
    finally:
    - name: f
      taskSpec:
        stepTemplate: {image: "busybox:1.36"}
`,
			want: []string{
				"spec.pipelineSpec.finally[0].taskSpec.stepTemplate.image=docker.io/library/busybox:1.36",
				"spec.pipelineSpec.tasks[0].taskSpec.sidecars[0].image=docker.io/library/redis:7",
				"spec.taskSpec.steps[0].image=docker.io/library/ubuntu:24.04",
			},
			repl: []string{`"ubuntu`, `"sea.hub:5000/library/ubuntu`, `"redis`, `"sea.hub:5000/library/redis`, `"busybox`, `"sea.hub:5000/library/busybox`},
		},
		{
			name: "Argo Workflow: container, script, containerSet, initContainers, sidecars",
			in: `apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {generateName: wf-}
spec:
  templates:
  - name: c
    container: {image: "docker/whalesay:latest", command: [cowsay]}
  - name: s
    script:
      image: python:3.12
      command: [python]
      source: print(1)
  - name: set
    containerSet:
      containers:
      - {name: a, image: "alpine:3.20"}
      - {name: b, image: "alpine:3.19"}
    initContainers: [{name: i, image: "busybox:1.36"}]
    sidecars: [{name: n, image: "nginx:1.27"}]
`,
			want: []string{
				"spec.templates[0].container.image=docker.io/docker/whalesay:latest",
				"spec.templates[1].script.image=docker.io/library/python:3.12",
				"spec.templates[2].containerSet.containers[0].image=docker.io/library/alpine:3.20",
				"spec.templates[2].containerSet.containers[1].image=docker.io/library/alpine:3.19",
				"spec.templates[2].initContainers[0].image=docker.io/library/busybox:1.36",
				"spec.templates[2].sidecars[0].image=docker.io/library/nginx:1.27",
			},
			repl: []string{`"docker/`, `"sea.hub:5000/docker/`, "python:3.12", "sea.hub:5000/library/python:3.12", `"alpine:3.20"`, `"sea.hub:5000/library/alpine:3.20"`, `"alpine:3.19"`, `"sea.hub:5000/library/alpine:3.19"`, `"busybox`, `"sea.hub:5000/library/busybox`, `"nginx`, `"sea.hub:5000/library/nginx`},
		},
		{
			name: "Argo WorkflowTemplate, ClusterWorkflowTemplate, CronWorkflow",
			in: `apiVersion: argoproj.io/v1alpha1
kind: WorkflowTemplate
metadata: {name: a}
spec: {templates: [{name: m, container: {image: "a/b:1"}}]}
---
apiVersion: argoproj.io/v1alpha1
kind: ClusterWorkflowTemplate
metadata: {name: b}
spec: {templates: [{name: m, script: {image: "c/d:1", source: x}}]}
---
apiVersion: argoproj.io/v1alpha1
kind: CronWorkflow
metadata: {name: c}
spec: {workflowSpec: {templates: [{name: m, container: {image: "e/f:1"}}]}}
`,
			want: []string{
				"spec.templates[0].container.image=docker.io/a/b:1",
				"spec.templates[0].script.image=docker.io/c/d:1",
				"spec.workflowSpec.templates[0].container.image=docker.io/e/f:1",
			},
			repl: []string{`"a/b:1"`, `"sea.hub:5000/a/b:1"`, `"c/d:1"`, `"sea.hub:5000/c/d:1"`, `"e/f:1"`, `"sea.hub:5000/e/f:1"`},
		},
		{
			name: "Flux OCIRepository: tag, digest over tag, semver only, not OCI",
			in: `apiVersion: source.toolkit.fluxcd.io/v1beta2
kind: OCIRepository
metadata: {name: tag}
spec: {url: oci://ghcr.io/stefanprodan/manifests/podinfo, ref: {tag: 6.7.0}}
---
apiVersion: source.toolkit.fluxcd.io/v1beta2
kind: OCIRepository
metadata: {name: digest}
spec:
  url: 'oci://registry.example.com:8443/charts/app'
  ref:
    tag: ignored
    digest: sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef
---
apiVersion: source.toolkit.fluxcd.io/v1beta2
kind: OCIRepository
metadata: {name: semver}
spec:
  url: "oci://quay.io/org/manifests"
  ref: {semver: ">=1.0.0"}
---
apiVersion: source.toolkit.fluxcd.io/v1beta2
kind: OCIRepository
metadata: {name: not-oci}
spec: {url: "https://example.com/repo"}
`,
			want: []string{
				"spec.url=ghcr.io/stefanprodan/manifests/podinfo:6.7.0",
				"spec.url=quay.io/org/manifests:latest",
				"spec.url=registry.example.com:8443/charts/app@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
			},
			repl: []string{"oci://ghcr.io/", "oci://sea.hub:5000/", "'oci://registry.example.com:8443/", "'oci://sea.hub:5000/", `"oci://quay.io/`, `"oci://sea.hub:5000/`},
		},
		{
			name: "KubeVirt: VM container disk, VMI kernel boot, pools, CDI registry imports",
			in: `apiVersion: kubevirt.io/v1
kind: VirtualMachine
metadata: {name: vm}
spec:
  template:
    spec:
      volumes:
      - {name: disk, containerDisk: {image: "quay.io/containerdisks/fedora:40"}}
      - {name: ci, cloudInitNoCloud: {userData: x}}
  dataVolumeTemplates:
  - spec: {source: {registry: {url: "docker://quay.io/containerdisks/ubuntu:24.04"}}}
---
apiVersion: kubevirt.io/v1
kind: VirtualMachineInstance
metadata: {name: vmi}
spec:
  domain: {firmware: {kernelBoot: {container: {image: "quay.io/kubevirt/kernel:1", kernelPath: /boot/vmlinuz}}}}
---
apiVersion: pool.kubevirt.io/v1alpha1
kind: VirtualMachinePool
metadata: {name: pool}
spec:
  virtualMachineTemplate:
    spec:
      template:
        spec:
          volumes: [{name: d, containerDisk: {image: "quay.io/containerdisks/centos:9"}}]
---
apiVersion: cdi.kubevirt.io/v1beta1
kind: DataVolume
metadata: {name: dv}
spec:
  source:
    registry:
      url: docker://quay.io/containerdisks/debian:12
---
apiVersion: cdi.kubevirt.io/v1beta1
kind: DataVolume
metadata: {name: http}
spec: {source: {http: {url: "https://example.com/disk.img"}}}
`,
			want: []string{
				"spec.dataVolumeTemplates[0].spec.source.registry.url=quay.io/containerdisks/ubuntu:24.04",
				"spec.domain.firmware.kernelBoot.container.image=quay.io/kubevirt/kernel:1",
				"spec.source.registry.url=quay.io/containerdisks/debian:12",
				"spec.template.spec.volumes[0].containerDisk.image=quay.io/containerdisks/fedora:40",
				"spec.virtualMachineTemplate.spec.template.spec.volumes[0].containerDisk.image=quay.io/containerdisks/centos:9",
			},
			repl: []string{`"quay.io/containerdisks/fedora`, `"sea.hub:5000/containerdisks/fedora`, "docker://quay.io/containerdisks/ubuntu", "docker://sea.hub:5000/containerdisks/ubuntu",
				`"quay.io/kubevirt`, `"sea.hub:5000/kubevirt`, `"quay.io/containerdisks/centos`, `"sea.hub:5000/containerdisks/centos`, "docker://quay.io/containerdisks/debian", "docker://sea.hub:5000/containerdisks/debian"},
		},
		{
			name: "Knative Service and Argo Rollout: the container-list rule, args and env included",
			in: `apiVersion: serving.knative.dev/v1
kind: Service
metadata: {name: hello}
spec:
  template:
    spec:
      containers:
      - image: gcr.io/knative-samples/helloworld-go
        env: [{name: QUEUE_SIDECAR_IMAGE, value: "gcr.io/knative-releases/queue:v1.15.0"}]
---
apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata: {name: canary}
spec:
  template:
    spec:
      initContainers: [{name: i, image: "busybox:1.36"}]
      containers: [{name: app, image: "argoproj/rollouts-demo:blue"}]
`,
			want: []string{
				"spec.template.spec.containers[0].image=docker.io/argoproj/rollouts-demo:blue",
				"spec.template.spec.containers[0].image=gcr.io/knative-samples/helloworld-go:latest",
				"spec.template.spec.initContainers[0].image=docker.io/library/busybox:1.36",
				"~spec.template.spec.containers[0].env[0].value=gcr.io/knative-releases/queue:v1.15.0",
			},
			// QUEUE_SIDECAR_IMAGE names an image: rewritten by default.
			repl: []string{"image: gcr.io/", "image: sea.hub:5000/", `"gcr.io/knative-releases`, `"sea.hub:5000/knative-releases`, `"busybox`, `"sea.hub:5000/library/busybox`, `"argoproj/`, `"sea.hub:5000/argoproj/`},
		},
		{
			name: "OLM ClusterServiceVersion relatedImages",
			in: `apiVersion: operators.coreos.com/v1alpha1
kind: ClusterServiceVersion
metadata: {name: op.v1.0.0}
spec:
  relatedImages:
  - {name: operator, image: "quay.io/org/operator:v1.0.0"}
`,
			want: []string{"spec.relatedImages[0].image=quay.io/org/operator:v1.0.0"},
			repl: []string{`"quay.io/`, `"sea.hub:5000/`},
		},
		{
			name: "Kyverno: patterns and templates are not images, valid references are",
			in: `apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata: {name: p}
spec:
  rules:
  - validate:
      pattern:
        spec:
          containers:
          - image: "registry/*"
          - image: "!*:latest"
  - mutate:
      patchStrategicMerge:
        spec:
          containers:
          - (name): "*"
            image: "{{ regex_replace_all('^[^/]+', '{{@}}', 'registry.corp') }}"
          - name: sidecar
            image: "ghcr.io/corp/sidecar:1.0"
`,
			want: []string{"spec.rules[1].mutate.patchStrategicMerge.spec.containers[1].image=ghcr.io/corp/sidecar:1.0"},
			repl: []string{`"ghcr.io/`, `"sea.hub:5000/`},
		},
		{
			name: "any custom resource: glob patterns in container lists are not images",
			in: `apiVersion: policy.example.com/v1
kind: ImagePolicy
metadata: {name: p}
spec:
  containers:
  - image: "docker.io/library/*"
  - image: "nginx:1.2?"
`,
		},
		{
			name: "TidbCluster: baseImage with the component's version, else spec.version; a deprecated image only without baseImage",
			in: `apiVersion: pingcap.com/v1alpha1
kind: TidbCluster
metadata: {name: basic}
spec:
  version: v8.5.0
  helper: {image: alpine:3.16.0}
  pd: {baseImage: pingcap/pd, image: pingcap/pd:ignored}
  tikv: {baseImage: 'pingcap/tikv', version: v8.5.1}
  tidb: {image: "quay.io/pingcap/tidb:v7.5.0"}
  pdms:
  - {name: tso, baseImage: pingcap/pd}
  - {name: scheduling, baseImage: pingcap/pd, version: v8.5.2}
  tiflash: {replicas: 1}
`,
			want: []string{"spec.helper.image=docker.io/library/alpine:3.16.0", "spec.pd.baseImage=docker.io/pingcap/pd:v8.5.0",
				"spec.pdms[0].baseImage=docker.io/pingcap/pd:v8.5.0", "spec.pdms[1].baseImage=docker.io/pingcap/pd:v8.5.2",
				"spec.tidb.image=quay.io/pingcap/tidb:v7.5.0", "spec.tikv.baseImage=docker.io/pingcap/tikv:v8.5.1"},
			repl: []string{"image: alpine", "image: sea.hub:5000/library/alpine", "pd: {baseImage: pingcap/pd", "pd: {baseImage: sea.hub:5000/pingcap/pd",
				"'pingcap/tikv'", "'sea.hub:5000/pingcap/tikv'", `"quay.io/pingcap/tidb`, `"sea.hub:5000/pingcap/tidb`,
				"tso, baseImage: pingcap/pd", "tso, baseImage: sea.hub:5000/pingcap/pd", "scheduling, baseImage: pingcap/pd", "scheduling, baseImage: sea.hub:5000/pingcap/pd"},
		},
		{
			name: "TidbCluster without any version: baseImage alone (latest); DMCluster",
			in: `apiVersion: pingcap.com/v1alpha1
kind: TidbCluster
metadata: {name: t}
spec:
  pd: {baseImage: pingcap/pd}
---
apiVersion: pingcap.com/v1alpha1
kind: DMCluster
metadata: {name: dm}
spec:
  version: v8.5.0
  master: {baseImage: pingcap/dm}
  worker: {baseImage: pingcap/dm, version: v8.5.1}
`,
			want: []string{"spec.master.baseImage=docker.io/pingcap/dm:v8.5.0", "spec.pd.baseImage=docker.io/pingcap/pd:latest", "spec.worker.baseImage=docker.io/pingcap/dm:v8.5.1"},
			repl: []string{"{baseImage: pingcap/pd}", "{baseImage: sea.hub:5000/pingcap/pd}", "master: {baseImage: pingcap/dm", "master: {baseImage: sea.hub:5000/pingcap/dm",
				"worker: {baseImage: pingcap/dm", "worker: {baseImage: sea.hub:5000/pingcap/dm"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rw, err := New(rewrite.Config{})
			if err != nil {
				t.Fatal(err)
			}
			out, err := rw.RewriteBytes([]byte(tt.in), "in.yaml")
			if err != nil {
				t.Fatal(err)
			}
			// Image fields from Images, embedded references (named ones
			// are listed too) from Embedded.
			var got []string
			for _, o := range occurrences(rw.Images()) {
				if !strings.HasPrefix(o, "~") {
					got = append(got, o)
				}
			}
			got = append(got, occurrences(rw.Embedded())...)
			sort.Strings(got)
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("found:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
			if want := replaceAll(t, tt.in, tt.repl...); string(out) != want {
				t.Errorf("output:\n%s\nwant:\n%s", out, want)
			}
			again, _ := New(rewrite.Config{})
			if out2, err := again.RewriteBytes(out, "in.yaml"); err != nil || string(out2) != string(out) {
				t.Errorf("not idempotent (%v):\n%s", err, out2)
			}
		})
	}
}

// TestBuiltinTable: every built-in field parses, and every composite's
// repository key either says image or needs a scheme, so the fast path
// (which looks for image words and schemes) never skips one.
func TestBuiltinTable(t *testing.T) {
	for _, f := range BuiltinImageFields() {
		if _, err := rewrite.ParseFieldPath(f.Path); err != nil || f.Kind == "" || f.Group == "" {
			t.Errorf("%+v: %v", f, err)
		}
		if p, _ := rewrite.ParseFieldPath(f.Path); !hasImageWord(p[len(p)-1].Key) {
			t.Errorf("%+v: leaf key without an image word would need a fast-path key", f)
		}
	}
	for _, c := range BuiltinCompositeFields() {
		if _, err := parseComposite(c); err != nil {
			t.Errorf("%+v: %v", c, err)
		}
		// The document holds the path's keys, the repository's among them.
		if c.Scheme == "" && !hasImageWord(c.Path+"."+c.Repository) {
			t.Errorf("%+v: the fast path cannot see this composite", c)
		}
	}
	f, err := NewFinder(nil)
	if err != nil {
		t.Fatal(err)
	}
	// Registry settings have keys without an image word: they are the
	// only fast-path keys of the built-in tables.
	if strings.Join(f.keys, ",") != `registry:,registry :,'registry',"registry",hub:,hub :,'hub',"hub"` || strings.Join(f.schemes, ",") != "docker://,oci://" {
		t.Errorf("keys %q, schemes %q", f.keys, f.schemes)
	}
}

// TestConfiguredFieldBesideBuiltin: a configured field that repeats a
// built-in one is found once; a new one is found and its map's args
// scanned.
func TestConfiguredFieldBesideBuiltin(t *testing.T) {
	cfg := rewrite.Config{ImageFields: []rewrite.ImageField{
		{Group: "monitoring.coreos.com", Kind: "Prometheus", Path: "spec.image"},
		{Group: "example.com", Kind: "Widget", Path: "spec.runner.image"},
	}}
	in := `apiVersion: monitoring.coreos.com/v1
kind: Prometheus
metadata: {name: p}
spec: {image: "quay.io/prometheus/prometheus:v2.54.1"}
---
apiVersion: example.com/v1
kind: Widget
metadata: {name: w}
spec:
  runner:
    image: example.com/runner:1
    args: [--helper-image=busybox:1.36]
`
	rw, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rw.RewriteBytes([]byte(in), "in.yaml"); err != nil {
		t.Fatal(err)
	}
	// --helper-image= names an image: listed (and rewritten) by default.
	got := strings.Join(occurrences(rw.Images()), "\n")
	want := "spec.image=quay.io/prometheus/prometheus:v2.54.1\nspec.runner.image=example.com/runner:1\n~spec.runner.args[0]=docker.io/library/busybox:1.36"
	if got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
	if got := strings.Join(occurrences(rw.Embedded()), "\n"); got != "~spec.runner.args[0]=docker.io/library/busybox:1.36" {
		t.Errorf("embedded: %s", got)
	}
}
