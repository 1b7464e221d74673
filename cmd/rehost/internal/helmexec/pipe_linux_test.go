package helmexec

import (
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

// TestGrowPipe: the helper's pipe holds pipeSize bytes where the system
// allows pipes that large; where it refuses, the pipe is as it was.
func TestGrowPipe(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	grown := growPipe(w)
	rc, err := w.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	size := 0
	rc.Control(func(fd uintptr) { size, err = unix.FcntlInt(fd, unix.F_GETPIPE_SZ, 0) })
	if err != nil {
		t.Fatal(err)
	}
	if grown != nil {
		t.Logf("the system refused a pipe of %d bytes: %v", pipeSize, grown)
		if size < 4<<10 {
			t.Errorf("pipe of %d bytes after a refusal", size)
		}
		return
	}
	if size != pipeSize {
		t.Errorf("pipe of %d bytes, want %d", size, pipeSize)
	}
}
