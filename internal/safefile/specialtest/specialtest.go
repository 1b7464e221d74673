//go:build unix

// Package specialtest makes the special files that tests of rehost's
// outputs write to: a FIFO, and, when the test runs as root, a character
// device (a clone of /dev/null, major 1 minor 3). Never the real /dev/null:
// a test that fails must not break the machine.
package specialtest

import (
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
	"time"
)

// File is a special file made for a test.
type File struct {
	// Path is where it is; Kind names it ("fifo", "device").
	Path, Kind string
	mode       fs.FileMode
	ino        uint64
	got        chan []byte
}

// Make makes one special file of each kind the test may make, in dir
// (fifo-NAME, dev-NAME):
// the FIFO is read by a goroutine from the start (call Received for what
// it read); the device is made only as root, on a file system that allows
// opening it.
func Make(t testing.TB, dir, name string) []*File {
	t.Helper()
	var out []*File
	fifo := filepath.Join(dir, "fifo-"+name)
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	f := &File{Path: fifo, Kind: "fifo", mode: fs.ModeNamedPipe, got: make(chan []byte, 1)}
	go func() {
		r, err := os.Open(fifo) // blocks until a writer opens it
		if err != nil {
			f.got <- nil
			return
		}
		b, _ := io.ReadAll(r)
		r.Close()
		f.got <- b
	}()
	t.Cleanup(func() {
		// Unblock the reader if nothing wrote (a failed test).
		if w, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			w.Close()
		}
	})
	f.ino = inode(t, fifo)
	out = append(out, f)
	if os.Geteuid() != 0 || runtime.GOOS != "linux" {
		t.Logf("not root on Linux: no device node, only a FIFO")
		return out
	}
	dev := filepath.Join(dir, "dev-"+name)
	if err := syscall.Mknod(dev, syscall.S_IFCHR|0o666, 1<<8|3); err != nil { // makedev(1, 3)
		t.Logf("mknod: %v: no device node", err)
		return out
	}
	w, err := os.OpenFile(dev, os.O_WRONLY, 0)
	if err != nil {
		t.Logf("opening the device node: %v (a nodev mount?): no device node", err)
		os.Remove(dev)
		return out
	}
	w.Close()
	return append(out, &File{Path: dev, Kind: "device", mode: fs.ModeDevice | fs.ModeCharDevice, ino: inode(t, dev)})
}

func inode(t testing.TB, p string) uint64 {
	t.Helper()
	st, err := os.Lstat(p)
	if err != nil {
		t.Fatal(err)
	}
	return st.Sys().(*syscall.Stat_t).Ino
}

// Check fails the test unless the file is still the special file it was
// (same type, same inode): written into, not replaced.
func (f *File) Check(t testing.TB) {
	t.Helper()
	st, err := os.Lstat(f.Path)
	if err != nil {
		t.Fatalf("%s: %v", f.Path, err)
	}
	if st.Mode().Type() != f.mode || st.Sys().(*syscall.Stat_t).Ino != f.ino {
		t.Errorf("%s (%s) was replaced: now %v", f.Path, f.Kind, st.Mode())
	}
}

// Received returns what a FIFO received (nil for a device, whose bytes are
// discarded), waiting up to 10 s for the writer to close it.
func (f *File) Received(t testing.TB) []byte {
	t.Helper()
	if f.got == nil {
		return nil
	}
	select {
	case b := <-f.got:
		return b
	case <-time.After(10 * time.Second):
		t.Fatalf("%s: nothing written", f.Path)
		return nil
	}
}
