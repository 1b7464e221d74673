//go:build !race

package manifest

// raceEnabled: the race detector is on (see race_test.go).
const raceEnabled = false
