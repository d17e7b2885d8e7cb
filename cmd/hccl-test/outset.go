package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Grace times after a signal.
const (
	// outputGrace is how long the outputs get, after SIGINT or SIGTERM, to
	// take the bytes queued for them (the rows measured, the footer) before
	// the program gives up on them and exits.
	outputGrace = time.Second
	// stderrGrace is how much longer stderr gets, for the line saying what
	// the others did not take.
	stderrGrace = 300 * time.Millisecond
)

// outputSet is every output of the process: stdout, stderr and the files a
// sweep writes, each an outWriter. At exit it waits until each has taken
// its bytes, but after a signal no longer than outputGrace, and then says
// on stderr, in one line, what was not written.
type outputSet struct {
	stdout, stderr *outWriter
	// stdoutID and stderrID are the identity of the files behind stdout
	// and stderr, for telling when an output names one of them.
	stdoutID, stderrID fileID
	files              []*outWriter // the other outputs, in the order opened

	abandon    chan struct{} // closed outputGrace after a signal
	abandonErr chan struct{} // closed stderrGrace later
	signalled  chan struct{} // closed when a signal comes (before the grace times)
	ended      chan struct{} // closed when finish is done
	sig        context.Context
	stopSig    context.CancelFunc // stops the delivery of the signals sig watches
}

// newOutputSet makes the outputs stdout and stderr of the writers given.
// When both are one file (2>&1, a terminal) they share one writer, so
// their lines keep their order.
func newOutputSet(stdout, stderr io.Writer) *outputSet {
	s := &outputSet{abandon: make(chan struct{}), abandonErr: make(chan struct{}), ended: make(chan struct{}),
		signalled: make(chan struct{})}
	s.stdoutID, s.stderrID = identifyWriter(stdout), identifyWriter(stderr)
	switch {
	case stdout == io.Writer(os.Stdout) && closedAtStart(1):
		stdout = closedWriter{}
	case s.stdoutID.same(s.stderrID):
		s.stdout = newOutWriter("stdout", stdout, nil, s.abandonErr)
		s.stdout.signalled = s.signalled
		s.stderr = s.stdout
		return s
	}
	s.stdout = newOutWriter("stdout", stdout, nil, s.abandon)
	s.stdout.signalled = s.signalled
	s.stderr = newOutWriter("stderr", stderr, nil, s.abandonErr)
	return s
}

// add makes w an output of the set, written by a goroutine of its own.
func (s *outputSet) add(name string, w io.Writer) *outWriter {
	o := newOutWriter(name, w, nil, s.abandon)
	o.signalled = s.signalled
	s.files = append(s.files, o)
	return o
}

// create creates (or truncates) the file at path and makes it an output
// named name. A FIFO that no one has opened for reading yet does not hold
// the program up: its output waits for the reader while the run goes on.
func (s *outputSet) create(name, path string) (*outWriter, error) {
	open := func() (io.WriteCloser, error) {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|syscall.O_NONBLOCK, 0o666)
		if errors.Is(err, syscall.ENXIO) {
			if fi, serr := os.Stat(path); serr == nil && fi.Mode()&os.ModeNamedPipe != 0 {
				return nil, errNoReader
			}
		}
		if err != nil {
			return nil, err
		}
		if fi, err := f.Stat(); err == nil && fi.Mode()&(os.ModeNamedPipe|os.ModeSocket) == 0 {
			f.Fd() // not a pipe: back to blocking writes, as any file
		}
		return f, nil
	}
	f, err := open()
	if err != nil && !errors.Is(err, errNoReader) {
		return nil, err
	}
	if err == nil {
		open = func() (io.WriteCloser, error) { return f, nil }
	}
	o := newOutWriter(name, nil, open, s.abandon)
	o.signalled = s.signalled
	s.files = append(s.files, o)
	return o, nil
}

// giveUpOn makes the set give up on its outputs outputGrace after ctx is
// done (a signal); stop ends the signals' delivery, which finish calls when
// it is done, so that a signal while the outputs drain still counts.
func (s *outputSet) giveUpOn(ctx context.Context, stop context.CancelFunc) {
	s.sig, s.stopSig = ctx, stop
	go func() {
		select {
		case <-ctx.Done():
			close(s.signalled)
		case <-s.ended:
			return
		}
		for _, c := range []struct {
			after time.Duration
			ch    chan struct{}
		}{{outputGrace, s.abandon}, {stderrGrace, s.abandonErr}} {
			t := time.NewTimer(c.after)
			select {
			case <-t.C:
				close(c.ch)
			case <-s.ended:
				t.Stop()
				return
			}
		}
	}()
}

// finish waits for the outputs to take their bytes (after a signal, up to
// the grace time), says on stderr what they did not take, and returns the
// program's exit code: code, or exitFailed when an output failed in a
// program that would have succeeded, or exitSignal when a signal came
// while the outputs drained.
func (s *outputSet) finish(code int) int {
	var failed, lost []string
	for _, o := range append([]*outWriter{s.stdout}, s.files...) {
		o.mu.Lock()
		waiting := o.waiting && o.queued > 0
		o.mu.Unlock()
		if waiting {
			fmt.Fprintf(s.stderr, "%s: %s: waiting for a reader to open it (Ctrl-C gives up)\n", programName, o.name)
		}
		unwritten, lines, err := o.drain()
		switch {
		case err != nil:
			failed = append(failed, err.Error())
		case unwritten > 0:
			what := fmt.Sprintf("%d lines", lines)
			if lines == 0 {
				what = fmt.Sprintf("%d bytes", unwritten)
			}
			o.mu.Lock()
			lost = append(lost, fmt.Sprintf("%s: %s (%s)", o.name, what, o.why()))
			o.mu.Unlock()
		}
		if o != s.stderr {
			if err := o.close(); err != nil && code == exitOK {
				failed = append(failed, err.Error())
			}
		}
	}
	if code == exitOK && s.sig != nil && s.sig.Err() != nil {
		fmt.Fprintf(s.stderr, "%s: interrupted while writing the output\n", programName)
		code = exitSignal
	}
	if code == exitOK && len(failed) > 0 {
		fmt.Fprintf(s.stderr, "%s: %s\n", programName, strings.Join(failed, "; "))
		code = exitFailed
	}
	if len(lost) > 0 {
		fmt.Fprintf(s.stderr, "%s: not written after the signal: %s\n", programName, strings.Join(lost, "; "))
	}
	s.stderr.drain()
	s.stderr.close()
	if s.stopSig != nil {
		s.stopSig()
	}
	close(s.ended)
	return code
}

// identifyWriter returns the identity of w's file, if w is a file.
func identifyWriter(w io.Writer) fileID {
	if f, ok := w.(*os.File); ok {
		if fi, err := f.Stat(); err == nil {
			return fileID{file: fi}
		}
	}
	return fileID{}
}

// errClosedAtStart is the write error of stdout when it was closed.
var errClosedAtStart = errors.New("write: closed when the program started (>/dev/null discards the output)")

// closedWriter fails every write: stdout, when it was closed.
type closedWriter struct{}

func (closedWriter) Write([]byte) (int, error) { return 0, errClosedAtStart }

// closedAtStart reports whether descriptor fd (stdout or stderr) was closed
// when the program started. The Go runtime then opens /dev/null read-write
// in its place, where every write would vanish without an error; a shell's
// >/dev/null opens it write-only, and os/exec's too.
func closedAtStart(fd int) bool {
	var st, null unix.Stat_t
	if unix.Fstat(fd, &st) != nil || unix.Stat(os.DevNull, &null) != nil {
		return false
	}
	if st.Dev != null.Dev || st.Ino != null.Ino {
		return false
	}
	fl, err := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0)
	return err == nil && fl&unix.O_ACCMODE == unix.O_RDWR
}
