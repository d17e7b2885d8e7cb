package boundedfile

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hccl-test/hccl-test/internal/wallbound"
)

// shortIdle keeps the tests of pipes that stall fast.
const shortIdle = 300 * time.Millisecond

func TestReadAll(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	sparse := filepath.Join(dir, "sparse")
	if err := os.WriteFile(sparse, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(sparse, 1<<40); err != nil {
		t.Skipf("no sparse file of 1 TiB here: %v", err)
	}
	const limit = 1024
	for _, tc := range []struct {
		name, path string
		want       []byte // nil: want an error containing errText
		errText    string
		size       int64 // a LimitError's Size; 0 when the error is not one
	}{
		{name: "small", path: write("small", []byte("a\nb\n")), want: []byte("a\nb\n")},
		{name: "empty", path: write("empty", nil), want: []byte{}},
		{name: "exactly the limit", path: write("limit", bytes.Repeat([]byte("x"), limit)), want: bytes.Repeat([]byte("x"), limit)},
		{name: "one byte over", path: write("over", bytes.Repeat([]byte("x"), limit+1)),
			errText: "over: 1025 bytes, larger than the limit of 1 KiB (1024 bytes) for this file", size: limit + 1},
		{name: "sparse 1 TiB", path: sparse, errText: "sparse: 1 TiB, larger than the limit of 1 KiB", size: 1 << 40},
		{name: "/dev/zero", path: "/dev/zero", errText: "/dev/zero: more than the limit of 1 KiB for this file, and not at its end", size: -1},
		{name: "/dev/urandom", path: "/dev/urandom", errText: "/dev/urandom: more than the limit of 1 KiB", size: -1},
		{name: "directory", path: dir, errText: dir + ": is a directory, not a file"},
		{name: "missing", path: filepath.Join(dir, "missing"), errText: "no such file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			got, err := readPath(tc.path, limit, shortIdle)
			if d, bound := time.Since(start), wallbound.Bound(shortIdle, smallRead(t)); d > bound {
				t.Errorf("took %v, more than the idle time and slack over a small file's read (%v)", d, bound)
			}
			if tc.want != nil {
				if err != nil || !bytes.Equal(got, tc.want) {
					t.Fatalf("got %q, %v; want %q", got, err, tc.want)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.errText) {
				t.Fatalf("got %d bytes, error %v; want an error containing %q", len(got), err, tc.errText)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error %q is more than one line", err)
			}
			var le *LimitError
			if errors.As(err, &le) != (tc.size != 0) || (le != nil && le.Size != tc.size) {
				t.Errorf("error %#v: want a LimitError of size %d", err, tc.size)
			}
		})
	}
}

// readPath is ReadFile with an idle time of the test's choosing.
func readPath(path string, limit int64, idle time.Duration) ([]byte, error) {
	f, err := open(path, limit, idle)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.readAll()
}

// TestFIFO reads named pipes: one nobody writes to, one whose writer
// stalls, one fed more than the limit, and one fed a little, all within a
// few seconds.
func TestFIFO(t *testing.T) {
	const limit = 64 << 10
	for _, tc := range []struct {
		name    string
		writer  func(t *testing.T, path string) // nil: no writer at all
		want    int                             // bytes read, when no error
		errText string
	}{
		{name: "no writer", errText: "a named pipe that nobody opened for writing within 300ms"},
		{name: "writer that stalls", writer: func(t *testing.T, path string) {
			w := openWriter(t, path)
			w.Write([]byte("some\n"))
			time.Sleep(3 * shortIdle)
			w.Close()
		}, errText: "nothing more to read for 300ms"},
		{name: "more than the limit", writer: func(t *testing.T, path string) {
			w := openWriter(t, path)
			defer w.Close()
			chunk := make([]byte, 4096)
			for range 4 * limit / len(chunk) {
				if _, err := w.Write(chunk); err != nil {
					return // the reader gave up: EPIPE
				}
			}
		}, errText: "more than the limit of 64 KiB for this file, and not at its end"},
		{name: "a little", writer: func(t *testing.T, path string) {
			w := openWriter(t, path)
			w.Write(make([]byte, 1000))
			w.Close()
		}, want: 1000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "fifo")
			if err := syscall.Mkfifo(path, 0o600); err != nil {
				t.Skipf("mkfifo: %v", err)
			}
			done := make(chan struct{})
			if tc.writer != nil {
				go func() {
					defer close(done)
					tc.writer(t, path)
				}()
			} else {
				close(done)
			}
			start := time.Now()
			got, err := readPath(path, limit, shortIdle)
			if d, bound := time.Since(start), wallbound.Bound(shortIdle, smallRead(t)); d > bound {
				t.Errorf("took %v, more than the idle time and slack over a small file's read (%v)", d, bound)
			}
			switch {
			case tc.errText == "" && (err != nil || len(got) != tc.want):
				t.Errorf("got %d bytes, %v; want %d bytes", len(got), err, tc.want)
			case tc.errText != "" && (err == nil || !strings.Contains(err.Error(), tc.errText)):
				t.Errorf("got %d bytes, %v; want an error containing %q", len(got), err, tc.errText)
			}
			select {
			case <-done:
			case <-time.After(5 * time.Second):
				t.Error("the writer still blocks")
			}
		})
	}
}

// openWriter opens the FIFO at path for writing, which waits for the reader.
func openWriter(t *testing.T, path string) *os.File {
	w, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Error(err)
		return nil
	}
	return w
}

// TestLine checks that Line names the line that a bufio.Scanner found too
// long, not the one before it.
func TestLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "long")
	data := "one\ntwo\nthree\n" + strings.Repeat("x", 100<<10) + "\nfive\n"
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := Open(path, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
	}
	if sc.Err() == nil || f.Line() != 4 {
		t.Errorf("scanner error %v at Line %d, want an error at line 4", sc.Err(), f.Line())
	}
}

func TestOpenMissingIsPathError(t *testing.T) {
	path := filepath.Join(t.TempDir(), "none")
	_, err := Open(path, 10)
	if _, ok := errors.AsType[*fs.PathError](err); !ok || err.Error() != "open "+path+": no such file or directory" {
		t.Errorf("got %v, want a *fs.PathError as os.Open's", err)
	}
}

// TestAnonymousPipe reads a pipe by its /proc path, as /dev/stdin is read
// when stdin is a pipe: its writer may be gone already, and what it wrote
// is still there, without waiting for a writer.
func TestAnonymousPipe(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	w.Write([]byte("{}\n"))
	w.Close()
	path := fmt.Sprintf("/proc/self/fd/%d", r.Fd())
	if _, err := os.Stat(path); err != nil {
		t.Skipf("no %s: %v", path, err)
	}
	// "At once": within the slack over a small file's read, measured
	// now; the idle time is twice that, so a read that waited for it
	// could not pass.
	slack := wallbound.Slack(smallRead(t))
	start := time.Now()
	got, err := readPath(path, 1024, 2*slack)
	if took := time.Since(start); err != nil || string(got) != "{}\n" || took > slack {
		t.Errorf("got %q, %v after %v; want \"{}\\n\" at once", got, err, took)
	}
}

// smallRead is the baseline of the bounds on reads: the quickest of three
// reads of a small regular file, on this host now.
func smallRead(t *testing.T) time.Duration {
	t.Helper()
	path := filepath.Join(t.TempDir(), "small")
	if err := os.WriteFile(path, []byte("small\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return wallbound.Baseline(func() {
		if _, err := readPath(path, 1024, shortIdle); err != nil {
			t.Fatalf("a small file: %v", err)
		}
	})
}
