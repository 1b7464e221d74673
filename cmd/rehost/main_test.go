package main

import (
	"os"
	"testing"
)

// afterTests run once every test of the package has run (built binaries
// are removed).
var afterTests []func()

func TestMain(m *testing.M) {
	code := m.Run()
	for _, f := range afterTests {
		f()
	}
	os.Exit(code)
}
