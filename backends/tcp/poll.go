package tcp

import (
	"io"
	"net"
	"runtime"
	"syscall"
	"time"
)

// spinBudget is how long a link's reader keeps polling its socket, while a
// receive is waiting on it, before it parks in the runtime's network
// poller. Parking and being woken again costs tens of microseconds on
// virtual machines, more than a small message takes to arrive; polling for
// a bounded time, yielding the CPU between polls, keeps small-message
// latency near the kernel's while still blocking when nothing comes.
var spinBudget = spinFromEnv()

// oversubscribed is set when more ranks share this host than it has CPUs;
// a polling reader then yields the CPU to other processes, not just to
// other goroutines, between polls.
var oversubscribed bool

// pollReader reads from a TCP connection, polling for a while before
// parking when the link has a receive waiting.
type pollReader struct {
	rc      syscall.RawConn
	waiting func() bool // whether a receive is waiting on the link
}

// newPollReader wraps conn, or returns conn itself when it is not a
// system socket (tests over pipes).
func newPollReader(conn net.Conn, waiting func() bool) io.Reader {
	sc, ok := conn.(syscall.Conn)
	if !ok {
		return conn
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return conn
	}
	return &pollReader{rc: rc, waiting: waiting}
}

func (p *pollReader) Read(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	var n int
	var rerr error
	var until time.Time
	err := p.rc.Read(func(fd uintptr) bool {
		for {
			n, rerr = syscall.Read(int(fd), b)
			switch {
			case rerr == syscall.EINTR:
				continue
			case rerr != syscall.EAGAIN:
				return true
			case !p.waiting():
				return false // nobody waits: park until data comes
			}
			now := time.Now()
			if until.IsZero() {
				until = now.Add(spinBudget)
			}
			if now.After(until) {
				return false
			}
			if oversubscribed {
				_ = syscall.Getpid() // a cheap system call lets the kernel schedule others
				runtime.Gosched()
			} else {
				runtime.Gosched()
			}
		}
	})
	if err != nil {
		return 0, err
	}
	if rerr != nil {
		return 0, rerr
	}
	if n == 0 {
		return 0, io.EOF
	}
	return n, nil
}

func spinFromEnv() time.Duration {
	if d, err := time.ParseDuration(getenv("HCCL_TEST_SPIN")); err == nil {
		return d
	}
	return 50 * time.Microsecond
}
