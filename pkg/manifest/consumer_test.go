package manifest

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestNoForcedUpgrades: a program that imports only pkg/rewrite and
// pkg/manifest gets neither Helm nor the Kubernetes client libraries in its
// module graph, so it is not forced to upgrade its own (the reason
// pkg/helm is a module of its own).
func TestNoForcedUpgrades(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a consumer module")
	}
	_, here, _, _ := runtime.Caller(0)
	root := filepath.Clean(filepath.Join(filepath.Dir(here), "..", ".."))
	dir := t.TempDir()
	write := func(name, content string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module example.com/consumer\n\ngo 1.26.0\n\nrequire github.com/rehost/rehost v0.0.0-00010101000000-000000000000\n\nreplace github.com/rehost/rehost => "+root+"\n")
	write("main.go", `package main

import (
	"fmt"

	"github.com/rehost/rehost/pkg/manifest"
	"github.com/rehost/rehost/pkg/rewrite"
)

func main() {
	rw, err := manifest.New(rewrite.Config{})
	fmt.Println(rw != nil, err)
}
`)
	gocmd := func(args ...string) string {
		cmd := exec.Command("go", args...)
		cmd.Dir = dir
		// The module cache holds every module (go mod download); nothing
		// is fetched, nothing of the developer's workspace applies.
		cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod", "GOPROXY=off", "GOSUMDB=off")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	gocmd("mod", "tidy")
	graph := gocmd("list", "-m", "all")
	if !strings.Contains(graph, "go.yaml.in/yaml/v3") {
		t.Fatalf("go list -m all does not show the consumer's graph:\n%s", graph)
	}
	for _, line := range strings.Split(graph, "\n") {
		for _, heavy := range []string{"helm.sh/helm/", "k8s.io/client-go ", "k8s.io/apimachinery ", "k8s.io/api "} {
			if strings.HasPrefix(line+" ", heavy) {
				t.Errorf("the consumer's module graph holds %s", line)
			}
		}
	}
	gocmd("build", "./...")
}
