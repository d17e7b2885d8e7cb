// Package outfile is the output side of the command: stdout, stderr and
// the files a run writes (--csv, --json, --bench, -J). Each is a Writer
// whose bytes a goroutine of its own writes, so that a reader who stops
// reading holds up only that goroutine; Create opens a file as an output
// (a FIFO without a reader does not hold the program up; a regular file
// is locked against a second run before it is truncated); ID tells when
// two outputs name one file. What a failed output means for the run (its
// stop, the line that says why, the exit code) is the command's.
package outfile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"sync"
	"time"
)

// Limits of a Writer.
const (
	// stallAfter is how long Flush waits on an output that takes no bytes
	// before the run moves on without it. A file, a device or a pipe with a
	// reader takes a row in microseconds, so every Flush of theirs returns
	// after the bytes are written and with their error; only a FIFO nobody
	// opened, or a pipe nobody reads, holds the run up this long, once.
	stallAfter = 100 * time.Millisecond
	// queueLimit is how many bytes an output holds for a reader that is
	// behind before a Write waits for room: about 2000 CSV rows.
	queueLimit = 1 << 20
)

// ErrNoReader is what an output's open function returns while a FIFO has no
// reader yet: the output waits for one.
var ErrNoReader = errors.New("no reader")

// Writer is one output of the process (stdout, stderr, a --csv file).
// Its bytes are written by a goroutine of its own, so that a reader who
// stops reading (a pipe into `less`, a FIFO nobody opened) holds up only
// that goroutine: Write queues and returns, a Write that finds the queue
// full and a Flush both wait only until the output set gives up (a signal
// and its grace time), and Flush no longer than stallAfter on an output
// that takes nothing. Write and Flush may be called from several
// goroutines; Write keeps each call's bytes together and in order.
type Writer struct {
	name    string        // how errors name it: "stdout", "--csv x"
	abandon chan struct{} // closed when the set gives up on its outputs
	// open, if not nil, opens the output in the goroutine: it returns
	// ErrNoReader while a FIFO has no reader. The writer owns and closes
	// what it returns.
	open func() (io.WriteCloser, error)
	dst  io.Writer // where the goroutine writes, once open

	mu      sync.Mutex    // guards the fields below
	queue   [][]byte      // chunks not yet written, the first one being written
	queued  int           // bytes in queue
	lines   int           // newlines in queue
	busy    time.Time     // since when the goroutine waits on the output (a write or a reader); zero when idle
	waiting bool          // the output is a FIFO still waiting for its reader
	err     error         // the first failure; the output takes nothing after it
	closing bool          // finish was called: the goroutine ends once the queue is empty
	changed chan struct{} // closed and replaced whenever a field above changes
	closer  io.Closer     // what open returned, closed by finish
	wake    chan struct{} // (capacity 1) tells the goroutine there is work
	done    chan struct{} // closed when the goroutine has returned
	// stopping, if not nil, is closed when the run stops (outputSet.stop):
	// a Write that finds the queue full no longer waits for room then, so
	// that the rows reach the outputs that still take them.
	stopping <-chan struct{}
	dropped  int // lines Write refused after the stop, for lack of room
	// onFail, if not nil, is told the output's failure, once, from the
	// goroutine: the set stops the run with it.
	onFail   func(error)
	quit     chan struct{} // closed when drain gives up on the output
	quitOnce sync.Once
}

// NewWriter starts an output writing to dst, or, when dst is nil, to
// what open returns; stopping and onFail may be nil (see Writer).
func NewWriter(name string, dst io.Writer, open func() (io.WriteCloser, error), abandon chan struct{},
	stopping <-chan struct{}, onFail func(error)) *Writer {
	w := &Writer{
		name: name, dst: dst, open: open, abandon: abandon, stopping: stopping, onFail: onFail,
		changed: make(chan struct{}), wake: make(chan struct{}, 1), done: make(chan struct{}),
		quit: make(chan struct{}),
	}
	go w.loop()
	return w
}

// Write queues a copy of p for the output. It fails with the output's
// error once it has one, and once the set has given up.
func (w *Writer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for {
		if w.err != nil {
			return 0, w.err
		}
		if w.abandoned() {
			return 0, fmt.Errorf("%s: %s", w.name, w.why())
		}
		if w.queued == 0 || w.queued+len(p) <= queueLimit {
			break
		}
		if w.isStopping() {
			w.dropped += bytes.Count(p, []byte{'\n'})
			return 0, fmt.Errorf("%s: %s", w.name, w.why())
		}
		w.waitOr(nil, w.stopping)
	}
	w.queue = append(w.queue, bytes.Clone(p))
	w.queued += len(p)
	w.lines += bytes.Count(p, []byte{'\n'})
	select {
	case w.wake <- struct{}{}:
	default:
	}
	return len(p), nil
}

// Flush waits until the output has taken every byte queued and returns its
// error, if it has one; but it returns nil at once on an output that has
// taken nothing for stallAfter (the bytes stay queued), and an error once
// the set has given up.
func (w *Writer) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	start := time.Now()
	for w.queued > 0 && w.err == nil {
		if w.abandoned() {
			return fmt.Errorf("%s: %s", w.name, w.why())
		}
		since := start
		if !w.busy.IsZero() && w.busy.Before(start) {
			since = w.busy
		}
		left := stallAfter - time.Since(since)
		if left <= 0 {
			return nil // stalled: the run goes on, the bytes wait
		}
		t := time.NewTimer(left)
		w.wait(t.C)
		t.Stop()
	}
	return w.err
}

// wait releases mu until a field changes, the set gives up, or timer
// fires; mu is held on return.
func (w *Writer) wait(timer <-chan time.Time) { w.waitOr(timer, nil) }

// waitOr is wait that also returns when stop is closed.
func (w *Writer) waitOr(timer <-chan time.Time, stop <-chan struct{}) {
	ch := w.changed
	w.mu.Unlock()
	select {
	case <-ch:
	case <-w.abandon:
	case <-w.quit:
	case <-timer:
	case <-stop:
	}
	w.mu.Lock()
}

// isStopping reports whether the run is stopping.
func (w *Writer) isStopping() bool {
	select {
	case <-w.stopping:
		return true
	default:
		return false
	}
}

// notify tells the waiters that a field changed; mu must be held.
func (w *Writer) notify() {
	close(w.changed)
	w.changed = make(chan struct{})
}

func (w *Writer) abandoned() bool {
	select {
	case <-w.abandon:
		return true
	case <-w.quit:
		return true
	default:
		return false
	}
}

// Name is how errors name the output: "stdout", "--csv x".
func (w *Writer) Name() string { return w.name }

// Why says why the output holds bytes it has not written: no reader
// opened it, or its reader took nothing.
func (w *Writer) Why() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.why()
}

// why is Why with mu held.
func (w *Writer) why() string {
	if w.waiting {
		return "no reader opened it"
	}
	return "its reader took nothing"
}

// loop is the goroutine that writes: it opens the output if it must, then
// writes the queue chunk by chunk until finish or a failure ends it, or the
// set gives up.
func (w *Writer) loop() {
	defer close(w.done)
	if w.open != nil && !w.openOutput() {
		return
	}
	for {
		w.mu.Lock()
		for len(w.queue) == 0 || w.err != nil {
			if w.closing || w.err != nil {
				w.mu.Unlock()
				return
			}
			w.mu.Unlock()
			select {
			case <-w.wake:
			case <-w.abandon:
				return
			case <-w.quit:
				return
			}
			w.mu.Lock()
		}
		chunk := w.queue[0]
		w.busy = time.Now()
		w.mu.Unlock()

		_, err := w.dst.Write(chunk)

		w.mu.Lock()
		w.busy = time.Time{}
		failed := err != nil && w.err == nil
		if failed {
			w.err = fmt.Errorf("%s: %w", w.name, bareError(err))
		} else if err == nil {
			w.queue[0] = nil
			w.queue = w.queue[1:]
			w.queued -= len(chunk)
			w.lines -= bytes.Count(chunk, []byte{'\n'})
		}
		w.notify()
		werr := w.err
		w.mu.Unlock()
		if failed && w.onFail != nil {
			w.onFail(werr)
		}
		if err != nil {
			return
		}
	}
}

// openOutput opens the output, waiting for a FIFO's reader as long as the
// set does not give up. It reports whether the output is open.
func (w *Writer) openOutput() bool {
	w.mu.Lock()
	w.busy, w.waiting = time.Now(), true
	w.notify() // a drain waiting already now bounds its wait
	w.mu.Unlock()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		f, err := w.open()
		if !errors.Is(err, ErrNoReader) {
			w.mu.Lock()
			w.busy, w.waiting = time.Time{}, false
			if err != nil {
				w.err = fmt.Errorf("%s: %w", w.name, bareError(err))
			} else {
				w.dst, w.closer = f, f
			}
			werr := w.err
			w.notify()
			w.mu.Unlock()
			if werr != nil && w.onFail != nil {
				w.onFail(werr)
			}
			return err == nil
		}
		select {
		case <-tick.C:
		case <-w.abandon:
			return false
		case <-w.quit:
			return false
		}
	}
}

// Drain waits until the output has taken every byte queued, failed, or the
// set gives up, and returns what it did not write and its error. A FIFO
// that nobody opened for reading within idle of the call is given up, with
// an error saying so: the same bound as an input FIFO's (boundedfile.Idle).
// A reader that is there but slow (| less on its first page) is waited
// for: a signal gives up on it. The output takes more writes after drain,
// unless it was given up.
func (w *Writer) Drain(idle time.Duration) (unwritten, lines int, err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	deadline := time.Now().Add(idle)
	for w.queued > 0 && w.err == nil && !w.abandoned() {
		var timer <-chan time.Time
		if w.waiting {
			left := time.Until(deadline)
			if left <= 0 {
				w.err = fmt.Errorf("%s: a named pipe that nobody opened for reading within %v (%d lines not written)",
					w.name, idle, w.lines+w.dropped)
				w.quitOnce.Do(func() { close(w.quit) })
				break
			}
			t := time.NewTimer(left)
			defer t.Stop()
			timer = t.C
		}
		w.wait(timer)
	}
	return w.queued, w.lines + w.dropped, w.err
}

// Close ends the goroutine once the queue is empty (or at once if the set
// gave up) and closes the file the writer opened. It returns an error of
// that close.
func (w *Writer) Close() error {
	w.mu.Lock()
	w.closing = true
	w.mu.Unlock()
	select {
	case w.wake <- struct{}{}:
	default:
	}
	select {
	case <-w.done:
	case <-w.abandon:
	case <-w.quit:
	}
	w.mu.Lock()
	closer := w.closer
	w.closer = nil
	w.mu.Unlock()
	if closer == nil {
		return nil
	}
	// A write still blocked on a pipe or FIFO (in the runtime's poller: it
	// was opened non-blocking) ends here.
	if err := closer.Close(); err != nil {
		return fmt.Errorf("%s: %w", w.name, bareError(err))
	}
	return nil
}

// bareError drops the path from a *fs.PathError: the output's name already
// says which file ("--csv x: write: no space left on device").
func bareError(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s: %w", pe.Op, pe.Err)
	}
	return err
}
