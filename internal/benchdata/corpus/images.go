package corpus

import (
	"fmt"
	"strings"
)

// registries are the source registries of the pool, as written before the
// repository path ("" is Docker Hub without a host), with their weights.
var registries = []struct {
	prefix string
	weight int
}{
	{"", 20},
	{"docker.io/", 8},
	{"registry.k8s.io/", 8},
	{"quay.io/", 14},
	{"ghcr.io/", 14},
	{"gcr.io/", 4},
	{"public.ecr.aws/", 4},
	{"mcr.microsoft.com/", 2},
	{"registry.example.com:8443/", 4},
	{"localhost:5000/", 2},
	{"harbor.corp.internal:30003/", 3},
	{"sea.hub:5000/", 2}, // already in the target registry
}

var orgs = []string{
	"bitnami", "prometheus", "jetstack", "argoproj", "grafana", "kiwigrid", "kyverno", "strimzi",
	"cloudnative-pg", "kedacore", "elastic", "velero", "istio", "longhorn", "kiali", "minio",
	"platform", "team-a", "infra", "observability", "ingress-nginx", "external-dns", "fluent", "jaegertracing",
}

var apps = []string{
	"nginx", "redis", "postgres", "busybox", "alpine", "curl", "kubectl", "operator", "controller",
	"webhook", "cainjector", "acmesolver", "server", "agent", "exporter", "node-exporter", "config-reloader",
	"oauth2-proxy", "envoy", "pilot", "proxyv2", "loki", "promtail", "tempo", "grafana", "alertmanager",
	"prometheus", "thanos", "kube-state-metrics", "k8s-sidecar", "haproxy", "kafka", "zookeeper",
	"minio", "mc", "pause", "coredns", "etcd", "csi-provisioner", "csi-attacher", "csi-resizer",
	"livenessprobe", "backup-helper", "migrate", "init-chown", "wait-for", "jq", "git-sync",
}

// image is one reference of the pool.
type image struct {
	ref  string // as written in manifests
	name string // the name part, as kustomize's images transformer matches it
}

// newPool builds the deterministic image pool: distinct names whose target
// repositories (source host dropped, Docker Hub official images under
// library/) never collide, each with one to three references of different
// shapes (no tag, tag, digest, tag@digest).
func (g *gen) newPool(n int) []image {
	total := 0
	for _, r := range registries {
		total += r.weight
	}
	targets := map[string]bool{}
	var pool []image
	for len(pool) < n {
		x := g.rng.IntN(total)
		var reg string
		for _, r := range registries {
			if x < r.weight {
				reg = r.prefix
				break
			}
			x -= r.weight
		}
		app := apps[g.rng.IntN(len(apps))]
		var path string
		switch {
		case (reg == "" || reg == "docker.io/") && g.rng.IntN(3) == 0:
			path = app // an official image
		case strings.Contains(reg, ":") && g.rng.IntN(2) == 0:
			path = orgs[g.rng.IntN(len(orgs))] + "/" + components[g.rng.IntN(len(components))] + "/" + app
		default:
			path = orgs[g.rng.IntN(len(orgs))] + "/" + app
		}
		target := path
		if (reg == "" || reg == "docker.io/") && !strings.Contains(path, "/") {
			target = "library/" + path
		}
		if reg == "sea.hub:5000/" {
			target = "in-target/" + path
		}
		if targets[target] {
			continue
		}
		targets[target] = true
		name := reg + path
		refs := 1 + g.rng.IntN(3)
		for i := 0; i < refs; i++ {
			pool = append(pool, image{ref: name + g.suffix(), name: name})
		}
	}
	return pool
}

// suffix is a tag, a digest, both, or nothing.
func (g *gen) suffix() string {
	switch x := g.rng.IntN(20); {
	case x < 2:
		return ""
	case x < 14:
		return ":" + g.tag()
	case x < 17:
		return "@" + g.digest()
	default:
		return ":" + g.tag() + "@" + g.digest()
	}
}

func (g *gen) tag() string {
	maj, mnr, pat := g.rng.IntN(4), g.rng.IntN(30), g.rng.IntN(12)
	switch g.rng.IntN(5) {
	case 0:
		return fmt.Sprintf("%d.%d", maj+1, mnr)
	case 1:
		return fmt.Sprintf("v%d.%d.%d", maj, mnr, pat)
	case 2:
		return fmt.Sprintf("%d.%d.%d-debian-12-r%d", maj+1, mnr, pat, g.rng.IntN(40))
	case 3:
		return fmt.Sprintf("%d.%d.%d-alpine", maj+1, mnr, pat)
	default:
		return fmt.Sprintf("v%d.%d.%d", maj+1, mnr, pat)
	}
}

func (g *gen) digest() string {
	const hex = "0123456789abcdef"
	var b [64]byte
	for i := range b {
		b[i] = hex[g.rng.IntN(16)]
	}
	return "sha256:" + string(b[:])
}

// pickImage returns a reference from the pool and records it.
func (g *gen) pickImage() string {
	im := g.pool[g.rng.IntN(len(g.pool))]
	g.used[im.ref] = im.name
	return im.ref
}
