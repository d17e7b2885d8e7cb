//go:build unix

package traffic

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestReadFileRefuses(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(dir, "empty")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(MaxFileBytes + 1); err != nil { // sparse: no disk used
		t.Fatal(err)
	}
	f.Close()
	link := filepath.Join(dir, "link")
	if err := os.Symlink(fifo, link); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, path, want string }{
		{"missing", filepath.Join(dir, "none"), "no such file or directory"},
		{"directory", dir, "is a directory, not a regular file"},
		{"named pipe", fifo, "is a named pipe (FIFO), not a regular file"},
		{"link to a named pipe", link, "is a named pipe (FIFO)"},
		{"device", os.DevNull, "is a device, not a regular file"},
		{"empty", empty, "empty"},
		{"too large", big, "larger than the limit of 1073741824"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			done := make(chan error, 1)
			go func() { _, err := ReadFile(tc.path, 1); done <- err }()
			var err error
			select {
			case err = <-done:
			case <-time.After(2 * time.Minute): // a hang, not a slow machine
				t.Fatalf("ReadFile(%s) did not return", tc.path)
			}
			if err == nil {
				t.Fatalf("accepted %s", tc.path)
			}
			msg := err.Error()
			if !strings.Contains(msg, tc.want) || !strings.Contains(msg, tc.path) || strings.Contains(msg, "\n") {
				t.Errorf("error %q: want one line naming %s with %q", msg, tc.path, tc.want)
			}
		})
	}
}
