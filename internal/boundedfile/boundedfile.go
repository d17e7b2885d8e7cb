// Package boundedfile reads the files a user names on the command line
// (scenario files, results to compare or plot) so that no file can exhaust
// memory or make the tool wait forever, whatever it is: a regular file, a
// device such as /dev/zero, a named pipe, /dev/stdin or a terminal.
//
// Every read stops at a limit the caller gives, with an error naming the
// file and the limit. A directory is refused by name. A named pipe that no
// one opens for writing, or a pipe or device that stops sending, fails after
// Idle; a terminal is left to the person typing (Ctrl-C ends the wait).
package boundedfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/term"
)

// Idle is how long Open waits for a writer to open a named pipe, and how
// long a read of a pipe or pollable device waits for its next bytes, before
// failing. A file written by a command started at the same time
// (hccl-test plot <(ssh host cat run.csv)) has that long to start.
const Idle = 10 * time.Second

// LimitError is the error of a file larger than the limit it was read with.
type LimitError struct {
	Path  string
	Limit int64
	// Size is the file's size when it is a regular file, else -1: a device
	// or a pipe is read up to the limit, and the error says only that it
	// went past it.
	Size int64
}

func (e *LimitError) Error() string {
	if e.Size >= 0 {
		size, limit := humanBytes(e.Size), humanBytes(e.Limit)
		if size == limit { // just over
			size, limit = fmt.Sprintf("%d bytes", e.Size), fmt.Sprintf("%s (%d bytes)", limit, e.Limit)
		}
		return fmt.Sprintf("%s: %s, larger than the limit of %s for this file", e.Path, size, limit)
	}
	return fmt.Sprintf("%s: more than the limit of %s for this file, and not at its end (a device or a pipe that does not end?)",
		e.Path, humanBytes(e.Limit))
}

// File is a file opened by Open: a reader that fails past its limit and
// when its bytes stop coming. It is not safe for concurrent use.
type File struct {
	f     *os.File
	path  string
	limit int64
	size  int64 // the size of a regular file; -1 otherwise
	read  int64 // bytes returned so far
	lines int   // newlines returned so far
	col   int64 // bytes returned since the last newline
	// maxLine is the most bytes a line may hold (SetMaxLine); 0 for any.
	maxLine int64
	err     error // the first error Read returned other than io.EOF
	idle    time.Duration
	// deadline says whether reads of f take a deadline: pipes and pollable
	// devices other than terminals.
	deadline bool
}

// Open opens path for reading at most limit bytes. It refuses a directory
// and, at once, a regular file larger than limit; it waits at most Idle for
// a writer of a named pipe. Errors name path.
func Open(path string, limit int64) (*File, error) {
	return open(path, limit, Idle)
}

// OpenStream opens path as Open does, for a reader whose memory does not
// grow with the bytes it reads: a regular file is read to its end
// whatever its size (it ends), and limit holds only for a pipe or a
// device, which may never end. With SetMaxLine, no line can hold the
// reader's memory either.
func OpenStream(path string, limit int64) (*File, error) {
	f, err := open(path, math.MaxInt64-1, Idle)
	if err != nil || f.size < 0 {
		if f != nil {
			f.limit = limit
		}
		return f, err
	}
	return f, nil
}

// LineError is the error of a line longer than the most SetMaxLine allows.
type LineError struct {
	Path string
	Line int   // from 1
	Max  int64 // bytes
}

func (e *LineError) Error() string {
	return fmt.Sprintf("%s:%d: a line longer than %s", e.Path, e.Line, humanBytes(e.Max))
}

// SetMaxLine makes Read fail with a *LineError when a line holds more
// than max bytes before its newline; 0 (the default) is no limit.
func (f *File) SetMaxLine(max int64) { f.maxLine = max }

func open(path string, limit int64, idle time.Duration) (*File, error) {
	st, err := os.Stat(path)
	if pe, ok := err.(*fs.PathError); ok {
		pe.Op = "open" // as os.Open says it: "open x: no such file or directory"
		return nil, pe
	} else if err != nil {
		return nil, err
	}
	size := int64(-1)
	switch {
	case st.IsDir():
		return nil, fmt.Errorf("%s: is a directory, not a file", path)
	case st.Mode().IsRegular():
		size = st.Size()
		if size > limit {
			return nil, &LimitError{Path: path, Limit: limit, Size: size}
		}
	}
	var f *os.File
	if st.Mode()&os.ModeNamedPipe != 0 {
		f, err = openPipe(path, idle)
	} else {
		f, err = os.Open(path)
	}
	if err != nil {
		return nil, err
	}
	bf := &File{f: f, path: path, limit: limit, size: size, idle: idle}
	// A regular file or a device without a poller refuses deadlines; a
	// terminal takes them, but a person typing is not a stalled pipe.
	if size < 0 && !isTerminal(f) {
		bf.deadline = f.SetReadDeadline(time.Time{}) == nil
	}
	return bf, nil
}

// isTerminal reports whether f is a terminal. It does not call f.Fd,
// which would put f in blocking mode, where deadlines do nothing.
func isTerminal(f *os.File) bool {
	rc, err := f.SyscallConn()
	if err != nil {
		return false
	}
	is := false
	_ = rc.Control(func(fd uintptr) { is = term.IsTerminal(int(fd)) })
	return is
}

// openPipe opens a named pipe for reading, which blocks until a writer
// opens it too, waiting at most idle. When no writer came, it opens the
// pipe for writing itself (which does not block: a reader is waiting) to
// release the blocked open, and refuses the file.
func openPipe(path string, idle time.Duration) (*os.File, error) {
	type opened struct {
		f   *os.File
		err error
	}
	done := make(chan opened, 1)
	go func() {
		f, err := os.Open(path)
		done <- opened{f, err}
	}()
	timer := time.NewTimer(idle)
	defer timer.Stop()
	select {
	case o := <-done:
		return o.f, o.err
	case <-timer.C:
	}
	if w, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
		w.Close()
	}
	select {
	case o := <-done:
		if o.f != nil {
			o.f.Close()
		}
	case <-time.After(time.Second):
		// The open still blocks; its goroutine ends with the process.
	}
	return nil, fmt.Errorf("%s: a named pipe that nobody opened for writing within %v", path, idle)
}

// Read reads from the file. Past the file's limit it returns a
// *LimitError; when a pipe or device sends nothing for Idle, an error
// saying so.
func (f *File) Read(p []byte) (int, error) {
	// One byte more than the limit tells a file of exactly the limit from
	// a longer one.
	if room := f.limit + 1 - f.read; int64(len(p)) > room {
		p = p[:room]
	}
	var le *LineError
	if errors.As(f.err, &le) {
		return 0, f.err
	}
	if len(p) == 0 {
		if f.err == nil {
			f.err = &LimitError{Path: f.path, Limit: f.limit, Size: f.sizeSeen()}
		}
		return 0, f.err
	}
	if f.deadline {
		_ = f.f.SetReadDeadline(time.Now().Add(f.idle))
	}
	n, err := f.f.Read(p)
	if f.read+int64(n) > f.limit {
		n = int(f.limit - f.read)
		err = &LimitError{Path: f.path, Limit: f.limit, Size: f.sizeSeen()}
	}
	for i, c := range p[:n] {
		if c == '\n' {
			f.lines++
			f.col = 0
			continue
		}
		if f.col++; f.maxLine > 0 && f.col > f.maxLine {
			// The line's bytes up to the most are returned, and the
			// error from now on.
			n, err = i, &LineError{Path: f.path, Line: f.lines + 1, Max: f.maxLine}
			break
		}
	}
	f.read += int64(n)
	if errors.Is(err, os.ErrDeadlineExceeded) {
		err = fmt.Errorf("%s: nothing more to read for %v (a pipe or device that stopped sending?)", f.path, f.idle)
	}
	if err != nil && err != io.EOF && f.err == nil {
		f.err = err
	}
	return n, err
}

// Err returns the first error that Read returned other than io.EOF: the
// file's own failure (past the limit, stalled), which a parser reading
// through it may have reported in words of its own, or not at all.
func (f *File) Err() error { return f.err }

// sizeSeen is the size a LimitError reports: the regular file's size as
// it is now (it may have grown since Open), or -1.
func (f *File) sizeSeen() int64 {
	if f.size < 0 {
		return -1
	}
	if st, err := f.f.Stat(); err == nil {
		return max(st.Size(), f.limit+1)
	}
	return f.limit + 1
}

// Line is the number, from 1, of the line that the next byte read belongs
// to: the newlines read so far plus one. A reader that reads ahead of what
// it has parsed (bufio.Scanner) has parsed less; when such a reader fails
// because a line is too long for its buffer, every line before the long
// one has been read, and the long one's bytes so far hold no newline, so
// Line is the long line's number.
func (f *File) Line() int { return f.lines + 1 }

// Path is the path the file was opened by.
func (f *File) Path() string { return f.path }

// Close closes the file.
func (f *File) Close() error { return f.f.Close() }

// ReadFile reads the whole file at path, at most limit bytes, as Open does.
func ReadFile(path string, limit int64) ([]byte, error) {
	f, err := Open(path, limit)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.readAll()
}

// ReadAll reads f to its end (at most its limit, each line at most what
// SetMaxLine allows): the first error ends it, before the rest is read.
func (f *File) ReadAll() ([]byte, error) { return f.readAll() }

// readAll reads f to its end.
func (f *File) readAll() ([]byte, error) {
	var buf []byte
	if f.size >= 0 {
		buf = make([]byte, 0, f.size+1)
	}
	for {
		if len(buf) == cap(buf) {
			// Doubling, but never past the limit and the one byte that
			// tells a longer file: append's growth could take twice the
			// limit for a device that fills it.
			grown := make([]byte, len(buf), min(max(2*cap(buf), 4096), int(f.limit+1)))
			copy(grown, buf)
			buf = grown
		}
		n, err := f.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// humanBytes writes n in the largest binary unit that keeps it at least 1,
// whole or to one decimal: "1 MiB", "64 MiB", "2.5 GiB".
func humanBytes(n int64) string {
	units := []string{"bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
	v, i := float64(n), 0
	for v >= 1024 && i < len(units)-1 {
		v, i = v/1024, i+1
	}
	return strings.TrimSuffix(strconv.FormatFloat(v, 'f', 1, 64), ".0") + " " + units[i]
}
