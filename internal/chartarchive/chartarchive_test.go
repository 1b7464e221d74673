package chartarchive

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"reflect"
	"testing"
)

// entry is a tar entry: a name ending in "/" is a directory.
type entry struct{ name, content string }

func archive(t *testing.T, entries ...entry) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for _, e := range entries {
		h := &tar.Header{Name: e.name, Mode: 0o644, Size: int64(len(e.content)), Typeflag: tar.TypeReg}
		if e.name[len(e.name)-1] == '/' {
			h.Typeflag, h.Mode, h.Size = tar.TypeDir, 0o755, 0
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		io.WriteString(tw, e.content)
	}
	tw.Close()
	zw.Close()
	return buf.Bytes()
}

// names lists the entries of an archive by Names.
func names(t *testing.T, raw []byte) ([]string, error) {
	zr, err := gzip.NewReader(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	var n Names
	var out []string
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			t.Fatal(err)
		}
		name, ok, err := n.Add(h)
		if err != nil {
			return out, err
		}
		if ok {
			out = append(out, name)
		}
	}
}

func TestCheck(t *testing.T) {
	chart := []entry{{"app/Chart.yaml", "name: app\nversion: 1.0.0\n"}, {"app/values.yaml", "x: 1\n"}, {"app/templates/cm.yaml", "kind: ConfigMap\n"}}
	withDirs := append([]entry{{"app/", ""}, {"app/templates/", ""}}, chart...)
	sub := archive(t, entry{"db/Chart.yaml", "name: db\n"}, entry{"evil/Chart.yaml", "name: evil\n"})
	for _, tt := range []struct {
		name    string
		entries []entry
		names   []string
		want    *AmbiguousError
	}{
		{"without directory entries", chart, []string{"Chart.yaml", "values.yaml", "templates/cm.yaml"}, nil},
		{"with directory entries", withDirs, []string{"Chart.yaml", "values.yaml", "templates/cm.yaml"}, nil},
		{"an empty second directory", append(chart, entry{"other/", ""}), []string{"Chart.yaml", "values.yaml", "templates/cm.yaml"}, nil},
		{"Windows separators", []entry{{`app\Chart.yaml`, "name: app\n"}, {`app\templates\cm.yaml`, ""}}, []string{"Chart.yaml", "templates/cm.yaml"}, nil},
		{"two top-level directories", []entry{{"a/Chart.yaml", "name: innocent\nversion: 1.0.0\n"}, {"b/Chart.yaml", "name: evil\nversion: 6.6.6\n"}}, nil, &AmbiguousError{Dirs: []string{"a", "b"}}},
		{"a second directory by a Windows separator", []entry{{"a/Chart.yaml", ""}, {`b\Chart.yaml`, ""}}, nil, &AmbiguousError{Dirs: []string{"a", "b"}}},
		{"a file twice", append(chart, entry{"app/Chart.yaml", "name: evil\n"}), nil, &AmbiguousError{Duplicate: "Chart.yaml"}},
		{"a file twice, spelt two ways", append(chart, entry{"app/templates/../values.yaml", ""}), nil, &AmbiguousError{Duplicate: "values.yaml"}},
		{"a subchart with two top-level directories", append(chart, entry{"app/charts/db.tgz", string(sub)}), nil, &AmbiguousError{In: "charts/db.tgz", Dirs: []string{"db", "evil"}}},
		{"a subchart that is not an archive", append(chart, entry{"app/charts/db.tgz", "not gzip"}), []string{"Chart.yaml", "values.yaml", "templates/cm.yaml", "charts/db.tgz"}, nil},
	} {
		raw := archive(t, tt.entries...)
		err := Check(bytes.NewReader(raw), 1<<20)
		if tt.want == nil {
			if err != nil {
				t.Errorf("%s: %v", tt.name, err)
			}
			got, err := names(t, raw)
			if err != nil || !reflect.DeepEqual(got, tt.names) {
				t.Errorf("%s: names %q, %v, want %q", tt.name, got, err, tt.names)
			}
			continue
		}
		var amb *AmbiguousError
		if !errors.As(err, &amb) || !errors.Is(err, ErrAmbiguous) || !reflect.DeepEqual(amb, tt.want) {
			t.Errorf("%s: error %v, want %+v", tt.name, err, tt.want)
		}
	}

	// The limit counts what is unpacked, subcharts included.
	big := archive(t, entry{"app/Chart.yaml", "name: app\n"}, entry{"app/files/big", string(make([]byte, 1<<20))})
	var tl *TooLargeError
	if err := Check(bytes.NewReader(big), 1<<20); !errors.As(err, &tl) || tl.Limit != 1<<20 {
		t.Errorf("over the limit: %v", err)
	}
	if err := Check(bytes.NewReader(big), 2<<20); err != nil {
		t.Errorf("under the limit: %v", err)
	}
	if err := Check(bytes.NewReader([]byte("not gzip")), 1<<20); err == nil {
		t.Error("not an archive: no error")
	}

	msg := (&AmbiguousError{Dirs: []string{"a", "b"}}).Error()
	if msg != `two top-level directories, "a" and "b": Helm's loader reads every top-level directory as the same chart (each Chart.yaml's fields over the previous one's), so its name and version are not what its first Chart.yaml says` {
		t.Errorf("message %q", msg)
	}
}
