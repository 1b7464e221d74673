package textpos

import (
	"reflect"
	"testing"
)

func TestLineStarts(t *testing.T) {
	for _, tt := range []struct {
		name, in string
		want     []int
	}{
		{"LF", "a\nb\n", []int{0, 2, 4}},
		{"CRLF", "a\r\nb", []int{0, 3}},
		{"lone CR", "a\rb\rc", []int{0, 2, 4}},
		{"NEL", "a\u0085b", []int{0, 3}},
		{"LS and PS", "a\u2028b\u2029c", []int{0, 4, 8}},
		{"no break", "abc", []int{0}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := LineStarts([]byte(tt.in)); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("LineStarts(%q) = %v, want %v", tt.in, got, tt.want)
			}
		})
	}
}

func TestLineEnd(t *testing.T) {
	for _, tt := range []struct {
		name, in string
		at, want int
	}{
		{"LF", "ab\ncd", 0, 2},
		{"CRLF", "ab\r\ncd", 1, 2},
		{"lone CR", "ab\rcd", 0, 2},
		{"NEL", "ab\u0085cd", 0, 2},
		{"PS", "ab\u2029cd", 0, 2},
		{"last line", "ab\ncd", 3, 5},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := LineEnd([]byte(tt.in), tt.at); got != tt.want {
				t.Errorf("LineEnd(%q, %d) = %d, want %d", tt.in, tt.at, got, tt.want)
			}
		})
	}
}

func TestOffsetAndPosition(t *testing.T) {
	for _, tt := range []struct {
		name, in  string
		line, col int
		want      int
	}{
		{"BOM is no column", "\uFEFFa: b\n", 1, 4, 6},
		{"characters, not bytes", "x: é\ny: z\n", 1, 5, 5},
		{"second line after CR", "a\rb: c", 2, 4, 5},
		{"after LS", "a\u2028b: c", 2, 1, 4},
	} {
		t.Run(tt.name, func(t *testing.T) {
			data := []byte(tt.in)
			lines := LineStarts(data)
			off, err := Offset(data, lines, tt.line, tt.col)
			if err != nil || off != tt.want {
				t.Fatalf("Offset = %d, %v; want %d", off, err, tt.want)
			}
			if l, c := NewPositioner(data, lines).Position(off); l != tt.line || c != tt.col {
				t.Errorf("Position(%d) = %d:%d, want %d:%d", off, l, c, tt.line, tt.col)
			}
		})
	}
	if _, err := Offset([]byte("a\n"), LineStarts([]byte("a\n")), 3, 1); err == nil {
		t.Error("a line past the end: no error")
	}
}
