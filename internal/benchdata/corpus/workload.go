package corpus

import (
	"fmt"
	"strings"
)

// workloadKinds is the cycle of workload kinds: every kind shows up even
// in a small stream, Deployments most.
var workloadKinds = []string{"Deployment", "StatefulSet", "Deployment", "DaemonSet", "Deployment", "Job", "Deployment", "CronJob", "Pod", "Deployment"}

// workload writes one of the built-in Pod-spec kinds.
func (g *gen) workload() {
	comp := g.component()
	name := g.name(comp)
	kind := workloadKinds[g.workloads%len(workloadKinds)]
	g.workloads++
	switch kind {
	case "Deployment":
		g.begin("Deployment", comp+"/deployment.yaml")
		g.line(0, "apiVersion: apps/v1")
		g.line(0, "kind: Deployment")
		g.metadata(name, comp, true)
		g.line(0, "spec:")
		g.linef(2, "replicas: %d", 1+g.rng.IntN(3))
		g.line(2, "revisionHistoryLimit: 10")
		g.selector(2, comp)
		if g.rng.IntN(2) == 0 {
			g.line(2, "strategy:")
			g.line(4, "type: RollingUpdate")
			g.line(4, "rollingUpdate: {maxSurge: 25%, maxUnavailable: 0}")
		}
		g.template(2, comp, false)
	case "StatefulSet":
		g.begin("StatefulSet", comp+"/statefulset.yaml")
		g.line(0, "apiVersion: apps/v1")
		g.line(0, "kind: StatefulSet")
		g.metadata(name, comp, true)
		g.line(0, "spec:")
		g.linef(2, "replicas: %d", 1+g.rng.IntN(3))
		g.linef(2, "serviceName: %s-headless", name)
		g.line(2, "podManagementPolicy: Parallel")
		g.selector(2, comp)
		g.template(2, comp, false)
		g.line(2, "volumeClaimTemplates:")
		g.line(2, "- apiVersion: v1")
		g.line(4, "kind: PersistentVolumeClaim")
		g.line(4, "metadata:")
		g.line(6, "name: data")
		g.line(4, "spec:")
		g.line(6, "accessModes: [\"ReadWriteOnce\"]")
		g.line(6, "resources:")
		g.line(8, "requests:")
		g.linef(10, "storage: %dGi", 1+g.rng.IntN(50))
	case "DaemonSet":
		g.begin("DaemonSet", comp+"/daemonset.yaml")
		g.line(0, "apiVersion: apps/v1")
		g.line(0, "kind: DaemonSet")
		g.metadata(name, comp, true)
		g.line(0, "spec:")
		g.selector(2, comp)
		g.line(2, "updateStrategy:")
		g.line(4, "type: RollingUpdate")
		g.line(4, "rollingUpdate:")
		g.line(6, "maxUnavailable: 1")
		g.template(2, comp, false)
	case "Job":
		g.begin("Job", comp+"/job.yaml")
		g.line(0, "apiVersion: batch/v1")
		g.line(0, "kind: Job")
		g.line(0, "metadata:")
		g.linef(2, "name: %s", name)
		g.linef(2, "namespace: %s", g.namespace)
		g.line(2, "annotations:")
		g.line(4, `"helm.sh/hook": pre-install,pre-upgrade`)
		g.line(4, `"helm.sh/hook-delete-policy": before-hook-creation,hook-succeeded`)
		g.labels(2, comp)
		g.line(0, "spec:")
		g.line(2, "backoffLimit: 3")
		g.line(2, "ttlSecondsAfterFinished: 300")
		g.template(2, comp, true)
	case "CronJob":
		g.begin("CronJob", comp+"/cronjob.yaml")
		g.line(0, "apiVersion: batch/v1")
		g.line(0, "kind: CronJob")
		g.metadata(name, comp, true)
		g.line(0, "spec:")
		g.linef(2, "schedule: \"*/%d * * * *\"", 5+g.rng.IntN(55))
		g.line(2, "concurrencyPolicy: Forbid")
		g.line(2, "successfulJobsHistoryLimit: 3")
		g.line(2, "jobTemplate:")
		g.line(4, "spec:")
		g.line(6, "backoffLimit: 1")
		g.template(6, comp, true)
	default:
		g.begin("Pod", "tests/test-connection.yaml")
		g.line(0, "apiVersion: v1")
		g.line(0, "kind: Pod")
		g.line(0, "metadata:")
		g.linef(2, "name: \"%s-test\"", name)
		g.linef(2, "namespace: %s", g.namespace)
		g.line(2, "annotations:")
		g.line(4, `"helm.sh/hook": test`)
		g.labels(2, comp)
		g.line(0, "spec:")
		g.podSpec(2, comp, true, true)
	}
}

func (g *gen) selector(ind int, comp string) {
	g.line(ind, "selector:")
	g.line(ind+2, "matchLabels:")
	g.linef(ind+4, "app.kubernetes.io/name: %s", g.chart)
	g.linef(ind+4, "app.kubernetes.io/instance: %s", g.release)
	g.linef(ind+4, "app.kubernetes.io/component: %s", comp)
}

// template writes a pod template at ind.
func (g *gen) template(ind int, comp string, job bool) {
	g.line(ind, "template:")
	g.line(ind+2, "metadata:")
	g.line(ind+4, "annotations:")
	g.linef(ind+6, "checksum/config: %s", strings.TrimPrefix(g.digest(), "sha256:"))
	g.linef(ind+6, "kubectl.kubernetes.io/default-container: \"%s\"", comp)
	g.line(ind+4, "labels:")
	g.linef(ind+6, "app.kubernetes.io/name: %s", g.chart)
	g.linef(ind+6, "app.kubernetes.io/instance: %s", g.release)
	g.linef(ind+6, "app.kubernetes.io/component: %s", comp)
	g.line(ind+2, "spec:")
	g.podSpec(ind+4, comp, job, false)
}

// podSpec writes a PodSpec at ind: init containers, a main container,
// sidecars, volumes (sometimes an image volume, in Pods sometimes an rbd
// volume whose "image" is a Ceph disk), scheduling constraints.
func (g *gen) podSpec(ind int, comp string, job, pod bool) {
	g.linef(ind, "serviceAccountName: %s-%s", g.release, comp)
	if g.rng.IntN(2) == 0 {
		g.line(ind, "securityContext: {runAsNonRoot: true, runAsUser: 1001, fsGroup: 1001}")
	} else {
		g.line(ind, "securityContext:")
		g.line(ind+2, "fsGroup: 65534")
		g.line(ind+2, "seccompProfile:")
		g.line(ind+4, "type: RuntimeDefault")
	}
	if job {
		g.line(ind, "restartPolicy: Never")
	}
	if g.rng.IntN(3) == 0 {
		g.line(ind, "imagePullSecrets:")
		g.line(ind, "- name: regcred")
	}
	if n := g.rng.IntN(3); n > 0 {
		g.line(ind, "initContainers:")
		for i := 0; i < n; i++ {
			g.containerSmall(ind, []string{"init-chown", "wait-for-db", "copy-config"}[i])
		}
	}
	g.line(ind, "containers:")
	g.containerFull(ind, comp)
	for i, n := 0, g.rng.IntN(3); i < n; i++ {
		if g.rng.IntN(3) == 0 {
			g.linef(ind, "- {name: sidecar-%d, image: %s, args: [--watch-dir=/etc/config, --webhook-url=http://127.0.0.1:8080/-/reload]}", i, g.quoted(g.pickImage()))
		} else {
			g.containerSmall(ind, fmt.Sprintf("sidecar-%d", i))
		}
	}
	g.line(ind, "volumes:")
	g.line(ind, "- name: config")
	g.line(ind+2, "configMap:")
	g.linef(ind+4, "name: %s-config", g.release)
	g.line(ind, "- name: tmp")
	g.line(ind+2, "emptyDir: {}")
	if g.rng.IntN(12) == 0 {
		g.line(ind, "- name: models")
		g.line(ind+2, "image:")
		g.linef(ind+4, "reference: %s", g.quoted(g.pickImage()))
		g.line(ind+4, "pullPolicy: IfNotPresent")
	}
	if pod && g.rng.IntN(3) == 0 {
		g.line(ind, "- name: ceph")
		g.line(ind+2, "rbd:")
		g.line(ind+4, "image: kube-disk-01")
		g.line(ind+4, "monitors: [\"10.16.154.78:6789\", \"10.16.154.82:6789\"]")
		g.line(ind+4, "pool: kube")
	}
	if g.rng.IntN(2) == 0 {
		g.line(ind, "nodeSelector:")
		g.line(ind+2, "kubernetes.io/os: linux")
		g.line(ind, "tolerations:")
		g.line(ind, "- key: node-role.kubernetes.io/control-plane")
		g.line(ind+2, "operator: Exists")
		g.line(ind+2, "effect: NoSchedule")
	}
	if g.rng.IntN(5) == 0 {
		g.line(ind, "affinity:")
		g.line(ind+2, "podAntiAffinity:")
		g.line(ind+4, "preferredDuringSchedulingIgnoredDuringExecution:")
		g.line(ind+4, "- weight: 100")
		g.line(ind+6, "podAffinityTerm:")
		g.line(ind+8, "topologyKey: kubernetes.io/hostname")
		g.line(ind+8, "labelSelector:")
		g.line(ind+10, "matchLabels:")
		g.linef(ind+12, "app.kubernetes.io/instance: %s", g.release)
	}
}

// quoted writes an image reference plain, double- or single-quoted.
func (g *gen) quoted(ref string) string {
	switch g.rng.IntN(4) {
	case 0:
		return `"` + ref + `"`
	case 1:
		return `'` + ref + `'`
	}
	return ref
}

// imageLine writes the image of a container item at ind (the item's keys).
func (g *gen) imageLine(ind int) {
	ref := g.quoted(g.pickImage())
	switch g.rng.IntN(8) {
	case 0:
		g.linef(ind, "image: %s # pinned by the release", ref)
	case 1:
		g.line(ind, "# -- renovate: datasource=docker")
		g.linef(ind, "image: %s", ref)
	default:
		g.linef(ind, "image: %s", ref)
	}
}

// containerSmall writes an init container or a sidecar.
func (g *gen) containerSmall(ind int, name string) {
	g.linef(ind, "- name: %s", name)
	g.imageLine(ind + 2)
	g.line(ind+2, "imagePullPolicy: IfNotPresent")
	switch g.rng.IntN(3) {
	case 0:
		g.line(ind+2, `command: ["sh", "-c", "until nc -z db 5432; do echo waiting; sleep 2; done"]`)
	case 1:
		g.line(ind+2, "args:")
		g.line(ind+2, "- --reload-url=http://127.0.0.1:9090/-/reload")
		g.line(ind+2, "- --config-file=/etc/config/config.yaml")
		g.line(ind+2, "- '--watched-dir=/etc/config'")
	default:
		g.line(ind+2, "command:")
		g.line(ind+2, "- /bin/sh")
		g.line(ind+2, "- -c")
		g.line(ind+2, "- |")
		g.line(ind+4, "set -e")
		g.line(ind+4, `cp /config/* /work/ && sed -i 's/\${PORT}/8080/' /work/app.conf`)
	}
	g.line(ind+2, "resources:")
	g.line(ind+4, "requests: {cpu: 10m, memory: 32Mi}")
	g.line(ind+2, "volumeMounts:")
	g.line(ind+2, "- name: config")
	g.line(ind+4, "mountPath: /etc/config")
	g.line(ind+4, "readOnly: true")
}

// containerFull writes a main container with the usual trimmings.
func (g *gen) containerFull(ind int, comp string) {
	g.linef(ind, "- name: %s", comp)
	g.imageLine(ind + 2)
	g.linef(ind+2, "imagePullPolicy: %s", []string{"IfNotPresent", "Always", `"IfNotPresent"`}[g.rng.IntN(3)])
	g.line(ind+2, "args:")
	g.linef(ind+2, "- --v=%d", g.rng.IntN(5))
	g.line(ind+2, "- --config.file=/etc/config/config.yaml")
	g.line(ind+2, "- --web.listen-address=:8080")
	if g.rng.IntN(4) == 0 {
		// An image outside the Pod spec's image fields, in a flag named for
		// an image: a named embedded reference, listed and rewritten by
		// default when it has a tag or digest (without one it is rewritten
		// and reported, not listed).
		im := g.pool[g.rng.IntN(len(g.pool))]
		if last := im.ref[strings.LastIndexByte(im.ref, '/')+1:]; strings.ContainsAny(last, ":@") {
			g.used[im.ref] = im.name
		}
		g.linef(ind+2, "- --sidecar-image=%s", im.ref)
	}
	g.line(ind+2, "env:")
	if g.rng.IntN(2) == 0 {
		g.line(ind+2, "- name: POD_NAME")
		g.line(ind+4, "valueFrom:")
		g.line(ind+6, "fieldRef:")
		g.line(ind+8, "fieldPath: metadata.name")
	}
	g.line(ind+2, "- name: POD_NAMESPACE")
	g.line(ind+4, "valueFrom: {fieldRef: {fieldPath: metadata.namespace}}")
	for i, n := 0, g.rng.IntN(5); i < n; i++ {
		k := []string{"LOG_LEVEL", "GOMAXPROCS", "HTTP_PROXY", "NO_PROXY", "FEATURE_GATES", "TZ", "JAVA_OPTS", "EXTRA_ARGS"}[i]
		v := []string{`"info"`, `"2"`, `""`, `"10.0.0.0/8,.svc,.cluster.local"`, `'A=true,B=false'`, "UTC", `"-Xmx512m -XX:+UseG1GC"`, `"--enable-x"`}[i]
		g.linef(ind+2, "- name: %s", k)
		g.linef(ind+4, "value: %s", v)
	}
	g.line(ind+2, "ports:")
	g.line(ind+2, "- name: http")
	g.line(ind+4, "containerPort: 8080")
	g.line(ind+4, "protocol: TCP")
	g.line(ind+2, "- {name: metrics, containerPort: 9090, protocol: TCP}")
	g.line(ind+2, "livenessProbe:")
	g.line(ind+4, "httpGet:")
	g.line(ind+6, "path: /healthz")
	g.line(ind+6, "port: http")
	g.line(ind+4, "initialDelaySeconds: 10")
	g.line(ind+4, "periodSeconds: 10")
	g.line(ind+2, "readinessProbe:")
	g.line(ind+4, "httpGet: {path: /readyz, port: http}")
	g.line(ind+2, "resources:")
	if g.rng.IntN(2) == 0 {
		g.line(ind+4, "limits:")
		g.line(ind+6, "cpu: 500m")
		g.line(ind+6, "memory: 512Mi")
	}
	g.line(ind+4, "requests:")
	g.line(ind+6, "cpu: 100m")
	g.line(ind+6, "memory: 128Mi")
	if g.rng.IntN(2) == 0 {
		g.line(ind+2, "securityContext:")
		g.line(ind+4, "allowPrivilegeEscalation: false")
		g.line(ind+4, "capabilities:")
		g.line(ind+6, "drop:")
		g.line(ind+6, "- ALL")
		g.line(ind+4, "readOnlyRootFilesystem: true")
	}
	g.line(ind+2, "volumeMounts:")
	g.line(ind+2, "- name: config")
	g.line(ind+4, "mountPath: /etc/config")
	g.line(ind+2, "- name: tmp")
	g.line(ind+4, "mountPath: /tmp")
}
