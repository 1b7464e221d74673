//go:build race

package manifest

// raceEnabled: the race detector is on. Its sync.Pool drops items at
// random, so regexp matches (pkg/rewrite's reference grammar) allocate
// their state afresh: allocation counts are not the program's.
const raceEnabled = true
