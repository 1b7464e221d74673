//go:build !unix

package specialtest

import "testing"

// File is a special file made for a test.
type File struct{ Path, Kind string }

// Make skips the test: there are no FIFOs or device nodes to make.
func Make(t testing.TB, dir, name string) []*File {
	t.Skip("no FIFOs or device nodes on this system")
	return nil
}

// Check does nothing.
func (f *File) Check(t testing.TB) {}

// Received returns nothing.
func (f *File) Received(t testing.TB) []byte { return nil }
