package outfile

import (
	"errors"
	"io"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// Open returns the function that opens (or creates) the file at path for
// an output, as NewWriter's open takes it, after calling it once: the
// returned error is that first call's, unless it is ErrNoReader (a FIFO
// that no one has opened for reading yet, which the output's goroutine
// waits for while the run goes on). A regular file is locked (Lock) and
// only then truncated: a file another run writes is refused, not emptied.
func Open(path string) (func() (io.WriteCloser, error), error) {
	open := func() (io.WriteCloser, error) {
		// Not O_TRUNC: a file another run writes is refused, not emptied
		// (Lock), and truncated only once locked.
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|syscall.O_NONBLOCK, 0o666)
		if errors.Is(err, syscall.ENXIO) {
			if fi, serr := os.Stat(path); serr == nil && fi.Mode()&os.ModeNamedPipe != 0 {
				return nil, ErrNoReader
			}
		}
		if err != nil {
			return nil, err
		}
		fi, err := f.Stat()
		if err == nil && fi.Mode().IsRegular() {
			if err = Lock(f); err == nil {
				err = f.Truncate(0)
			}
		}
		if err != nil {
			f.Close()
			return nil, err
		}
		if fi.Mode()&(os.ModeNamedPipe|os.ModeSocket) == 0 {
			f.Fd() // not a pipe: back to blocking writes, as any file
		}
		return f, nil
	}
	f, err := open()
	if err != nil && !errors.Is(err, ErrNoReader) {
		return nil, err
	}
	if err == nil {
		open = func() (io.WriteCloser, error) { return f, nil }
	}
	return open, nil
}

// ErrClosedAtStart is the write error of stdout when it was closed.
var ErrClosedAtStart = errors.New("write: closed when the program started (>/dev/null discards the output)")

// ClosedWriter fails every write with ErrClosedAtStart: stdout, when it
// was closed.
type ClosedWriter struct{}

// Write fails.
func (ClosedWriter) Write([]byte) (int, error) { return 0, ErrClosedAtStart }

// ClosedAtStart reports whether descriptor fd (stdout or stderr) was closed
// when the program started. The Go runtime then opens /dev/null read-write
// in its place, where every write would vanish without an error; a shell's
// >/dev/null opens it write-only, and os/exec's too.
func ClosedAtStart(fd int) bool {
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

// OwnDescriptor returns os.Stdout or os.Stderr as a duplicate descriptor
// of the same file, any other w as it is. Go kills the process with
// SIGPIPE when a write to descriptor 1 or 2 finds the pipe closed; written
// through a duplicate, the write fails with EPIPE instead, and the rows
// still queued for the other outputs reach them.
func OwnDescriptor(w io.Writer) io.Writer {
	f, ok := w.(*os.File)
	if !ok || (f != os.Stdout && f != os.Stderr) {
		return w
	}
	fd, err := unix.FcntlInt(f.Fd(), unix.F_DUPFD_CLOEXEC, 3)
	if err != nil {
		return w
	}
	return os.NewFile(uintptr(fd), f.Name())
}
