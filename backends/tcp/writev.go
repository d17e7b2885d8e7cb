package tcp

import (
	"net"
	"syscall"
	"unsafe"
)

// writevAll writes hdr then payload to conn as one stream with raw
// writev calls, waiting in the runtime's poller only when the socket
// buffer is full.
func writevAll(conn net.Conn, hdr, payload []byte) error {
	return newRawWriter(conn).writev(hdr, payload)
}

// rawWriter writes to one connection with raw writev calls (writevAll).
// It is made once per connection: asking the connection for its RawConn
// and making the closure that RawConn.Write runs, with the variables it
// shares, cost five allocations a message. Used by one writer at a time.
type rawWriter struct {
	conn net.Conn
	rc   syscall.RawConn // nil when conn is not a system socket
	fn   func(fd uintptr) bool
	// One write's: what is left to write, and its error.
	hdr, payload []byte
	werr         error
	written      int
}

func newRawWriter(conn net.Conn) *rawWriter {
	w := &rawWriter{conn: conn}
	if sc, ok := conn.(syscall.Conn); ok {
		if rc, err := sc.SyscallConn(); err == nil {
			w.rc = rc
		}
	}
	w.fn = w.writeFd
	return w
}

// writev writes hdr then payload as one stream.
func (w *rawWriter) writev(hdr, payload []byte) error {
	_, err := w.writevSome(hdr, payload)
	return err
}

// writevSome is writev that also returns how many bytes it wrote, all of
// them unless it failed: a write deadline can stop it part way.
func (w *rawWriter) writevSome(hdr, payload []byte) (int, error) {
	if w.rc == nil {
		bufs := net.Buffers{hdr, payload}
		n, err := bufs.WriteTo(w.conn)
		return int(n), err
	}
	w.hdr, w.payload, w.werr, w.written = hdr, payload, nil, 0
	err := w.rc.Write(w.fn)
	werr, written := w.werr, w.written
	w.hdr, w.payload, w.werr = nil, nil, nil
	if err != nil {
		return written, err
	}
	return written, werr
}

// writeFd writes what is left of the message to fd; it reports false to
// wait in the network poller for socket space.
func (w *rawWriter) writeFd(fd uintptr) bool {
	for len(w.hdr)+len(w.payload) > 0 {
		n, e := rawWritev(fd, w.hdr, w.payload)
		switch {
		case e == syscall.EINTR:
			continue
		case e == syscall.EAGAIN:
			return false
		case e != nil:
			w.werr = e
			return true
		}
		w.written += n
		k := min(n, len(w.hdr))
		w.hdr, n = w.hdr[k:], n-k
		w.payload = w.payload[n:]
	}
	return true
}

// rawWritev is writev(2) of a and b (either may be empty, not both)
// without the runtime's system call bookkeeping (see rawRead).
func rawWritev(fd uintptr, a, b []byte) (int, error) {
	var iov [2]syscall.Iovec
	k := 0
	for _, p := range [][]byte{a, b} {
		if len(p) > 0 {
			iov[k].Base = &p[0]
			iov[k].SetLen(len(p))
			k++
		}
	}
	n, _, errno := syscall.RawSyscall(syscall.SYS_WRITEV, fd, uintptr(unsafe.Pointer(&iov[0])), uintptr(k))
	if errno != 0 {
		return 0, errno
	}
	return int(n), nil
}
