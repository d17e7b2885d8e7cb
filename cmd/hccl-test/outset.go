package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hccl-test/hccl-test/internal/outfile"
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
// sweep writes, each an outfile.Writer, and the one way a run stops: whatever
// stops it (a signal, an output that fails or whose reader closed it, the
// memory guard) is recorded by stop, which cancels the run; finish then
// waits until each output that still works has taken its bytes (after a
// signal no longer than outputGrace, and never longer than outputIdle
// without progress), prints the one line that says why the run stopped,
// and returns the exit code that says which.
type outputSet struct {
	stdout, stderr *outfile.Writer
	// stdoutID and stderrID are the identity of the files behind stdout
	// and stderr, for telling when an output names one of them.
	stdoutID, stderrID outfile.ID
	files              []*outfile.Writer // the other outputs, in the order opened

	abandon    chan struct{} // closed outputGrace after a signal, once the run has ended
	abandonErr chan struct{} // closed stderrGrace later
	stopping   chan struct{} // closed when a stop cause is recorded
	ended      chan struct{} // closed when finish is done
	stopSig    func()        // stops the delivery of the signals watchSignals watches
	interrupts int           // signals other than SIGPIPE seen, by watchSignals' goroutine
	rows       atomic.Int64  // rows written to the outputs (countRows)

	stopMu    sync.Mutex // guards the fields below
	cause     *stopCause // what stopped the run; nil while nothing did
	cancel    context.CancelCauseFunc
	prefix    string // how the one line starts
	sweeping  bool   // watchSignals was called: the run counts rows
	finishing bool   // finish has begun: a signal now starts the grace time
	quiet     bool   // finish prints no line for the cause (quietStop)
	offline   bool   // a command of watchOffline has not begun to write

	stopOnce  sync.Once  // closes stopping
	graceOnce sync.Once  // starts the grace timers
	finishMu  sync.Mutex // held by the finish that ends the process
}

// newOutputSet makes the outputs stdout and stderr of the writers given.
// When both are one file (2>&1, a terminal) they share one writer, so
// their lines keep their order.
func newOutputSet(stdout, stderr io.Writer) *outputSet {
	closed := stdout == io.Writer(os.Stdout) && outfile.ClosedAtStart(1)
	stdout, stderr = outfile.OwnDescriptor(stdout), outfile.OwnDescriptor(stderr)
	s := &outputSet{abandon: make(chan struct{}), abandonErr: make(chan struct{}), ended: make(chan struct{}),
		stopping: make(chan struct{}), prefix: programName}
	s.stdoutID, s.stderrID = outfile.IdentifyWriter(stdout), outfile.IdentifyWriter(stderr)
	switch {
	case closed:
		stdout = outfile.ClosedWriter{}
	case s.stdoutID.Same(s.stderrID):
		s.stdout = s.newWriter("stdout", stdout, nil, s.abandonErr)
		s.stderr = s.stdout
		return s
	}
	s.stdout = s.newWriter("stdout", stdout, nil, s.abandon)
	s.stderr = s.newWriter("stderr", stderr, nil, s.abandonErr)
	return s
}

// add makes w an output of the set, written by a goroutine of its own.
func (s *outputSet) add(name string, w io.Writer) *outfile.Writer {
	o := s.newWriter(name, w, nil, s.abandon)
	s.files = append(s.files, o)
	return o
}

// newWriter starts an output of the set: a failure of its is a stop cause,
// and once the run is stopping a Write that finds its queue full no longer
// waits for room.
func (s *outputSet) newWriter(name string, dst io.Writer, open func() (io.WriteCloser, error), abandon chan struct{}) *outfile.Writer {
	return outfile.NewWriter(name, dst, open, abandon, s.stopping, func(err error) { s.stop(outputCause(err)) })
}

// create creates (or truncates) the file at path and makes it an output
// named name. A FIFO that no one has opened for reading yet does not hold
// the program up: its output waits for the reader while the run goes on.
func (s *outputSet) create(name, path string) (*outfile.Writer, error) {
	open, err := outfile.Open(path)
	if err != nil {
		return nil, err
	}
	o := s.newWriter(name, nil, open, s.abandon)
	s.files = append(s.files, o)
	return o, nil
}

// startGrace starts the grace times of a signal: the outputs are given up
// outputGrace after it, stderr stderrGrace later. It is called once the run
// has ended (finish), so that a run slow to end does not use them up.
func (s *outputSet) startGrace() {
	s.graceOnce.Do(func() {
		go func() {
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
	})
}

// finish waits for the outputs to take their bytes (after a signal, up to
// the grace time; without progress, up to outputIdle), prints at most one
// line on stderr, and returns the program's exit code: a stop cause's
// (stopCause.code) when one ended the run (code is exitStopped) or came
// after it succeeded, exitFailed when an output failed in a program that
// would have succeeded, else code. A command that printed its own line
// and returns its own code gets no second line.
func (s *outputSet) finish(code int) int {
	s.finishMu.Lock() // not unlocked: the process ends after the first finish
	s.stopMu.Lock()
	s.finishing = true
	signalled := s.cause != nil && s.cause.kind == stopSignal
	s.stopMu.Unlock()
	if signalled {
		s.startGrace()
	}
	var failed, lost []string
	for _, o := range append([]*outfile.Writer{s.stdout}, s.files...) {
		unwritten, lines, err := o.Drain(outputIdle)
		switch {
		case err != nil:
			failed = append(failed, err.Error())
		case unwritten > 0:
			what := fmt.Sprintf("%d lines", lines)
			if lines == 0 {
				what = fmt.Sprintf("%d bytes", unwritten)
			}
			lost = append(lost, fmt.Sprintf("%s: %s (%s)", o.Name(), what, o.Why()))
		}
		if o != s.stderr {
			if err := o.Close(); err != nil {
				failed = append(failed, err.Error())
			}
		}
	}
	line, code := s.endLine(code, failed, lost)
	if line != "" {
		fmt.Fprintln(s.stderr, oneLineText(line))
	}
	s.stderr.Drain(outputIdle)
	s.stderr.Close()
	if s.stopSig != nil {
		s.stopSig()
	}
	close(s.ended)
	return code
}

// endLine returns finish's line (without its newline; "" for none) and the
// exit code, from the code the command returned, the outputs that failed
// and what the outputs did not take.
func (s *outputSet) endLine(code int, failed, lost []string) (string, int) {
	c := s.stopped()
	if c != nil && c.kind != stopSignal {
		// The output that stopped the run is named by the cause.
		failed = slices.DeleteFunc(failed, func(f string) bool { return c.err != nil && f == c.err.Error() })
	}
	if len(failed) > 0 {
		lost = append(lost, failed...)
	}
	line, code := s.stopLine(code, lost)
	if line != "" || c != nil || code != exitOK || len(failed) == 0 {
		return line, code
	}
	s.stopMu.Lock()
	prefix := s.prefix
	s.stopMu.Unlock()
	return prefix + ": " + strings.Join(failed, "; "), exitFailed
}
