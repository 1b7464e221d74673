package sealer

import (
	"bytes"
	"fmt"
	"sort"
	"strings"
	"testing"
)

// usedPackages are the core packages the consumer program calls; any
// other package corePackages finds is imported for its side effects, so
// that it is compiled and initialised in sealer's graph too.
var usedPackages = []string{
	coreModule + "/pkg/manifest",
	coreModule + "/pkg/rendered",
	coreModule + "/pkg/rewrite",
}

// corePackages lists the packages a program can import from the core
// module: every package of `go list ./...` in the checkout (without go.work,
// so only the core) that is neither internal, a command, nor only tests.
func corePackages(t *testing.T, root string) []string {
	t.Helper()
	out := goRun(t, root, coreEnv("local"), "list", "-f", "{{.ImportPath}} {{.Name}} {{len .GoFiles}}", "./...")
	var pkgs []string
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Fields(line)
		if len(f) != 3 {
			t.Fatalf("go list printed %q", line)
		}
		path, name, files := f[0], f[1], f[2]
		internal := strings.HasSuffix(path, "/internal") || strings.Contains(path, "/internal/")
		if internal || name == "main" || files == "0" {
			continue
		}
		pkgs = append(pkgs, path)
	}
	sort.Strings(pkgs)
	listed := map[string]bool{}
	for _, p := range pkgs {
		listed[p] = true
	}
	for _, p := range usedPackages {
		if !listed[p] {
			t.Fatalf("go list ./... in %s does not list %s, which the consumer program calls (found %v)", root, p, pkgs)
		}
	}
	return pkgs
}

// consumerMain is the consumer's main.go: it calls the core's packages to
// rewrite a Pod and a rendered chart, builds a client-go clientset and its
// discovery client (whose packages register gnostic's OpenAPI v2 types at
// init), and imports every other package of pkgs.
func consumerMain(pkgs []string) []byte {
	used := map[string]bool{}
	for _, p := range usedPackages {
		used[p] = true
	}
	var others bytes.Buffer
	for _, p := range pkgs {
		if !used[p] {
			fmt.Fprintf(&others, "\t_ %q\n", p)
		}
	}
	return []byte(strings.Replace(consumerSource, "\t// other core packages\n", others.String(), 1))
}

// consumerWant is what the consumer program prints.
const consumerWant = `rewrite: docker.io library/nginx 1.25
manifest:     image: sea.hub:5000/library/nginx:1.25
rendered:         image: sea.hub:5000/bitnami/redis:7.2
sources: [docker.io/bitnami/redis:7.2 docker.io/library/nginx:1.25]
client-go: *discovery.DiscoveryClient
`

const consumerSource = `package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/rehost/rehost/pkg/manifest"
	"github.com/rehost/rehost/pkg/rendered"
	"github.com/rehost/rehost/pkg/rewrite"
	// other core packages
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

const pod = ` + "`" + `apiVersion: v1
kind: Pod
metadata:
  name: web
spec:
  containers:
  - name: web
    image: nginx:1.25
` + "`" + `

const job = ` + "`" + `apiVersion: batch/v1
kind: Job
metadata:
  name: cache
spec:
  template:
    spec:
      containers:
      - name: redis
        image: bitnami/redis:7.2
` + "`" + `

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "consumer:", err)
		os.Exit(1)
	}
}

// imageLine is the first line of s that sets an image.
func imageLine(s string) string {
	for _, line := range strings.Split(s, "\n") {
		if strings.Contains(line, "image:") {
			return line
		}
	}
	return "no image line in:\n" + s
}

func run() error {
	ref, err := rewrite.ParseRef("nginx:1.25")
	if err != nil {
		return err
	}
	fmt.Println("rewrite:", ref.Registry, ref.Repository, ref.Tag)

	rw, err := manifest.New(rewrite.Config{Registry: "sea.hub:5000"})
	if err != nil {
		return err
	}
	out, err := rw.RewriteBytes([]byte(pod), "pod.yaml")
	if err != nil {
		return err
	}
	fmt.Println("manifest:", imageLine(string(out)))

	chart := rendered.Chart{
		Format:    rendered.Format,
		Name:      "cache",
		Manifests: []rendered.Manifest{{Name: "cache/templates/job.yaml", Content: job}},
	}
	var b strings.Builder
	if err := chart.Rewrite(&b, rw); err != nil {
		return err
	}
	fmt.Println("rendered:", imageLine(b.String()))
	fmt.Println("sources:", rw.Sources())

	clients, err := kubernetes.NewForConfig(&rest.Config{Host: "https://127.0.0.1:6443"})
	if err != nil {
		return err
	}
	var d discovery.DiscoveryInterface = clients.Discovery()
	fmt.Printf("client-go: %T\n", d)
	return nil
}
`
