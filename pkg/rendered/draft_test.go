package rendered

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// TestDraftForm: a draft written and read back is the same draft, however
// its contents look (lines, quotes, JSON, nothing at all), and the number
// of bytes read is where what follows it starts.
func TestDraftForm(t *testing.T) {
	d := &Draft{Format: Format, Manifests: []Manifest{
		{Name: "app/crds/crd.yaml", Content: "kind: CustomResourceDefinition\n---\nkind: X\n", Line: 1},
		{Name: "app/templates/a.yaml", Content: "kind: Pod\nmetadata: {name: \"a\\\"b\"}", Line: 3},
		{Name: "app/templates/a.yaml", Content: "", Line: 9},
		{Name: "app/templates/b.yaml", Content: `{"format":3,"draft":[]}` + "\né\x00", Line: 2},
	}}
	var b bytes.Buffer
	if err := d.Write(&b); err != nil {
		t.Fatal(err)
	}
	// Contents that are not UTF-8 read as in the chart's JSON.
	invalid := "a\xffb\xfe\xfd\xe2\x82c"
	var asJSON string
	if data, err := json.Marshal(invalid); err != nil || json.Unmarshal(data, &asJSON) != nil {
		t.Fatal(err)
	}
	b.Reset()
	d.Manifests = append(d.Manifests, Manifest{Name: "app/templates/c.yaml", Content: invalid, Line: 1})
	if err := d.Write(&b); err != nil {
		t.Fatal(err)
	}
	d.Manifests[len(d.Manifests)-1].Content = asJSON
	const after = `{"format":3,"name":"app","manifests":[]}` + "\n"
	b.WriteString(after)
	got, n, err := ReadDraft(bytes.NewReader(b.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, d) {
		t.Errorf("read back:\n%+v\nwant:\n%+v", got, d)
	}
	if rest := b.String()[n:]; rest != after {
		t.Errorf("what follows the draft: %q, want %q", rest, after)
	}
	if strings.Contains(b.String(), `"content"`) {
		t.Errorf("contents written as JSON:\n%s", b.String())
	}
}

// TestReadDraftRefuses: output that does not start with a draft of this
// format, or ends within one, is not a draft.
func TestReadDraftRefuses(t *testing.T) {
	for name, in := range map[string]string{
		"a chart":             `{"format":3,"name":"app","manifests":[]}` + "\n",
		"another format":      `{"format":2,"draft":[{"name":"a","content":"kind: Pod","line":3}]}` + "\n",
		"a later format":      `{"format":4,"draft":[]}` + "\n",
		"contents cut":        `{"format":3,"draft":[{"name":"a","line":3,"size":9}]}` + "\nkind: P",
		"no line end":         `{"format":3,"draft":[{"name":"a","line":3,"size":9}]}` + "kind: Pod",
		"a negative size":     `{"format":3,"draft":[{"name":"a","line":3,"size":-1}]}` + "\n",
		"sizes that overflow": `{"format":3,"draft":[{"name":"a","size":9223372036854775807},{"name":"b","size":9223372036854775807}]}` + "\n",
		"nothing":             "",
	} {
		t.Run(name, func(t *testing.T) {
			if d, n, err := ReadDraft(strings.NewReader(in)); err == nil {
				t.Errorf("read %+v, %d bytes", d, n)
			}
		})
	}
}
