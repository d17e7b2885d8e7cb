package outfile

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hccl-test/hccl-test/internal/wallbound"
)

// blockedWriter takes nothing until release is closed.
type blockedWriter struct {
	release chan struct{}
	buf     bytes.Buffer
}

func (b *blockedWriter) Write(p []byte) (int, error) {
	<-b.release
	return b.buf.Write(p)
}

type failingWriter struct{ err error }

func (f failingWriter) Write([]byte) (int, error) { return 0, f.err }

// TestWriterNeverHoldsUpTheRun: a reader that takes nothing costs a
// Flush stallAfter once, a Write that finds the queue full waits only until
// the set gives up, and what was queued is written once the reader comes.
func TestWriterNeverHoldsUpTheRun(t *testing.T) {
	t.Run("stalled", func(t *testing.T) {
		dst := &blockedWriter{release: make(chan struct{})}
		w := NewWriter("stdout", dst, nil, make(chan struct{}), nil, nil)
		if _, err := w.Write([]byte("row 1\n")); err != nil {
			t.Fatal(err)
		}
		// About stallAfter: at most that and slack over a Flush of an
		// output that takes its bytes, measured now (wallbound).
		ready := NewWriter("ready", io.Discard, nil, make(chan struct{}), nil, nil)
		base := wallbound.Baseline(func() {
			ready.Write([]byte("row\n"))
			if err := ready.Flush(); err != nil {
				t.Fatal(err)
			}
		})
		ready.Close()
		start := time.Now()
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		if d, bound := time.Since(start), wallbound.Bound(stallAfter, base); d < stallAfter/2 || d > bound {
			t.Errorf("Flush on a stalled output took %v, want about %v (at most %v on this host's load)", d, stallAfter, bound)
		}
		start = time.Now()
		w.Write([]byte("row 2\n"))
		if err := w.Flush(); err != nil || time.Since(start) > stallAfter/2 {
			t.Errorf("second Flush: %v after %v, want nil at once: the output is known to be stalled", err, time.Since(start))
		}
		close(dst.release)
		if n, lines, err := w.Drain(time.Hour); n != 0 || lines != 0 || err != nil {
			t.Errorf("drain: %d bytes %d lines %v left", n, lines, err)
		}
		if err := w.Close(); err != nil || dst.buf.String() != "row 1\nrow 2\n" {
			t.Errorf("close %v; written %q", err, dst.buf.String())
		}
	})
	t.Run("full queue", func(t *testing.T) {
		abandon := make(chan struct{})
		w := NewWriter("--csv p", &blockedWriter{release: make(chan struct{})}, nil, abandon, nil, nil)
		big := make([]byte, queueLimit/3+1)
		w.Write(big) // taken by the goroutine, which blocks on it
		w.Write(big) // queued
		errc := make(chan error, 1)
		go func() {
			_, err := w.Write(big) // no room
			errc <- err
		}()
		select {
		case err := <-errc:
			t.Fatalf("Write to a full queue returned %v at once", err)
		case <-time.After(50 * time.Millisecond):
		}
		close(abandon)
		select {
		case err := <-errc:
			if err == nil || !strings.Contains(err.Error(), "--csv p") {
				t.Errorf("Write after giving up: %v, want an error naming the output", err)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("Write to a full queue still waits after the set gave up")
		}
		n, _, err := w.Drain(time.Hour)
		if n != 2*len(big) || err != nil {
			t.Errorf("drain after giving up: %d bytes left (%v), want %d", n, err, 2*len(big))
		}
		w.Close()
	})
	t.Run("failed", func(t *testing.T) {
		w := NewWriter("--csv /dev/full", failingWriter{&os.PathError{Op: "write", Path: "/dev/full", Err: errors.New("no space left on device")}}, nil, make(chan struct{}), nil, nil)
		w.Write([]byte("header\n"))
		err := w.Flush()
		if want := "--csv /dev/full: write: no space left on device"; err == nil || err.Error() != want {
			t.Fatalf("Flush: %v, want %q", err, want)
		}
		if _, err2 := w.Write([]byte("row\n")); err2 == nil {
			t.Error("Write after a failure succeeded")
		}
		w.Close()
	})
	t.Run("fifo", func(t *testing.T) {
		abandon := make(chan struct{})
		tries := 0
		open := func() (io.WriteCloser, error) {
			tries++
			return nil, ErrNoReader
		}
		w := NewWriter("--csv p", nil, open, abandon, nil, nil)
		w.Write([]byte("header\n"))
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		close(abandon)
		n, lines, err := w.Drain(time.Hour)
		why := w.Why()
		if n == 0 || lines != 1 || err != nil || why != "no reader opened it" {
			t.Errorf("drain: %d bytes %d lines %v (%s), want the header left for want of a reader", n, lines, err, why)
		}
		w.Close()
	})
}

// TestFileIdentity: spellings of one file are one file, whether or not it
// exists yet; different files are not.
func TestFileIdentity(t *testing.T) {
	dir := t.TempDir()
	for _, d := range []string{"sub", "sub/inner"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	must(t, os.WriteFile(filepath.Join(dir, "old"), nil, 0o644))
	must(t, os.Link(filepath.Join(dir, "old"), filepath.Join(dir, "hard")))
	must(t, os.Symlink("new", filepath.Join(dir, "dangling")))
	must(t, os.Symlink("old", filepath.Join(dir, "link")))
	must(t, os.Symlink("sub", filepath.Join(dir, "subdir")))
	must(t, os.Symlink("sub/inner", filepath.Join(dir, "deep")))
	p := func(s string) string { return filepath.Join(dir, s) }
	tests := []struct {
		a, b string
		same bool
	}{
		{p("new"), dir + "/./new", true},
		{p("new"), dir + "/sub/../new", true},
		{p("new"), p("dangling"), true},
		{p("sub/new"), p("subdir/new"), true},
		{dir + "/deep/../new", p("sub/new"), true}, // deep/.. is sub, not dir
		{dir + "/deep/../new", p("new"), false},
		{p("old"), p("hard"), true},
		{p("old"), p("link"), true},
		{p("old"), p("new"), false},
		{p("new"), p("sub/new"), false},
		{p("new"), p("New"), false},
	}
	for _, tc := range tests {
		a, err := Identify(tc.a)
		must(t, err)
		b, err := Identify(tc.b)
		must(t, err)
		if got := a.Same(b); got != tc.same {
			t.Errorf("%s and %s: same %v, want %v", tc.a, tc.b, got, tc.same)
		}
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestDrainGivesUpOnlyOnAFIFOWithoutReader: drain gives up, after idle,
// on a FIFO that nobody opened for reading, and waits for a reader that is
// there but slow (| less on its first page), however long it takes.
func TestDrainGivesUpOnlyOnAFIFOWithoutReader(t *testing.T) {
	const idle = 20 * time.Millisecond
	t.Run("slow reader", func(t *testing.T) {
		dst := &blockedWriter{release: make(chan struct{})}
		w := NewWriter("stdout", dst, nil, make(chan struct{}), nil, nil)
		w.Write([]byte("row 1\n"))
		released := make(chan struct{})
		go func() {
			time.Sleep(10 * idle)
			close(released)
			close(dst.release)
		}()
		n, lines, err := w.Drain(idle)
		select {
		case <-released:
		default:
			t.Fatalf("drain returned (%d bytes, %d lines, %v) before the slow reader took the row", n, lines, err)
		}
		if n != 0 || err != nil {
			t.Errorf("drain: %d bytes left, %v", n, err)
		}
		w.Close()
	})
	t.Run("fifo without reader", func(t *testing.T) {
		open := func() (io.WriteCloser, error) { return nil, ErrNoReader }
		w := NewWriter("--csv p", nil, open, make(chan struct{}), nil, nil)
		w.Write([]byte("header\nrow 1\n"))
		start := time.Now()
		_, lines, err := w.Drain(idle)
		if time.Since(start) < idle || lines != 2 || err == nil ||
			err.Error() != "--csv p: a named pipe that nobody opened for reading within 20ms (2 lines not written)" {
			t.Errorf("drain after %v: %d lines, %v; want the FIFO given up after %v", time.Since(start), lines, err, idle)
		}
		done := make(chan struct{})
		go func() { w.Close(); close(done) }()
		select {
		case <-done:
		case <-time.After(time.Minute):
			t.Fatal("close still waits for the FIFO's reader")
		}
	})
}
