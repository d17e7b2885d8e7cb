package tcp

import (
	"net"
	"syscall"
	"unsafe"
)

// rawBigWrites reports whether a large frame is written with raw system
// calls (writevAll) rather than through the runtime's. Only on an
// oversubscribed host: there a write the runtime sees as a system call
// lasting more than its monitor's 20us tick has its processor handed to
// another thread, and the writer's thread then parks to get it back, a
// few context switches for every large message, while no spare CPU exists
// for the handed-off processor to use. Where every rank has a CPU of its
// own, the hand-off lets the rank's reader drain the socket while the
// writer copies.
func rawBigWrites() bool { return oversubscribed }

// writevAll writes hdr then payload to conn as one stream with raw
// writev calls, waiting in the runtime's poller only when the socket
// buffer is full.
func writevAll(conn net.Conn, hdr, payload []byte) error {
	_, err := writevSome(conn, hdr, payload)
	return err
}

// writevSome is writevAll that also returns how many bytes it wrote,
// all of them unless it failed: a write deadline can stop it part way.
func writevSome(conn net.Conn, hdr, payload []byte) (int, error) {
	var rc syscall.RawConn
	sc, ok := conn.(syscall.Conn)
	if ok {
		var err error
		if rc, err = sc.SyscallConn(); err != nil {
			ok = false
		}
	}
	if !ok {
		bufs := net.Buffers{hdr, payload}
		n, err := bufs.WriteTo(conn)
		return int(n), err
	}
	var werr error
	written := 0
	err := rc.Write(func(fd uintptr) bool {
		for len(hdr)+len(payload) > 0 {
			n, e := rawWritev(fd, hdr, payload)
			switch {
			case e == syscall.EINTR:
				continue
			case e == syscall.EAGAIN:
				return false
			case e != nil:
				werr = e
				return true
			}
			written += n
			k := min(n, len(hdr))
			hdr, n = hdr[k:], n-k
			payload = payload[n:]
		}
		return true
	})
	if err != nil {
		return written, err
	}
	return written, werr
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
