package tcp

import (
	"errors"
	"fmt"
	"io"
	"net"
	"runtime"
	"syscall"
	"time"
	"unsafe"

	"github.com/hccl-test/hccl-test/internal/limits"
)

// spinBudget is how long a link's reader keeps polling its socket, while a
// receive is waiting on it for a new message and no writer of this rank is
// stalled, before it parks in the runtime's network poller, when the host
// has a CPU per rank (else see yieldBudget; 0 turns both off). Parking and
// being woken again costs tens of microseconds on virtual machines, more
// than a small message takes to arrive; polling for a bounded time,
// yielding the CPU between polls, keeps small-message latency near the
// kernel's while still blocking when nothing comes.
var spinBudget, _ = spinFromEnv() // a bad HCCL_TEST_SPIN is refused by CheckConfig

// oversubscribed is set when more ranks share this host than it has CPUs.
// Readers then poll by giving their CPU away between reads (yieldPoll):
// every CPU cycle is some rank's work.
var oversubscribed bool

// yieldBudget is how long a reader on an oversubscribed host keeps polling
// its socket, giving its CPU away between reads, for a message a receive
// waits on, before it parks in the network poller. A rank parked there
// sleeps and must be woken when the message comes (the sender's CPU wakes
// it, and the scheduler switches it in), which costs more than a small
// message: 8 ranks on 2 CPUs ran a 1 KiB allreduce in 250-430 us polling
// for 50 us to 1 ms, 670-1900 us parking at once. Open MPI's ranks poll and
// yield the same way when oversubscribed, without a bound.
const yieldBudget = 200 * time.Microsecond

// pollReader reads from a TCP connection, polling for a while before
// parking when the link has a receive waiting.
type pollReader struct {
	rc syscall.RawConn
	// state reports whether a receive is posted, whether the reader is in
	// the middle of a message, and whether the link has ended (then the
	// reader stops at once: a closed connection's descriptor stays valid
	// while a read holds it, and would only ever say "try again").
	state func() (posted, filling, ended bool)
	// writing reports whether a writer of this rank may be waiting for
	// socket space. Polling is then off: a polling goroutine keeps the
	// scheduler from checking the network poller, which is what would wake
	// that writer.
	writing func() bool
	// credit says whether polling pays (see spinFor); waits counts the
	// waits since it stopped, to try it again now and then.
	credit int
	waits  int

	// fn is p.readFd, bound once: a closure made per Read, with the
	// variables it shares with Read, cost six allocations a read. The
	// fields below are one Read's, shared with fn.
	fn      func(fd uintptr) bool
	b       []byte
	n       int
	rerr    error
	until   time.Time
	last    time.Time
	polling time.Duration // how long this wait polls
	once    bool          // one read attempt, no polling, no parking (errAgain)
}

// errAgain is what a read in once mode returns when no data waits.
var errAgain = errors.New("no data yet")

// preempted is the gap between two polls that says the host ran something
// else in between: one poll (a read and a yield) takes about a microsecond.
const preempted = 10 * time.Microsecond

// probeEvery is how often, in waits, a reader that has stopped polling
// polls again to see whether it pays once more.
const probeEvery = 16

// Polling's credit: an early win adds one, up to maxCredit; a poll that
// runs out, is cut short by the host, or ends with data only in its second
// half takes lostCredit; at zero the reader stops polling until a probe
// wins early, which restores probeCredit.
const (
	maxCredit   = 8
	lostCredit  = 4
	probeCredit = 4
)

// spinFor returns how long to poll for the message now awaited:
// spinBudget while polling pays, else nothing but for a probe every
// probeEvery waits. On a host whose other work keeps the peer from
// running, polls run out, end with data only late, or are cut short by the
// scheduler, and polling only adds to the CPUs' queue: measured over
// loopback with two ranks on a loaded two-CPU host, a fixed 50us made a
// 1 KiB allreduce's median 4 times that of not polling. Where a poll
// rarely loses, as on an idle host, the credit keeps it polling.
func (p *pollReader) spinFor() time.Duration {
	if p.credit > 0 {
		return spinBudget
	}
	p.waits++
	if p.waits%probeEvery == 0 {
		return spinBudget
	}
	return 0
}

// polled records a poll that ran out without data, or was cut short.
func (p *pollReader) polled() {
	p.credit = max(0, p.credit-lostCredit)
}

// won records a poll of d that ended with data, left time before it
// would have run out. Data that came only in the poll's second half
// counts as a poll lost: the wait was mostly the peer not running.
func (p *pollReader) won(left, d time.Duration) {
	switch {
	case left < d/2:
		p.polled()
	case p.credit == 0:
		p.credit, p.waits = probeCredit, 0
	default:
		p.credit = min(maxCredit, p.credit+1)
	}
}

// newPollReader wraps conn, or returns conn itself when it is not a
// system socket (tests over pipes).
func newPollReader(conn net.Conn, state func() (bool, bool, bool), writing func() bool) io.Reader {
	sc, ok := conn.(syscall.Conn)
	if !ok {
		return conn
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return conn
	}
	p := &pollReader{rc: rc, state: state, writing: writing, credit: maxCredit}
	p.fn = p.readFd
	return p
}

func (p *pollReader) Read(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	p.b, p.n, p.rerr, p.until, p.last, p.polling = b, 0, nil, time.Time{}, time.Time{}, 0
	err := p.rc.Read(p.fn)
	n, rerr := p.n, p.rerr
	p.b, p.rerr = nil, nil
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

// readFd is Read's attempt at reading p.b from fd, polling while that
// pays (see Read); it reports false to wait in the network poller.
func (p *pollReader) readFd(fd uintptr) bool {
	if p.once {
		p.n, p.rerr = rawRead(fd, p.b)
		if p.rerr == syscall.EAGAIN || p.rerr == syscall.EINTR {
			p.n, p.rerr = 0, errAgain
		}
		return true
	}
	for {
		p.n, p.rerr = rawRead(fd, p.b)
		if p.rerr == syscall.EINTR {
			continue
		}
		if p.rerr != syscall.EAGAIN {
			if !oversubscribed && !p.until.IsZero() && p.rerr == nil && p.n > 0 {
				p.won(time.Until(p.until), p.polling)
			}
			return true
		}
		posted, filling, ended := p.state()
		switch {
		case ended:
			p.rerr = net.ErrClosed
			return true
		case spinBudget <= 0:
			return false // polling is off (HCCL_TEST_SPIN=0)
		case filling:
			return false // the rest of a message streams in: park
		case !posted:
			// Nobody waits (the link's reader reads only with a receive
			// posted, so only the control connection gets here): park.
			return false
		case p.writing():
			return false
		case oversubscribed:
			if !p.yieldPoll() {
				return false
			}
			continue
		}
		now := time.Now()
		if p.until.IsZero() {
			p.polling = p.spinFor()
			if p.polling <= 0 {
				return false
			}
			p.until = now.Add(p.polling)
		} else if now.Sub(p.last) > preempted {
			// The host took the CPU away mid-poll: other work
			// wants it, and polling only adds to the queue.
			p.polled()
			return false
		}
		if now.After(p.until) {
			p.polled()
			return false
		}
		p.last = now
		runtime.Gosched()
	}
}

// yieldPoll is one turn of polling on an oversubscribed host: it gives the
// CPU to this process's other goroutines (the rank's, once the data it
// waits for is in), then to other processes (the peer may be waiting for
// this CPU to send), and reports false once yieldBudget has passed.
func (p *pollReader) yieldPoll() bool {
	now := time.Now()
	if p.until.IsZero() {
		p.until = now.Add(yieldBudget)
	} else if now.After(p.until) {
		return false
	}
	runtime.Gosched()
	_, _, _ = syscall.RawSyscall(syscall.SYS_SCHED_YIELD, 0, 0, 0)
	return true
}

// maxSpin bounds HCCL_TEST_SPIN: polling longer than a small message
// takes to arrive only burns a CPU.
const maxSpin = 10 * time.Millisecond

// defaultSpin is spinBudget unless HCCL_TEST_SPIN says otherwise. Long
// enough to ride out the gaps a virtual machine's host takes from its CPUs
// (on a 2-CPU VM, 0.5-1 a millisecond, most under 100 us) without parking:
// a parked reader woken when the message lands costs tens of microseconds
// more. 2 ranks, 1 KiB allreduce, 6 interleaved runs: median of the means
// 15.0 us polling 50 us, 13.9 us 500 us, 12.9 us 2 ms; their p99 102, 64
// and 57 us; 1 MiB 4 of 4 pairs faster at 1 ms than at 50 us, 64 MiB no
// slower. Polls that do not pay still stop (spinFor).
const defaultSpin = time.Millisecond

// spinFromEnv reads HCCL_TEST_SPIN (ParseSpin); on an error it returns
// the default too.
func spinFromEnv() (time.Duration, error) { return ParseSpin(getenv(EnvSpin)) }

// EnvSpin is the variable that sets how long a waiting rank polls its
// socket before it sleeps.
const EnvSpin = "HCCL_TEST_SPIN"

// ParseSpin reads a value of EnvSpin: "" is defaultSpin, else a duration
// from 0 (polling off) to maxSpin. It is the one grammar of the value,
// which hccl-test checks whatever the backend.
func ParseSpin(v string) (time.Duration, error) {
	const def = defaultSpin
	if v == "" {
		return def, nil
	}
	d, err := limits.Duration(v, limits.GoDuration, 0)
	if err == nil && d > maxSpin {
		err = fmt.Errorf("%v: more than %v", d, maxSpin)
	}
	if err != nil {
		return def, fmt.Errorf("%s=%q: want 0 to %v: %w", EnvSpin, v, maxSpin, err)
	}
	return d, nil
}

// rawRead reads from a non-blocking socket without telling the runtime it
// is in a system call: the call never blocks, and skipping the runtime's
// bookkeeping keeps its monitor thread from waking to reassign the
// processor, which on an oversubscribed host costs more than the read.
func rawRead(fd uintptr, b []byte) (int, error) {
	n, _, errno := syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)))
	if errno != 0 {
		return 0, errno
	}
	return int(n), nil
}
