package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/hccl-test/hccl-test/internal/boundedfile"
	"github.com/hccl-test/hccl-test/results"
	"golang.org/x/sys/unix"
)

// outputIdle is how long finish waits on an output that takes nothing (a
// FIFO nobody opened for reading, a pipe nobody reads) before giving it up
// with one line: an input's bound (boundedfile.Idle). A variable for the
// tests.
var outputIdle = boundedfile.Idle

// exitStopped is what a command returns when a stop cause recorded in its
// outputSet ended the run: finish then prints the cause's one line and
// returns its exit code.
const exitStopped = -1

// stopKind is what stopped a run.
type stopKind int

const (
	stopSignal stopKind = iota + 1 // SIGINT, SIGTERM, SIGHUP or SIGPIPE came
	stopClosed                     // an output's reader closed it (EPIPE)
	stopFailed                     // an output failed otherwise (a full disk, an I/O error)
	stopMemory                     // the memory guard
)

// stopSignals are the signals that stop a run through the outputSet, each
// with its exit code 128+n. SIGPIPE is among them so that a write to a
// stdout whose reader left returns EPIPE (Go's default is to die at once,
// with the rows of the other outputs unwritten).
var stopSignals = []os.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGPIPE}

// pipeConfirm is how long a SIGPIPE waits for the write that raised it to
// fail (an output's, which then names itself) or for the run to fail (a
// socket's) before it counts as a signal sent to stop the run.
const pipeConfirm = 500 * time.Millisecond

// stopCause is what stopped a run, the first thing that did.
type stopCause struct {
	kind stopKind
	sig  syscall.Signal // stopSignal
	err  error          // stopClosed, stopFailed, stopMemory: what the output or the guard said
}

// code is the exit code of a run that cause stopped: 128 + the signal for
// a signal (130 SIGINT, 143 SIGTERM, 129 SIGHUP, 141 SIGPIPE), 141 for an
// output whose reader closed it, as the shell reports a pipe's writer
// killed by SIGPIPE, and exitFailed for a failed output or the guard.
func (c stopCause) code() int {
	switch c.kind {
	case stopSignal:
		return 128 + int(c.sig)
	case stopClosed:
		return 128 + int(syscall.SIGPIPE)
	}
	return exitFailed
}

// Error says what stopped the run; the run's context is cancelled with it
// as its cause, which the footer of the outputs repeats.
func (c stopCause) Error() string {
	switch c.kind {
	case stopSignal:
		return unix.SignalName(c.sig) + " received"
	case stopClosed:
		return c.err.Error() + " (its reader closed it)"
	}
	return c.err.Error()
}

// line is the one line on stderr saying why the run stopped, after rows
// rows (-1: not a sweep, no rows to count); done says the run had ended
// when the cause came (the outputs were being written).
func (c stopCause) line(rows int, done bool) string {
	after := ""
	if rows >= 0 {
		after = fmt.Sprintf(" after %d rows", rows)
	}
	switch {
	case c.kind == stopSignal && done:
		return fmt.Sprintf("interrupted while writing the output%s (%s)", after, unix.SignalName(c.sig))
	case c.kind == stopSignal:
		return fmt.Sprintf("interrupted%s (%s)", after, unix.SignalName(c.sig))
	case c.kind == stopMemory:
		return c.Error()
	case rows >= 0:
		return fmt.Sprintf("stopped%s: %s", after, c.Error())
	}
	return c.Error()
}

// outputCause is the stop cause of output name's failing with err.
func outputCause(err error) stopCause {
	if errors.Is(err, syscall.EPIPE) {
		return stopCause{kind: stopClosed, err: err}
	}
	return stopCause{kind: stopFailed, err: err}
}

// stop records c as what stopped the run, unless something did already,
// and cancels the run. An output's closed pipe replaces a SIGPIPE that came
// first: the signal is the kernel's notice of that same write, and the
// output names which pipe.
func (s *outputSet) stop(c stopCause) {
	s.stopMu.Lock()
	defer s.stopMu.Unlock()
	switch {
	case s.cause == nil:
		s.cause = &c
	case s.cause.kind == stopSignal && s.cause.sig == syscall.SIGPIPE && c.kind == stopClosed:
		s.cause = &c
	default:
		return
	}
	s.stopOnce.Do(func() { close(s.stopping) })
	if c.kind == stopSignal && s.finishing {
		s.startGrace()
	}
	if s.cancel != nil {
		s.cancel(c)
	}
}

// stopped returns what stopped the run, nil if nothing did.
func (s *outputSet) stopped() *stopCause {
	s.stopMu.Lock()
	defer s.stopMu.Unlock()
	return s.cause
}

// watchSignals returns the context of a run: it is cancelled, with the
// stopCause as its cause, when a signal of stopSignals comes or an output
// fails (outputSet.stop). prefix is how the one line at the end starts
// ("hccl-test", "hccl-test scenario"). A second signal, while the first
// one's run is still ending, ends the process at once through finish,
// which bounds the wait on the outputs by the grace times. The signals are
// watched until finish is done, so that one during the footer still
// counts.
func (s *outputSet) watchSignals(prefix string) context.Context {
	ctx, cancel := context.WithCancelCause(context.Background())
	s.stopMu.Lock()
	s.cancel, s.prefix, s.sweeping = cancel, prefix, true
	if s.cause != nil {
		cancel(*s.cause)
	}
	s.stopMu.Unlock()
	ch := make(chan os.Signal, 4)
	signal.Notify(ch, stopSignals...)
	s.stopSig = func() { signal.Stop(ch) }
	go func() {
		for {
			select {
			case sig := <-ch:
				if sig == syscall.SIGPIPE {
					// The kernel sends SIGPIPE for any write to a closed
					// pipe or socket of this process too (a rank's peer
					// that died), which Go otherwise ignores: one sent
					// from outside stops the run only if nothing else
					// has after pipeConfirm.
					time.AfterFunc(pipeConfirm, func() {
						if s.stopped() == nil {
							s.stop(stopCause{kind: stopSignal, sig: syscall.SIGPIPE})
						}
					})
					continue
				}
				again := s.interrupts > 0
				s.interrupts++
				s.stop(stopCause{kind: stopSignal, sig: sig.(syscall.Signal)})
				if again || s.computing() {
					s.startGrace()
					os.Exit(s.finish(exitStopped))
				}
			case <-s.ended:
				return
			}
		}
	}()
	return ctx
}

// watchOffline is watchSignals for a command that reads and computes
// before it writes anything (fit, predict, convert, isolate of logs): a
// signal that comes before writing returns ends the process at once
// through finish, with its one line and status, as nothing computed has
// been written yet and the computing does not watch the context; one that
// comes after stops the writing as it stops a sweep.
func (s *outputSet) watchOffline(prefix string) (ctx context.Context, writing func()) {
	s.stopMu.Lock()
	s.offline = true
	s.stopMu.Unlock()
	ctx = s.watchSignals(prefix)
	return ctx, func() {
		s.stopMu.Lock()
		s.offline = false
		s.stopMu.Unlock()
	}
}

// computing reports whether a command of watchOffline has not begun to
// write.
func (s *outputSet) computing() bool {
	s.stopMu.Lock()
	defer s.stopMu.Unlock()
	return s.offline
}

// signalled reports whether a signal stopped the run (an output's failure
// stops it too, but leaves the other outputs to be written).
func (s *outputSet) signalled() bool {
	c := s.stopped()
	return c != nil && c.kind == stopSignal
}

// quietStop makes finish print no line for the stop cause: in a process
// that hosts no rank writing output, whose parent says it.
func (s *outputSet) quietStop() {
	s.stopMu.Lock()
	s.quiet = true
	s.stopMu.Unlock()
}

// stopNow ends the process through finish with c as its cause: for the
// memory guard, when the run did not end once cancelled. The outputs get
// their grace time, and the line reaches stderr.
func (s *outputSet) stopNow(c stopCause) {
	s.stop(c)
	s.startGrace()
	os.Exit(s.finish(exitStopped))
}

// stopLine returns finish's line and exit code for a run that returned
// code: the stop cause's, when one ended the run (exitStopped) or came
// after a run that succeeded; else code and no line.
func (s *outputSet) stopLine(code int, lost []string) (string, int) {
	s.stopMu.Lock()
	c, sweeping, prefix, quiet := s.cause, s.sweeping, s.prefix, s.quiet
	s.stopMu.Unlock()
	if c == nil || (code != exitStopped && code != exitOK) {
		return "", code
	}
	rows := -1
	if sweeping && prefix == programName {
		rows = int(s.rows.Load())
	}
	if quiet {
		return "", c.code()
	}
	line := c.line(rows, code == exitOK)
	if len(lost) > 0 {
		line += "; not written: " + strings.Join(lost, "; ")
	}
	return prefix + ": " + line, c.code()
}

// countRows returns sink counting into s the rows it is given, for the
// line saying after how many rows the run stopped.
func (s *outputSet) countRows(sink results.Sink) results.Sink { return rowCounter{sink, s} }

// rowCounter is countRows' sink.
type rowCounter struct {
	results.Sink
	set *outputSet
}

// Write implements results.Sink.
func (c rowCounter) Write(r results.Record) error {
	c.set.rows.Add(1)
	return c.Sink.Write(r)
}

// oneLineText is a text as one line of stderr: newlines joined with "; ",
// other control characters escaped, cut to maxErrorLine.
func oneLineText(s string) string {
	return capLine(escapeControl(strings.ReplaceAll(s, "\n", "; ")), maxErrorLine)
}
