package helm

import (
	"log"
	"reflect"
	"testing"
)

// TestCaptureLog: Helm's log lines reach the caller once each, without the
// "warning: " Helm starts them with, and the standard logger is restored.
func TestCaptureLog(t *testing.T) {
	tests := []struct {
		name  string
		lines []string
		want  []string
	}{
		{"coalesce", []string{"warning: destination for a.b is a table. Ignoring non-table value ([])"}, []string{"destination for a.b is a table. Ignoring non-table value ([])"}},
		{"capitalised", []string{"Warning: Condition path 'x' for chart y returned non-bool value", "WARNING: unresolved URN reference ignored"}, []string{"Condition path 'x' for chart y returned non-bool value", "unresolved URN reference ignored"}},
		{"repeated once", []string{"warning: skipped value for a: Not a table.", "warning: skipped value for a: Not a table.", "other"}, []string{"skipped value for a: Not a table.", "other"}},
		{"the word alone kept", []string{"warning:", "warnings: two"}, []string{"warning:", "warnings: two"}},
		{"none", nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := log.Writer()
			got, err := captureLog(func() error {
				for _, l := range tt.lines {
					log.Print(l)
				}
				return nil
			})
			if err != nil || !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %q, %v; want %q", got, err, tt.want)
			}
			if log.Writer() != before {
				t.Error("the standard logger's output was not restored")
			}
		})
	}
}
