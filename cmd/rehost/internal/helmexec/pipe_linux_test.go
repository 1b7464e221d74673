package helmexec

import (
	"os"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestGrowPipe: the helper's pipe holds pipeSize bytes where the system
// allows pipes that large (/proc/sys/fs/pipe-max-size).
func TestGrowPipe(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	growPipe(w)
	rc, err := w.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	size := 0
	rc.Control(func(fd uintptr) { size, err = unix.FcntlInt(fd, unix.F_GETPIPE_SZ, 0) })
	if err != nil {
		t.Fatal(err)
	}
	want := pipeSize
	if b, err := os.ReadFile("/proc/sys/fs/pipe-max-size"); err == nil {
		if max, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && max < want {
			want = 64 << 10 // refused: as it was
		}
	}
	if size != want {
		t.Errorf("pipe of %d bytes, want %d", size, want)
	}
}
