package main

import (
	"runtime/debug"
	"testing"
)

// TestFitGCToChart: the soft memory limit grows with the chart, up to
// 1 GiB, never shrinks, and a GOMEMLIMIT of the user's stays.
func TestFitGCToChart(t *testing.T) {
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	for _, tt := range []struct {
		name  string
		limit int64
		size  int
		env   string
		want  int64
	}{
		{"a chart of 4 MB", 64 << 20, 4 << 20, "", 64<<20 + 160<<20},
		{"a huge chart", 64 << 20, 1 << 30, "", 1 << 30},
		{"never lower", 2 << 30, 4 << 20, "", 2 << 30},
		{"the user's GOMEMLIMIT", 64 << 20, 4 << 20, "64MiB", 64 << 20},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("GOMEMLIMIT", tt.env)
			debug.SetMemoryLimit(tt.limit)
			fitGCToChart(tt.size)
			if got := debug.SetMemoryLimit(-1); got != tt.want {
				t.Errorf("limit %d, want %d", got, tt.want)
			}
		})
	}
}
