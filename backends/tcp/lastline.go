package tcp

import (
	"bytes"
	"io"
	"strings"
	"sync"
	"time"
)

// lastLine passes a child's output on to w and keeps its last non-empty
// line (up to maxLastLine bytes), so that the parent can say what a rank
// that failed said about it, such as where it was waiting when an op
// timed out.
//
// A line of the program's own ("hccl-test: ...", or a command's, as
// "hccl-test scenario: ...") is held back for up to
// holdLine before it is passed on, and a child that fails takes its last
// such line with it (finish): that line is the child's error, which the
// parent's own one-line error repeats, so a failed run over tcp still
// says what went wrong on one line rather than on one line per rank.
type lastLine struct {
	w     io.Writer
	mu    sync.Mutex // guards the fields below
	line  []byte     // the line being written, not yet passed on
	last  string     // the last complete non-empty line
	held  []byte     // a complete line of the program's, not yet passed on
	timer *time.Timer
	err   error // the first error passing output on
	// keeping: the run is failing, and a held line waits for the child
	// to end, however long that takes (keep).
	keeping bool
}

const (
	maxLastLine = 4 << 10
	// maxHeldLine bounds what a line keeps back before its end arrives;
	// past it the line is passed on as it comes.
	maxHeldLine = 64 << 10
	// holdLine is how long a line of the program's waits to be passed on,
	// in case the child ends with it: a child prints its error right
	// before it exits. A second: on a loaded host a child that failed
	// before rank 0 did took longer than 250 ms to exit (a killed
	// scenario rank's neighbour, 1 of 11 tries), and its line showed.
	holdLine = time.Second
	// programName starts every line the program writes itself, followed
	// by ": " or by a command's name and ": ".
	programName = "hccl-test"
)

// programLine returns the length of the program's name and ": " (or its
// command's name and ": ") that line starts with, or 0 when it is not a
// line of the program's own.
func programLine(line []byte) int {
	rest, ok := bytes.CutPrefix(line, []byte(programName))
	if !ok {
		return 0
	}
	if cmd, ok := bytes.CutPrefix(rest, []byte(" ")); ok {
		n := 0
		for n < len(cmd) && (cmd[n] >= 'a' && cmd[n] <= 'z' || cmd[n] == '-') {
			n++
		}
		if n == 0 {
			return 0
		}
		rest = cmd[n:]
	}
	if !bytes.HasPrefix(rest, []byte(": ")) {
		return 0
	}
	return len(line) - len(rest) + 2
}

func (l *lastLine) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, chunk := range bytes.SplitAfter(p, []byte("\n")) {
		if len(chunk) == 0 {
			continue
		}
		l.line = append(l.line, chunk...)
		if !bytes.HasSuffix(chunk, []byte("\n")) {
			if len(l.line) > maxHeldLine {
				l.passHeld()
				l.pass(l.line)
				l.line = l.line[:0]
			}
			continue
		}
		if s := strings.TrimSpace(string(l.line[:min(len(l.line), maxLastLine)])); s != "" {
			l.last = s
		}
		l.passHeld()
		if programLine(l.line) > 0 {
			l.held = append(l.held[:0], l.line...)
			if !l.keeping {
				l.timer = time.AfterFunc(holdLine, l.release)
			}
		} else {
			l.pass(l.line)
		}
		l.line = l.line[:0]
	}
	return len(p), l.err
}

// release passes on a held line whose child did not end with it.
func (l *lastLine) release() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.keeping {
		l.passHeld()
	}
}

// keep holds the program's line until the child ends (finish), from now
// on: the run is failing, so the line a child prints now is its error,
// which the parent's one line repeats, however long the child then takes
// to exit on a loaded host (past holdLine, a second line showed).
func (l *lastLine) keep() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.keeping = true
	if l.timer != nil {
		l.timer.Stop()
		l.timer = nil
	}
}

// passHeld passes on the held line, if any. l.mu is held.
func (l *lastLine) passHeld() {
	if l.timer != nil {
		l.timer.Stop()
		l.timer = nil
	}
	if len(l.held) > 0 {
		l.pass(l.held)
		l.held = l.held[:0]
	}
}

// pass writes b to w, keeping the first error. l.mu is held.
func (l *lastLine) pass(b []byte) {
	if _, err := l.w.Write(b); err != nil && l.err == nil {
		l.err = err
	}
}

// finish is called once the child has exited and its output is all
// written: a child that failed drops its held line (the parent reports
// it), one that did not passes it on, and a last line without its end is
// passed on either way.
func (l *lastLine) finish(failed bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if failed {
		if l.timer != nil {
			l.timer.Stop()
			l.timer = nil
		}
		l.held = l.held[:0]
	}
	l.passHeld()
	if len(l.line) > 0 {
		l.pass(l.line)
		l.line = l.line[:0]
	}
}

// String returns the last line, without the program's (or its
// command's) name in front.
func (l *lastLine) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.last[programLine([]byte(l.last)):]
}
