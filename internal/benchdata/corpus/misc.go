package corpus

import (
	"encoding/base64"
	"fmt"
	"math"
	"strings"
)

// logSize draws a size log-uniformly between lo and hi bytes; in small
// streams, hi is at most 1/25 of the stream.
func (g *gen) logSize(lo, hi float64) int {
	hi = math.Max(math.Min(hi, float64(g.size)/25), lo)
	return int(lo * math.Exp(g.rng.Float64()*math.Log(hi/lo)))
}

// configMap writes a ConfigMap without "image": a Grafana dashboard, alert
// rules with regular expressions, a shell script or plain settings.
func (g *gen) configMap() {
	comp := g.component()
	g.begin("ConfigMap", comp+"/configmap.yaml")
	g.line(0, "apiVersion: v1")
	g.line(0, "kind: ConfigMap")
	x := g.rng.IntN(100)
	g.metadata(g.name(comp), comp, true)
	if x < 30 {
		g.line(2, "annotations:")
		g.line(4, `grafana_dashboard: "1"`)
	}
	g.line(0, "data:")
	switch {
	case x < 30:
		g.dashboard(2, g.logSize(6<<10, 120<<10))
	case x < 55:
		g.rules(2, g.logSize(2<<10, 24<<10), false)
	case x < 75:
		g.line(2, "entrypoint.sh: |")
		g.line(4, "#!/bin/sh")
		g.line(4, "set -eu")
		end := g.b.Len() + g.logSize(1<<10, 6<<10)
		for i := 0; g.b.Len() < end; i++ {
			g.linef(4, `if [ -f "/etc/config/part-%d.conf" ]; then`, i)
			g.linef(6, `sed -e 's/\(listen\) [0-9]*/\1 %d/' -e "s|\${HOST}|$(hostname -f)|g" /etc/config/part-%d.conf > /tmp/part-%d.conf`, 8000+i, i, i)
			g.line(4, "fi")
		}
		g.line(4, `exec "$@"`)
	default:
		g.line(2, `LOG_LEVEL: "info"`)
		g.line(2, `ENABLE_METRICS: "true"`)
		g.line(2, "TIMEOUT: 30s")
		g.line(2, `nginx.conf: "worker_processes 1;\nevents { worker_connections 1024; }\nhttp {\n  server { listen 8080; location / { return 200 'ok'; } }\n}\n"`)
		g.line(2, "empty: ''")
		g.line(2, "settings.json: '{\"retries\": 3, \"backoff\": \"2s\", \"targets\": [\"a\", \"b\"]}'")
	}
}

// configMapWithImages writes a ConfigMap whose YAML text holds "image:"
// lines (an operator's configuration), or alert rules that mention image
// labels. rehost leaves them alone: they are not in a Pod spec.
func (g *gen) configMapWithImages() {
	comp := g.component()
	g.begin("ConfigMap", comp+"/configmap-operator.yaml")
	g.line(0, "apiVersion: v1")
	g.line(0, "kind: ConfigMap")
	g.metadata(g.name(comp), comp, true)
	g.line(0, "data:")
	if g.rng.IntN(3) == 0 {
		g.rules(2, g.logSize(2<<10, 16<<10), true)
		return
	}
	g.line(2, "config.yaml: |")
	g.line(4, "# Operator configuration; images are pulled by the operator itself.")
	g.line(4, "deployment:")
	g.linef(6, "image_name: %s", g.pool[g.rng.IntN(len(g.pool))].name)
	g.linef(6, "image_version: %q", g.tag())
	g.line(6, "image_pull_policy: IfNotPresent")
	g.line(4, "components:")
	end := g.b.Len() + g.logSize(2<<10, 20<<10)
	for i := 0; g.b.Len() < end; i++ {
		g.linef(4, "- name: %s-%d", g.component(), i)
		g.linef(6, "image: %s", g.pool[g.rng.IntN(len(g.pool))].ref)
		g.line(6, "enabled: true")
		g.line(6, "resources:")
		g.line(8, "requests: {cpu: 50m, memory: 64Mi}")
		g.line(6, "extraArgs: [\"--log-level=info\", \"--metrics-bind-address=:8080\"]")
	}
}

// dashboard writes a Grafana dashboard of about size bytes as a literal
// block of JSON.
func (g *gen) dashboard(ind, size int) {
	g.linef(ind, "%s-dashboard.json: |-", g.component())
	in := strings.Repeat(" ", ind+2)
	g.b.WriteString(in + "{\n")
	g.b.WriteString(in + "  \"annotations\": {\"list\": [{\"builtIn\": 1, \"datasource\": {\"type\": \"grafana\", \"uid\": \"-- Grafana --\"}, \"enable\": true, \"hide\": true, \"name\": \"Annotations & Alerts\", \"type\": \"dashboard\"}]},\n")
	g.b.WriteString(in + "  \"editable\": true,\n")
	g.b.WriteString(in + "  \"panels\": [\n")
	end := g.b.Len() + size
	metrics := []string{"http_requests_total", "process_cpu_seconds_total", "go_goroutines", "container_memory_working_set_bytes", "apiserver_request_duration_seconds_bucket", "kube_pod_status_phase"}
	for i := 0; ; i++ {
		m := metrics[g.rng.IntN(len(metrics))]
		fmt.Fprintf(g.b, "%s    {\n", in)
		fmt.Fprintf(g.b, "%s      \"datasource\": {\"type\": \"prometheus\", \"uid\": \"${datasource}\"},\n", in)
		fmt.Fprintf(g.b, "%s      \"fieldConfig\": {\"defaults\": {\"color\": {\"mode\": \"palette-classic\"}, \"unit\": \"%s\"}, \"overrides\": []},\n", in, []string{"short", "bytes", "s", "reqps"}[g.rng.IntN(4)])
		fmt.Fprintf(g.b, "%s      \"gridPos\": {\"h\": 8, \"w\": 12, \"x\": %d, \"y\": %d},\n", in, 12*(i%2), 8*(i/2))
		fmt.Fprintf(g.b, "%s      \"id\": %d,\n", in, i+1)
		fmt.Fprintf(g.b, "%s      \"targets\": [{\"expr\": \"sum(rate(%s{job=\\\"$job\\\", namespace=~\\\"$namespace\\\"}[$__rate_interval])) by (pod)\", \"legendFormat\": \"{{pod}}\", \"refId\": \"A\"}],\n", in, m)
		fmt.Fprintf(g.b, "%s      \"title\": \"%s by pod\",\n", in, strings.ReplaceAll(m, "_", " "))
		fmt.Fprintf(g.b, "%s      \"type\": \"timeseries\"\n", in)
		if g.b.Len() >= end {
			fmt.Fprintf(g.b, "%s    }\n", in)
			break
		}
		fmt.Fprintf(g.b, "%s    },\n", in)
	}
	g.b.WriteString(in + "  ],\n")
	g.b.WriteString(in + "  \"schemaVersion\": 39,\n")
	fmt.Fprintf(g.b, "%s  \"title\": \"%s / %s\",\n", in, g.chart, g.component())
	fmt.Fprintf(g.b, "%s  \"uid\": \"%s\"\n", in, strings.TrimPrefix(g.digest(), "sha256:")[:20])
	g.b.WriteString(in + "}\n")
}

// rules writes Prometheus alerting rules of about size bytes as a literal
// block; with images, the expressions select on the image label.
func (g *gen) rules(ind, size int, images bool) {
	g.line(ind, "alerts.yaml: |")
	g.line(ind+2, "groups:")
	g.linef(ind+2, "- name: %s.rules", g.chart)
	g.line(ind+4, "rules:")
	end := g.b.Len() + size
	for i := 0; g.b.Len() < end; i++ {
		g.linef(ind+4, "- alert: %sHigh%d", capitalize(strings.ReplaceAll(g.component(), "-", "")), i)
		sel := `job=~"kube-.*|kubelet", namespace=~"(openshift-.*|kube-.*|default)"`
		if images {
			sel = `container!="", image!=""`
		}
		g.linef(ind+6, `expr: sum by (namespace, pod) (rate(container_cpu_usage_seconds_total{%s}[5m])) > %d`, sel, 1+g.rng.IntN(9))
		g.linef(ind+6, "for: %dm", 5+g.rng.IntN(20))
		g.line(ind+6, "labels:")
		g.line(ind+8, "severity: warning")
		g.line(ind+6, "annotations:")
		g.line(ind+8, `description: 'Pod {{ $labels.namespace }}/{{ $labels.pod }} uses {{ printf "%.2f" $value }} cores.'`)
		g.line(ind+8, `runbook_url: https://runbooks.example.com/alerts/cpu\-high`)
		g.line(ind+8, "summary: CPU usage is high.")
	}
}

// rbac writes a ServiceAccount, a (Cluster)Role or a (Cluster)RoleBinding.
func (g *gen) rbac() {
	comp := g.component()
	name := g.name(comp)
	switch x := g.rng.IntN(100); {
	case x < 25:
		g.begin("ServiceAccount", comp+"/serviceaccount.yaml")
		g.line(0, "apiVersion: v1")
		g.line(0, "kind: ServiceAccount")
		g.metadata(name, comp, true)
		g.line(0, "automountServiceAccountToken: true")
	case x < 60:
		cluster := x < 45
		kind := "Role"
		if cluster {
			kind = "ClusterRole"
		}
		g.begin(kind, comp+"/"+strings.ToLower(kind)+".yaml")
		g.line(0, "apiVersion: rbac.authorization.k8s.io/v1")
		g.line(0, "kind: "+kind)
		g.metadata(name, comp, !cluster)
		g.line(0, "rules:")
		groups := []string{`""`, "apps", "batch", "networking.k8s.io", "policy", "coordination.k8s.io", "monitoring.coreos.com", "cert-manager.io", "argoproj.io"}
		resources := []string{"pods", "services", "endpoints", "configmaps", "secrets", "deployments", "statefulsets", "daemonsets", "jobs", "cronjobs", "ingresses", "leases", "events", "nodes", "namespaces", "persistentvolumeclaims"}
		for i, n := 0, 3+g.rng.IntN(10); i < n; i++ {
			g.line(0, "- apiGroups:")
			g.line(2, "- "+groups[g.rng.IntN(len(groups))])
			g.line(2, "resources:")
			for j, m := 0, 1+g.rng.IntN(5); j < m; j++ {
				g.line(2, "- "+resources[g.rng.IntN(len(resources))])
			}
			if g.rng.IntN(2) == 0 {
				g.line(2, `verbs: ["get", "list", "watch"]`)
			} else {
				g.line(2, "verbs:")
				for _, v := range []string{"create", "delete", "get", "list", "patch", "update", "watch"} {
					g.line(2, "- "+v)
				}
			}
		}
	default:
		cluster := x < 80
		kind, ref := "RoleBinding", "Role"
		if cluster {
			kind, ref = "ClusterRoleBinding", "ClusterRole"
		}
		g.begin(kind, comp+"/"+strings.ToLower(kind)+".yaml")
		g.line(0, "apiVersion: rbac.authorization.k8s.io/v1")
		g.line(0, "kind: "+kind)
		g.metadata(name, comp, !cluster)
		g.line(0, "roleRef:")
		g.line(2, "apiGroup: rbac.authorization.k8s.io")
		g.line(2, "kind: "+ref)
		g.linef(2, "name: %s-%s", g.release, comp)
		g.line(0, "subjects:")
		g.line(0, "- kind: ServiceAccount")
		g.linef(2, "name: %s-%s", g.release, comp)
		g.linef(2, "namespace: %s", g.namespace)
	}
}

// service writes a Service, sometimes as a JSON document.
func (g *gen) service() {
	comp := g.component()
	name := g.name(comp)
	g.begin("Service", comp+"/service.yaml")
	if g.rng.IntN(8) == 0 {
		g.linef(0, `{"apiVersion": "v1", "kind": "Service", "metadata": {"name": "%s", "namespace": "%s", "labels": {"app.kubernetes.io/name": "%s"}},`, name, g.namespace, g.chart)
		g.linef(0, ` "spec": {"type": "ClusterIP", "ports": [{"name": "http", "port": 80, "targetPort": "http", "protocol": "TCP"}], "selector": {"app.kubernetes.io/instance": "%s"}}}`, g.release)
		return
	}
	g.line(0, "apiVersion: v1")
	g.line(0, "kind: Service")
	g.metadata(name, comp, true)
	if g.rng.IntN(3) == 0 {
		g.line(2, "annotations:")
		g.line(4, `prometheus.io/scrape: "true"`)
		g.line(4, `prometheus.io/port: "9090"`)
	}
	g.line(0, "spec:")
	if g.rng.IntN(4) == 0 {
		g.line(2, "clusterIP: None")
	} else {
		g.line(2, "type: ClusterIP")
	}
	g.line(2, "ports:")
	g.line(2, "- name: http")
	g.line(4, "port: 80")
	g.line(4, "targetPort: http")
	g.line(4, "protocol: TCP")
	g.line(2, "- {name: metrics, port: 9090, targetPort: 9090}")
	g.line(2, "selector:")
	g.linef(4, "app.kubernetes.io/name: %s", g.chart)
	g.linef(4, "app.kubernetes.io/instance: %s", g.release)
}

// small writes a Secret, a PodDisruptionBudget, a NetworkPolicy or a
// ValidatingWebhookConfiguration with a CA bundle.
func (g *gen) small() {
	comp := g.component()
	name := g.name(comp)
	switch x := g.rng.IntN(4); x {
	case 0:
		g.begin("Secret", comp+"/secret.yaml")
		g.line(0, "apiVersion: v1")
		g.line(0, "kind: Secret")
		g.metadata(name, comp, true)
		g.line(0, "type: Opaque")
		g.line(0, "data:")
		g.linef(2, "password: %s", g.base64(24))
		g.linef(2, "tls.key: %s", g.base64(1200))
	case 1:
		g.begin("PodDisruptionBudget", comp+"/pdb.yaml")
		g.line(0, "apiVersion: policy/v1")
		g.line(0, "kind: PodDisruptionBudget")
		g.metadata(name, comp, true)
		g.line(0, "spec:")
		g.line(2, "maxUnavailable: 1")
		g.selector(2, comp)
	case 2:
		g.begin("NetworkPolicy", comp+"/networkpolicy.yaml")
		g.line(0, "apiVersion: networking.k8s.io/v1")
		g.line(0, "kind: NetworkPolicy")
		g.metadata(name, comp, true)
		g.line(0, "spec:")
		g.line(2, "podSelector:")
		g.line(4, "matchLabels:")
		g.linef(6, "app.kubernetes.io/instance: %s", g.release)
		g.line(2, "policyTypes: [Ingress, Egress]")
		g.line(2, "ingress:")
		g.line(2, "- from:")
		g.line(4, "- namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: monitoring}}")
		g.line(4, "ports:")
		g.line(4, "- {port: 9090, protocol: TCP}")
	default:
		g.begin("ValidatingWebhookConfiguration", comp+"/webhook.yaml")
		g.line(0, "apiVersion: admissionregistration.k8s.io/v1")
		g.line(0, "kind: ValidatingWebhookConfiguration")
		g.metadata(name, comp, false)
		g.line(0, "webhooks:")
		g.linef(0, "- name: validate.%s.example.io", g.release)
		g.line(2, "admissionReviewVersions: [\"v1\"]")
		g.line(2, "clientConfig:")
		g.linef(4, "caBundle: %s", g.base64(1100))
		g.line(4, "service:")
		g.linef(6, "name: %s-webhook", g.release)
		g.linef(6, "namespace: %s", g.namespace)
		g.line(6, "path: /validate")
		g.line(2, "failurePolicy: Fail")
		g.line(2, "sideEffects: None")
		g.line(2, "rules:")
		g.line(2, "- apiGroups: [\"apps\"]")
		g.line(4, "apiVersions: [\"v1\"]")
		g.line(4, "operations: [\"CREATE\", \"UPDATE\"]")
		g.line(4, "resources: [\"deployments\"]")
	}
}

// base64 returns n random bytes in base64.
func (g *gen) base64(n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(g.rng.IntN(256))
	}
	s := base64.StdEncoding.EncodeToString(b)
	if strings.Contains(s, "image") {
		s = strings.ReplaceAll(s, "image", "imagf")
	}
	return s
}

// customResource writes an instance of a custom kind that holds images in
// container lists: Argo Rollout, Knative Service, OpenKruise CloneSet, a
// Prometheus with a containers patch list. (No spec.image: kustomize's
// images transformer, the peer, does not know that field.)
func (g *gen) customResource() {
	comp := g.component()
	name := g.name(comp)
	g.customs++
	switch g.customs % 4 {
	case 0:
		g.begin("Prometheus", "prometheus/prometheus.yaml")
		g.line(0, "apiVersion: monitoring.coreos.com/v1")
		g.line(0, "kind: Prometheus")
		g.metadata(name, comp, true)
		g.line(0, "spec:")
		g.linef(2, "version: %s", g.tag())
		g.line(2, "replicas: 2")
		g.line(2, "retention: 10d")
		g.line(2, "serviceMonitorSelector: {}")
		g.line(2, "containers:")
		g.line(2, "- name: config-reloader")
		g.line(4, "resources: {requests: {cpu: 10m}}")
		g.line(2, "- name: oauth-proxy")
		g.imageLine(4)
		g.line(4, "args: [\"--upstream=http://localhost:9090\", \"--http-address=:8443\"]")
		g.line(4, "ports:")
		g.line(4, "- {containerPort: 8443, name: web-proxy}")
	default:
		kinds := []struct{ apiVersion, kind string }{
			{"argoproj.io/v1alpha1", "Rollout"},
			{"serving.knative.dev/v1", "Service"},
			{"apps.kruise.io/v1alpha1", "CloneSet"},
		}
		k := kinds[g.customs%4-1]
		g.begin(k.kind, comp+"/"+strings.ToLower(k.kind)+".yaml")
		g.line(0, "apiVersion: "+k.apiVersion)
		g.line(0, "kind: "+k.kind)
		g.metadata(name, comp, true)
		g.line(0, "spec:")
		if k.kind == "Rollout" {
			g.line(2, "strategy:")
			g.line(4, "canary:")
			g.line(6, "steps:")
			g.line(6, "- setWeight: 20")
			g.line(6, "- pause: {duration: 10m}")
		}
		g.template(2, comp, false)
	}
}
