package manifest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/rehost/rehost/pkg/rewrite"
)

// envConfigMap is a ConfigMap with one data key.
func envConfigMap(ns, name, key, value string) string {
	meta := "  name: " + name + "\n"
	if ns != "" {
		meta += "  namespace: " + ns + "\n"
	}
	return "apiVersion: v1\nkind: ConfigMap\nmetadata:\n" + meta + "data:\n  " + key + ": " + value + "\n"
}

// envDeployment is a Deployment whose one container has the given args
// and env (YAML lines, indented for the container).
func envDeployment(ns string, containerLines string) string {
	meta := "  name: operator\n"
	if ns != "" {
		meta += "  namespace: " + ns + "\n"
	}
	return "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n" + meta +
		"spec:\n  template:\n    spec:\n      containers:\n      - name: operator\n        image: quay.io/example/operator:1\n" + containerLines
}

const (
	reloaderArgs = "        args:\n        - --log-level=info\n        - --prometheus-config-reloader=$(PROMETHEUS_CONFIG_RELOADER)\n"
	reloaderEnv  = "        env:\n        - name: PROMETHEUS_CONFIG_RELOADER\n          valueFrom:\n            configMapKeyRef:\n              name: kp-operator\n              key: prometheus-config-reloader\n"
)

// TestEnvImages: a ConfigMap value passed to a container as an image
// through $(VAR) is listed and rewritten, whatever the order of the
// documents; references that do not pass an image, or name another
// ConfigMap, leave it alone.
func TestEnvImages(t *testing.T) {
	// The reloader image has no registry host: free text never takes it
	// for an image, only the reference does.
	const img = "bitnami/prometheus-operator:0.85.0"
	const target = "sea.hub:5000/bitnami/prometheus-operator:0.85.0"
	cm := envConfigMap("monitoring", "kp-operator", "prometheus-config-reloader", img)
	tests := []struct {
		name string
		docs []string
		want bool // the ConfigMap value is rewritten and listed
	}{
		{"configMapKeyRef, ConfigMap first (as Helm renders)", []string{cm, envDeployment("monitoring", reloaderArgs+reloaderEnv)}, true},
		{"configMapKeyRef, Deployment first", []string{envDeployment("monitoring", reloaderArgs+reloaderEnv), cm}, true},
		{"ConfigMap without a namespace", []string{envConfigMap("", "kp-operator", "prometheus-config-reloader", img), envDeployment("monitoring", reloaderArgs+reloaderEnv)}, true},
		{"namespace mismatch", []string{envConfigMap("other", "kp-operator", "prometheus-config-reloader", img), envDeployment("monitoring", reloaderArgs+reloaderEnv)}, false},
		{"another ConfigMap", []string{envConfigMap("monitoring", "kp-other", "prometheus-config-reloader", img), envDeployment("monitoring", reloaderArgs+reloaderEnv)}, false},
		{"another key", []string{envConfigMap("monitoring", "kp-operator", "reloader", img), envDeployment("monitoring", reloaderArgs+reloaderEnv)}, false},
		{"envFrom with a prefix", []string{
			envConfigMap("monitoring", "op-env", "SIDECAR", img),
			envDeployment("monitoring", "        args: [\"--sidecar-image=$(OP_SIDECAR)\"]\n        envFrom:\n        - prefix: OP_\n          configMapRef:\n            name: op-env\n"),
		}, true},
		{"envFrom, Deployment first", []string{
			envDeployment("monitoring", "        args: [\"--sidecar-image=$(SIDECAR)\"]\n        envFrom:\n        - configMapRef:\n            name: op-env\n"),
			envConfigMap("monitoring", "op-env", "SIDECAR", img),
		}, true},
		{"a variable whose name says image, in a command line", []string{
			envConfigMap("", "helper", "image", img),
			envDeployment("", "        command: [\"sh\", \"-c\", \"crictl pull $(HELPER_IMAGE) && run\"]\n        env:\n        - name: HELPER_IMAGE\n          valueFrom:\n            configMapKeyRef: {name: helper, key: image}\n"),
		}, true},
		{"the argument after an image flag", []string{
			envConfigMap("", "longhorn", "engine", img),
			envDeployment("", "        args: [\"--engine-image\", \"$(ENGINE)\"]\n        env:\n        - name: ENGINE\n          valueFrom: {configMapKeyRef: {name: longhorn, key: engine}}\n"),
		}, true},
		{"a flag that does not say image", []string{
			envConfigMap("monitoring", "kp-operator", "level", img),
			envDeployment("monitoring", "        args: [\"--log-level=$(LEVEL)\"]\n        env:\n        - name: LEVEL\n          valueFrom: {configMapKeyRef: {name: kp-operator, key: level}}\n"),
		}, false},
		{"$(VAR) inside a larger image flag value", []string{
			envConfigMap("", "kp-operator", "tag", img),
			envDeployment("", "        args: [\"--sidecar-image=docker.io/x:$(TAG)\"]\n        env:\n        - name: TAG\n          valueFrom: {configMapKeyRef: {name: kp-operator, key: tag}}\n"),
		}, false},
		{"$$(VAR) is an escaped, literal $(VAR)", []string{
			cm,
			envDeployment("monitoring", "        args: [\"--prometheus-config-reloader=$$(PROMETHEUS_CONFIG_RELOADER)\"]\n"+reloaderEnv),
		}, false},
		{"env wins over envFrom", []string{
			envConfigMap("", "op-env", "SIDECAR", img),
			envDeployment("", "        args: [\"--sidecar-image=$(SIDECAR)\"]\n        envFrom:\n        - configMapRef: {name: op-env}\n        env:\n        - name: SIDECAR\n          value: quay.io/x/y:1\n"),
		}, false},
		{"a custom resource is not expanded by Kubernetes", []string{
			cm,
			"apiVersion: example.com/v1\nkind: Thing\nmetadata:\n  name: t\n  namespace: monitoring\nspec:\n  containers:\n  - name: x\n    image: quay.io/x/y:1\n" + strings.ReplaceAll(reloaderArgs+reloaderEnv, "        ", "    "),
		}, false},
		{"items of a List", []string{
			cm,
			"apiVersion: v1\nkind: List\nitems:\n- " + strings.ReplaceAll(strings.TrimSuffix(envDeployment("monitoring", reloaderArgs+reloaderEnv), "\n"), "\n", "\n  ") + "\n",
		}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := strings.Join(tt.docs, "---\n")
			// Each way in: bytes, a pipe, parts.
			for _, via := range []string{"bytes", "pipe", "parts"} {
				rw := mustNew(t, rewrite.Config{})
				var out bytes.Buffer
				var err error
				switch via {
				case "bytes":
					var b []byte
					b, err = rw.RewriteBytes([]byte(in), "in.yaml")
					out.Write(b)
				case "pipe":
					err = rw.Rewrite(&out, onlyReader{strings.NewReader(in)}, "in.yaml")
				case "parts":
					var parts []Part
					for i, d := range tt.docs {
						parts = append(parts, Part{Name: fmt.Sprintf("t%d.yaml", i), Line: 1, Head: "---\n", Text: d})
					}
					err = rw.RewriteParts(&out, parts)
				}
				if err != nil {
					t.Fatalf("%s: %v", via, err)
				}
				rewritten := strings.Contains(out.String(), target)
				listed := false
				for _, im := range rw.Images() {
					if im.Source == "docker.io/"+img {
						for _, o := range im.Occurrences {
							if o.Kind == "ConfigMap" && strings.HasPrefix(o.Field, "data.") && o.Named {
								listed = true
							}
						}
					}
				}
				if rewritten != tt.want || listed != tt.want {
					t.Errorf("%s: rewritten %v, listed %v; want %v\n%s", via, rewritten, listed, tt.want, out.String())
				}
			}
		})
	}
}

// onlyReader hides every method of its reader but Read: a pipe.
type onlyReader struct{ r io.Reader }

func (o onlyReader) Read(p []byte) (int, error) { return o.r.Read(p) }

// TestEnvImagesLocation: the image is reported where it is written, the
// ConfigMap's line and data key.
func TestEnvImagesLocation(t *testing.T) {
	in := envConfigMap("monitoring", "kp-operator", "prometheus-config-reloader", "docker.io/bitnami/prometheus-operator:0.85.0") + "---\n" + envDeployment("monitoring", reloaderArgs+reloaderEnv)
	rw := mustNew(t, rewrite.Config{})
	if _, err := rw.RewriteBytes([]byte(in), "kp.yaml"); err != nil {
		t.Fatal(err)
	}
	var locs []string
	for _, im := range rw.Images() {
		for _, o := range im.Occurrences {
			locs = append(locs, fmt.Sprintf("%s %s:%d %s %s/%s %s", im.Source, o.File, o.Line, o.Kind, o.Namespace, o.Name, o.Field))
		}
	}
	want := []string{
		"docker.io/bitnami/prometheus-operator:0.85.0 kp.yaml:7 ConfigMap monitoring/kp-operator data.prometheus-config-reloader",
		"quay.io/example/operator:1 kp.yaml:19 Deployment monitoring/operator spec.template.spec.containers[0].image",
	}
	if strings.Join(locs, "\n") != strings.Join(want, "\n") {
		t.Errorf("occurrences:\n%s\nwant:\n%s", strings.Join(locs, "\n"), strings.Join(want, "\n"))
	}
	if left := rw.EmbeddedLeftOut(); len(left) != 0 {
		t.Errorf("left out: %v", left)
	}
}

// TestImageVars: which $(VAR) references of an argument pass an image.
func TestImageVars(t *testing.T) {
	tests := []struct {
		arg  string
		ctx  bool
		want string
	}{
		{"--prometheus-config-reloader=$(RELOADER)", false, "RELOADER"},
		{"--acme-http01-solver-image=$(SOLVER)", false, "SOLVER"},
		{"--log-level=$(LEVEL)", false, ""},
		{"$(ENGINE)", true, "ENGINE"},
		{"$(ENGINE)", false, ""},
		{"--sidecar-image=$(A)$(B)", false, ""},
		{"run $(HELPER_IMAGE) now", false, "HELPER_IMAGE"},
		{"--x=$(RELATED_IMAGE_DB)", false, "RELATED_IMAGE_DB"},
		{"--sidecar-image=$$(SIDECAR)", false, ""},
		{"$$(HELPER_IMAGE)", false, ""},
		{"$$$(HELPER_IMAGE)", false, "HELPER_IMAGE"},
		{"$(HELPER_IMAGE", false, ""},
		{"--sidecar-image= $(SIDECAR) ", false, "SIDECAR"},
	}
	for _, tt := range tests {
		name := tt.arg
		if tt.ctx {
			name += " in an image context"
		}
		t.Run(name, func(t *testing.T) {
			if got := strings.Join(imageVars(tt.arg, tt.ctx), ","); got != tt.want {
				t.Errorf("imageVars(%q, %v) = %q, want %q", tt.arg, tt.ctx, got, tt.want)
			}
		})
	}
}

// TestExpansionDocs: the documents the pre-scan looks at are those of the
// splitter that hold "$(", whatever the reads (one byte at a time, blocks
// cutting markers), and the rest of the stream is never split.
func TestExpansionDocs(t *testing.T) {
	big := strings.Repeat("# filler line of a large document\n", 4000) // > one block
	streams := map[string]string{
		"none":             "a: 1\n---\nb: 2\n",
		"first":            "x: $(A)\n---\nb: 2\n",
		"last":             "a: 1\n---\nb: $(B)\n",
		"no final newline": "a: 1\n---\nb: $(B)",
		"several":          "--- \na: $(A) $(A2)\n---\nb: 1\n---\t\nc: $(C)\n...\nd: $(D)\n---\ne: 5\n",
		"not markers":      "a: 1\n----\nb: $(B)\n--- x\n---x\nc: 3\n",
		"large":            "a: 1\n---\n" + big + "b: $(B)\n" + big + "---\nc: 3\n---\n" + big + "d: $(D)\n",
		"dollar at ends":   "a: $\n---\nb: (x)$\n---\nc: $(C)\n",
		"crlf":             "a: 1\r\n---\r\nb: $(B)\r\n---\r\nc: 1\r\n",
	}
	// "$(" and marker lines cut by the 64 KB blocks of expansionRanges.
	for pad := 64<<10 - 8; pad <= 64<<10+4; pad++ {
		fill := "a: " + strings.Repeat("x", pad-4) + "\n"
		streams[fmt.Sprintf("marker at %d", pad)] = fill + "---\nb: $(B)\n---\nc: 3\n"
		streams[fmt.Sprintf("expansion at %d", pad)] = "a: 1\n---\nb" + fill[10:len(fill)-1] + "$(B)\n---\nc: 3\n"
		streams[fmt.Sprintf("end marker at %d", pad)] = "b: $(B)\n" + fill[:len(fill)-8] + "\n---\nc: 3\n"
	}
	for name, in := range streams {
		t.Run(name, func(t *testing.T) {
			// What the splitter gives, joined per "$(" document (a "..."
			// end marker may leave two documents in one piece).
			var want []string
			sp := splitterOf([]byte(in), 1)
			for {
				d, err := sp.next()
				if err != nil {
					break
				}
				if bytes.Contains(d.data, []byte("$(")) {
					want = append(want, string(d.data))
				}
			}
			for _, via := range []string{"bytes", "one byte at a time", "blocks"} {
				var got []string
				fn := func(doc []byte) {
					// Split as docEnvRefs does.
					sp := splitterOf(doc, 1)
					for {
						d, err := sp.next()
						if err != nil {
							break
						}
						if bytes.Contains(d.data, []byte("$(")) {
							got = append(got, string(d.data))
						}
					}
				}
				var err error
				switch via {
				case "bytes":
					err = expansionDocs([]byte(in), nil, fn)
				case "one byte at a time":
					err = expansionDocs(nil, iotest.OneByteReader(strings.NewReader(in)), fn)
				default:
					err = expansionDocs(nil, strings.NewReader(in), fn)
				}
				if err != nil || strings.Join(got, "|") != strings.Join(want, "|") {
					t.Errorf("%s: %v, documents\n%.300q\nwant\n%.300q", via, err, got, want)
				}
			}
		})
	}
}

// TestPrescanReadError: a read error of the stream is returned.
func TestPrescanReadError(t *testing.T) {
	r := io.MultiReader(strings.NewReader("a: $(A)\n"), iotest.ErrReader(errors.New("boom")))
	if _, err := prescanReader(r); err == nil || err.Error() != "boom" {
		t.Errorf("err = %v", err)
	}
}

// TestEnvImagesPipeReadAhead: a stream that cannot be read twice is read
// ahead of its first ConfigMap, readAheadBytes at most: a workload further
// on is not known when the ConfigMap is processed (read from memory or a
// file, it is).
func TestEnvImagesPipeReadAhead(t *testing.T) {
	filler := "apiVersion: v1\nkind: Secret\nmetadata: {name: s}\ndata: {x: " + strings.Repeat("QUFB", 1<<10) + "}\n"
	cm := envConfigMap("monitoring", "kp-operator", "prometheus-config-reloader", "bitnami/prometheus-operator:0.85.0")
	dep := envDeployment("monitoring", reloaderArgs+reloaderEnv)
	far := cm + "---\n" + strings.Repeat(filler+"---\n", readAheadBytes/len(filler)+64) + dep
	for _, tt := range []struct {
		name string
		in   string
		pipe bool
		want bool
	}{
		{"near, pipe", cm + "---\n" + strings.Repeat(filler+"---\n", 200) + dep, true, true},
		{"beyond the read-ahead, pipe", far, true, false},
		{"beyond the read-ahead, in memory", far, false, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rw := mustNew(t, rewrite.Config{})
			var r io.Reader = strings.NewReader(tt.in)
			if tt.pipe {
				r = onlyReader{r}
			}
			var out bytes.Buffer
			if err := rw.Rewrite(&out, r, "in.yaml"); err != nil {
				t.Fatal(err)
			}
			if got := strings.Contains(out.String(), "sea.hub:5000/bitnami/prometheus-operator:0.85.0"); got != tt.want {
				t.Errorf("rewritten %v, want %v", got, tt.want)
			}
		})
	}
}

// TestPrescanFindsDocuments: the pre-scan of a seekable stream finds the
// workload whatever its place and the blocks it is read in: at the start,
// at the end without a final line break, after and before documents larger
// than a block, with "$(" that pass no image around it.
func TestPrescanFindsDocuments(t *testing.T) {
	dep := envDeployment("monitoring", reloaderArgs+reloaderEnv)
	big := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: big}\ndata:\n  script: |\n" + strings.Repeat("    echo $(date) and more text\n", 5000)
	want := "[{monitoring kp-operator prometheus-config-reloader}]"
	for name, in := range map[string]string{
		"alone":               dep,
		"no final line break": strings.TrimSuffix(dep, "\n"),
		"after a large one":   big + "---\n" + dep,
		"before a large one":  dep + "---\n" + big,
		"between":             big + "---\n" + dep + "---\n" + big,
		"with a leading ---":  "---\n" + dep + "...\n",
	} {
		t.Run(name, func(t *testing.T) {
			for _, pad := range []int{0, 1, 2, 3, 63<<10 + 1000, 64<<10 - 70} {
				s := strings.Repeat("#\n", pad/2) + in
				got, err := prescanReader(strings.NewReader(s))
				if fmt.Sprint(got) != want || err != nil {
					t.Errorf("pad %d: %v, %v; want %s", pad, got, err, want)
				}
				if got := prescanEnvRefs([]byte(s)); fmt.Sprint(got) != want {
					t.Errorf("pad %d, in memory: %v", pad, got)
				}
			}
		})
	}
}

// TestExpansionWriter: the offsets of "$(" whatever the writes.
func TestExpansionWriter(t *testing.T) {
	const in = "a $(B) $$(C) $\n($(D"
	want := fmt.Sprint(expansions([]byte(in), 0, nil))
	if want != "[2 8 16]" {
		t.Fatalf("expansions = %s", want)
	}
	for _, size := range []int{1, 2, 3, len(in)} {
		t.Run(fmt.Sprintf("writes of %d", size), func(t *testing.T) {
			var b, s expansionWriter
			for i := 0; i < len(in); i += size {
				b.Write([]byte(in[i:min(i+size, len(in))]))
				s.WriteString(in[i:min(i+size, len(in))])
			}
			if fmt.Sprint(b.at) != want || fmt.Sprint(s.at) != want || b.off != int64(len(in)) {
				t.Errorf("writes of %d: %v, %v; want %s", size, b.at, s.at, want)
			}
		})
	}
}

// TestEnvImagesEveryReader: a stream rewrites alike read from memory, from
// a seekable reader and from a pipe, whatever lies between an image flag
// and the $(VAR) that follows it (the pre-scan of a seekable stream reads
// only the lines around each "$(").
func TestEnvImagesEveryReader(t *testing.T) {
	cm := envConfigMap("ns", "cfg", "engine", "bitnami/engine:1.0")
	env := "        env:\n        - name: ENGINE\n          valueFrom:\n            configMapKeyRef:\n              name: cfg\n              key: engine\n"
	for _, tt := range []struct{ name, args string }{
		{"adjacent", "        args:\n        - --engine-image\n        - $(ENGINE)\n"},
		{"blank line between", "        args:\n        - --engine-image\n\n        - $(ENGINE)\n"},
		{"blank lines with spaces between", "        args:\n        - --engine-image\n   \n\n        - $(ENGINE)\n"},
		{"comment between", "        args:\n        - --engine-image\n        # the engine\n        - $(ENGINE)\n"},
		{"comment and blank between", "        args:\n        - --engine-image\n        # the engine\n\n        - $(ENGINE)\n"},
		{"flow sequence over lines", "        args: [--engine-image,\n\n          $(ENGINE)]\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			stream := cm + "---\n" + envDeployment("ns", tt.args+env)
			for _, r := range []struct {
				name string
				in   io.Reader
			}{
				{"bytes.Buffer", bytes.NewBufferString(stream)},
				{"seekable", strings.NewReader(stream)},
				{"pipe", onlyReader{strings.NewReader(stream)}},
			} {
				rw := mustNew(t, rewrite.Config{Registry: "sea.hub:5000"})
				var b bytes.Buffer
				if err := rw.Rewrite(&b, r.in, "x"); err != nil {
					t.Fatalf("%s: %v", r.name, err)
				}
				if !strings.Contains(b.String(), "engine: sea.hub:5000/bitnami/engine:1.0") {
					t.Errorf("%s: the ConfigMap value is not rewritten:\n%s", r.name, b.String())
				}
			}
		})
	}
}
