//go:build !unix

package helmexec

import "os"

// killedBy is the signal that ended a process: none, where processes do
// not end by signals.
func killedBy(*os.ProcessState) (os.Signal, bool) { return nil, false }
