package helm

import (
	"testing"
)

func TestSetYAML(t *testing.T) {
	tests := []struct {
		name, in string
		path     []interface{}
		value    string
		want     string
	}{
		{"plain in place, comment kept", "a:\n  b: docker.io   # the registry\n  c: 1\n", []interface{}{"a", "b"}, "sea.hub:5000",
			"a:\n  b: sea.hub:5000   # the registry\n  c: 1\n"},
		{"double quoted", "a: \"\"\nb: 2\n", []interface{}{"a"}, "sea.hub:5000", "a: \"sea.hub:5000\"\nb: 2\n"},
		{"single quoted", "a: 'x'\n", []interface{}{"a"}, "it's", "a: 'it''s'\n"},
		{"flow mapping value", "image: {repository: nginx, tag: \"1.25\"}\n", []interface{}{"image", "repository"}, "sea.hub:5000/library/nginx",
			"image: {repository: sea.hub:5000/library/nginx, tag: \"1.25\"}\n"},
		{"list item", "sidecars:\n  - name: logs\n    image: fluent/fluent-bit:3.0\n", []interface{}{"sidecars", 0, "image"}, "sea.hub:5000/fluent/fluent-bit:3.0",
			"sidecars:\n  - name: logs\n    image: sea.hub:5000/fluent/fluent-bit:3.0\n"},
		{"null value", "global:\n  imageRegistry:\nx: 1\n", []interface{}{"global", "imageRegistry"}, "sea.hub:5000",
			"global:\n  imageRegistry: sea.hub:5000\nx: 1\n"},
		{"missing key in block mapping, after the last value's lines", "# top\nimage:\n  tag: \"1.25\"   # tag\n  extra:\n    - a\n\n  # trailing\nother: 1\n", []interface{}{"image", "registry"}, "sea.hub:5000",
			"# top\nimage:\n  tag: \"1.25\"   # tag\n  extra:\n    - a\n  # moves x\n  registry: sea.hub:5000\n\n  # trailing\nother: 1\n"},
		{"missing nested keys at the root", "a: 1\n", []interface{}{"global", "imageRegistry"}, "sea.hub:5000",
			"a: 1\nglobal:\n  # moves x\n  imageRegistry: sea.hub:5000\n"},
		{"no final newline", "a: 1", []interface{}{"b"}, "v", "a: 1\n# moves x\nb: v"},
		{"empty flow mapping", "global: {}   # globals\nb: 1\n", []interface{}{"global", "imageRegistry"}, "sea.hub:5000",
			"global:   # globals\n  # moves x\n  imageRegistry: sea.hub:5000\nb: 1\n"},
		{"null mapping", "global:\nb: 1\n", []interface{}{"global", "imageRegistry"}, "sea.hub:5000",
			"global:\n  # moves x\n  imageRegistry: sea.hub:5000\nb: 1\n"},
		{"tilde mapping", "global: ~\nb: 1\n", []interface{}{"global", "imageRegistry"}, "sea.hub:5000",
			"global:\n  # moves x\n  imageRegistry: sea.hub:5000\nb: 1\n"},
		{"empty file", "", []interface{}{"a", "b"}, "v", "a:\n  # moves x\n  b: v\n"},
		{"comments only", "# nothing\n", []interface{}{"a"}, "v", "# nothing\n# moves x\na: v\n"},
		{"value needing quotes", "a: x\n", []interface{}{"b"}, "true", "a: x\n# moves x\nb: \"true\"\n"},
		{"CRLF kept on other lines", "a: x\r\nb: y\r\n", []interface{}{"a"}, "z", "a: z\r\nb: y\r\n"},
		// Line ends yaml.v3 counts and internal/textpos shares with
		// pkg/manifest: the value on a later line is found in place.
		{"byte order mark", "\ufeffa: x\nb: y\n", []interface{}{"a"}, "z", "\ufeffa: z\nb: y\n"},
		{"lone CR", "a: x\rb: y\r", []interface{}{"b"}, "z", "a: x\rb: z\r"},
		{"NEL", "a: x\u0085b: y\n", []interface{}{"b"}, "z", "a: x\u0085b: z\n"},
		{"LS", "a: x\u2028b: y\n", []interface{}{"b"}, "z", "a: x\u2028b: z\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := setYAML([]byte(tt.in), tt.path, tt.value, "moves x")
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("got:\n%s\nwant:\n%s", got, tt.want)
			}
		})
	}
}

func TestSetYAMLRefuses(t *testing.T) {
	tests := []struct {
		name, in string
		path     []interface{}
	}{
		{"block scalar", "a: |\n  x\n", []interface{}{"a"}},
		{"multi-line plain", "a: x\n  y\n", []interface{}{"a"}},
		{"anchored", "a: &r x\n", []interface{}{"a"}},
		{"not a map", "a: 1\n", []interface{}{"a", "b"}},
		{"list too short", "a: [x]\n", []interface{}{"a", 3}},
		{"flow mapping with content", "a: {b: 1}\n", []interface{}{"a", "c"}},
		{"missing list item", "a: 1\n", []interface{}{"b", 0, "c"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got, err := setYAML([]byte(tt.in), tt.path, "v", ""); err == nil {
				t.Errorf("no error; got:\n%s", got)
			}
		})
	}
}
