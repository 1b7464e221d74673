//go:build unix

package helmexec

import (
	"os"
	"syscall"
)

// killedBy is the signal that ended a process, if one did.
func killedBy(ps *os.ProcessState) (os.Signal, bool) {
	ws, ok := ps.Sys().(syscall.WaitStatus)
	if !ok || !ws.Signaled() {
		return nil, false
	}
	return ws.Signal(), true
}
