package shm

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/cpu"

	"github.com/hccl-test/hccl-test/backends"
)

// link carries the messages of one ordered pair of ranks. Sends and
// receives each take a ticket in posting order; the receive holding ticket k
// takes the send holding ticket k, which gives MPI's non-overtaking order
// while letting the receiver wait on its requests in any order. A send is
// eager (its copy in the link's slots, eager.go) or lends its buffer (a
// sendReq in the link's queue).
type link struct {
	mu sync.Mutex // guards sends and dropped
	// sends holds posted sends that lend their buffers, not yet taken,
	// with their tickets.
	sends sendQueue
	// dropped, once set (DropLink), fails every send and receive on the
	// link until it is reset (Recover); down mirrors it for those that
	// look without the lock.
	dropped error
	down    atomic.Bool
	// bell rings (holds a token) when a send is posted, or the link
	// dropped, while the receiver is parked on it (waiting). A ring may
	// be stale: a woken receiver looks again. One channel for the link's
	// life, where closing and replacing one made a channel per wake-up.
	// The receiver sets waiting, then looks at sent; a sender sets sent,
	// then looks at waiting: one of them sees the other's write.
	bell chan struct{}
	// sendBell rings when a send whose sender is parked on it ends
	// (sendReq.parked): the sender's doorbell, as bell is the receiver's.
	sendBell chan struct{}

	// What the sender writes, on a cache line of its own, which moves to
	// the receiver's processor once a message: the receiver's writes
	// below do not take it back.
	_ cpu.CacheLinePad
	// nextSend is the next send ticket to hand out. Only the sending
	// rank's goroutine uses it (and reset, when neither rank uses the
	// link).
	nextSend uint64
	// sent is the number of sends posted, eager or not: the receive of
	// ticket t waits for sent > t.
	sent atomic.Uint64
	// slots holds the eager sends' copies (eager.go), nil until the
	// first; eagerReq is the request every eager send returns.
	slots    atomic.Pointer[eagerRing]
	eagerReq eagerSent

	// What the receiver writes.
	_ cpu.CacheLinePad
	// nextRecv is the next receive ticket, taken with an atomic add
	// rather than under mu, which the sender holds while posting: taking
	// it under mu was a third of a small message's contended locking.
	nextRecv atomic.Uint64
	waiting  atomic.Bool
	_        cpu.CacheLinePad
}

func newLink() *link {
	return &link{bell: make(chan struct{}, 1), sendBell: make(chan struct{}, 1)}
}

// ring leaves a token in bell unless one is there already.
func ring(bell chan struct{}) {
	select {
	case bell <- struct{}{}:
	default:
	}
}

// post publishes that sent sends have been posted, waking a receiver
// parked on the link.
func (l *link) post(sent uint64) {
	l.sent.Store(sent)
	l.wake()
}

// wake rings the receiver's bell if it is parked, or about to park.
func (l *link) wake() {
	if l.waiting.Load() && l.waiting.CompareAndSwap(true, false) {
		ring(l.bell)
	}
}

// Send states.
const (
	sendPosted    = iota // waiting for the receiver
	sendTaken            // the receiver is reading the buffer
	sendDone             // the receiver has finished with the buffer
	sendAbandoned        // the sender gave up before the receiver came
)

type sendReq struct {
	owner *endpoint // the sending rank's, which reuses it (Release)
	buf   []byte
	peer  int        // destination rank, for errors
	mu    sync.Mutex // guards state, err and done
	// fin is set, after state and err, when the send has ended (sendDone
	// or sendAbandoned): a sender polling it reads err without the lock.
	fin atomic.Bool
	// parked is set while the sender waits on bell (its link's sendBell),
	// which the send's end then rings. A channel per send, closed at its
	// end, was a tenth of a small message's cost.
	parked bool
	bell   chan struct{}
	state  int
	err    error
	spin   bool // poll before parking (World.spin)
	call   backends.Call
}

// endLocked ends the send in state (sendDone or sendAbandoned) with err,
// waking a parked sender. s.mu must be held.
//
// Once fin is set the sender may reuse s (endpoint.Release), so nothing
// after it touches s's fields: only the lock, which the caller unlocks.
func (s *sendReq) endLocked(state int, err error) {
	s.state, s.err = state, err
	parked, bell := s.parked, s.bell
	s.parked = false
	s.fin.Store(true)
	if parked {
		ring(bell)
	}
}

func (e *endpoint) Send(peer int, buf []byte) backends.Request {
	if err := e.check(peer); err != nil {
		return failed{fmt.Errorf("send to rank %d: %w", peer, err)}
	}
	l := e.links.Out(peer)
	if e.eagerOK(buf) {
		if req := e.eagerSend(l, peer, buf); req != nil {
			return req
		}
	}
	s := e.newSend()
	s.buf, s.peer, s.spin, s.call, s.bell = buf, peer, e.w.spin, e.call, l.sendBell
	l.mu.Lock()
	if err := l.dropped; err != nil {
		l.mu.Unlock()
		s.endLocked(sendAbandoned, fmt.Errorf("send to rank %d: %w", peer, err)) // not yet shared
		return s
	}
	l.sends.push(l.nextSend, s)
	l.nextSend++
	l.sent.Store(l.nextSend)
	l.mu.Unlock()
	l.wake()
	return s
}

// Wait blocks until the receiver has read buf.
func (s *sendReq) Wait(ctx context.Context) error {
	if s.spin {
		spinUntil(s.fin.Load)
	}
	for !s.park() {
		select {
		case <-s.bell:
		case <-ctx.Done():
			s.mu.Lock()
			if s.state == sendPosted {
				s.endLocked(sendAbandoned, fmt.Errorf("send to rank %d: %w", s.peer, backends.ContextError(ctx)))
			}
			s.mu.Unlock()
			// Ended, or the receiver is copying, which ends without
			// waiting on anyone.
			for !s.park() {
				<-s.bell
			}
			return s.err
		}
	}
	return s.err
}

// park reports whether the send has ended; if not, it marks the sender
// parked, so that the end rings its bell.
func (s *sendReq) park() bool {
	if s.fin.Load() {
		return true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fin.Load() {
		return true
	}
	s.parked = true
	return false
}

// claim marks s, just taken from its link's queue, as being read by its
// receiver; false if its sender abandoned it first.
func (s *sendReq) claim() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state == sendAbandoned {
		return false
	}
	s.state = sendTaken
	return true
}

// finish ends a send its receiver has read (or refused, with err).
func (s *sendReq) finish(err error) {
	s.mu.Lock()
	s.endLocked(sendDone, err)
	s.mu.Unlock()
}

// failed is a request that failed when it was posted.
type failed struct{ err error }

func (f failed) Wait(context.Context) error { return f.err }

// ReadsSenderBuffer implements backends.DirectReader: a receiver copies or
// reduces straight out of the sender's buffer (out of its copy, for the
// eager sends of at most EagerBytes).
func (e *endpoint) ReadsSenderBuffer() bool { return true }

// Ready implements backends.Readier: the receiver has finished with the
// send.
func (s *sendReq) Ready() bool { return s.fin.Load() }

// Describe implements backends.Describer.
func (s *sendReq) Describe() string { return fmt.Sprintf("send to rank %d", s.peer) }

// Peer implements backends.PeerReporter.
func (s *sendReq) Peer() (int, bool) { return s.peer, true }
