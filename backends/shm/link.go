package shm

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hccl-test/hccl-test/backends"
	"github.com/hccl-test/hccl-test/dtype"
)

// link carries the messages of one ordered pair of ranks. Sends and
// receives each take a ticket in posting order; the receive holding ticket k
// takes the send holding ticket k, which gives MPI's non-overtaking order
// while letting the receiver wait on its requests in any order.
type link struct {
	mu sync.Mutex // guards the fields below
	// sends holds posted sends not yet taken, by ticket.
	sends sendQueue
	// nextSend is the next send ticket to hand out.
	nextSend uint64
	// nextRecv is the next receive ticket, taken with an atomic add
	// rather than under mu, which the sender holds while posting: taking
	// it under mu was a third of a small message's contended locking.
	nextRecv atomic.Uint64
	// bell rings (holds a token) when a send is posted, or the link
	// dropped, while the receiver is parked on it (waiting). A ring may
	// be stale: a woken receiver looks again. One channel for the link's
	// life, where closing and replacing one made a channel per wake-up.
	bell    chan struct{}
	waiting bool
	// sendBell rings when a send whose sender is parked on it ends
	// (sendReq.parked): the sender's doorbell, as bell is the receiver's.
	sendBell chan struct{}
	// sent mirrors nextSend for receivers that poll without the lock.
	sent atomic.Uint64
	// dropped, once set (DropLink), fails every send and receive on the
	// link until it is reset (Recover).
	dropped error
	// eager is the sender's side of its eager sends (eager.go), not
	// guarded by mu: only the sending rank's goroutine uses it.
	eager eagerBox
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

// Send states.
const (
	sendPosted    = iota // waiting for the receiver
	sendTaken            // the receiver is reading the buffer
	sendDone             // the receiver has finished with the buffer
	sendAbandoned        // the sender gave up before the receiver came
)

type sendReq struct {
	owner *endpoint // the sending rank's, which reuses it (Release)
	// eager marks a send that holds a copy of the sender's buffer in
	// store and completed when posted (eager.go); its link reuses it.
	eager bool
	store []byte
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
	l := e.w.link(e.rank, peer)
	var req backends.Request
	var s *sendReq
	if e.eagerOK(buf) {
		s = e.eagerSend(l, peer, buf)
		req = &l.eager.sent
	}
	if s == nil {
		s = e.newSend()
		s.buf, s.peer, s.spin, s.call, s.bell = buf, peer, e.w.spin, e.call, l.sendBell
		req = s
	}
	l.mu.Lock()
	if err := l.dropped; err != nil {
		// Failed as a request of its own kind, which says what it was.
		l.mu.Unlock()
		s.endLocked(sendAbandoned, fmt.Errorf("send to rank %d: %w", peer, err)) // not yet shared
		if s.eager {
			// Its copy is ended and so free again; the caller gets a
			// failed send of its own.
			f := e.newSend()
			f.peer = peer
			f.endLocked(sendAbandoned, s.err)
			return f
		}
		return s
	}
	l.sends.push(s)
	l.nextSend++
	l.sent.Store(l.nextSend)
	if l.waiting {
		l.waiting = false
		ring(l.bell)
	}
	l.mu.Unlock()
	return req
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

type recvReq struct {
	e      *endpoint
	peer   int
	ticket uint64
	dst    []byte
	acc    []byte
	reduce dtype.ReduceFunc // nil for a plain receive
	call   backends.Call
	done   bool
	err    error
}

func (e *endpoint) Recv(peer int, buf []byte) backends.Request {
	return e.postRecv(peer, buf, nil, nil)
}

func (e *endpoint) RecvReduce(peer int, dst, acc []byte, reduce dtype.ReduceFunc) backends.Request {
	if len(acc) < len(dst) {
		return failed{fmt.Errorf("recv-reduce from rank %d: accumulator of %d bytes for %d", peer, len(acc), len(dst))}
	}
	return e.postRecv(peer, dst, acc, reduce)
}

func (e *endpoint) postRecv(peer int, dst, acc []byte, reduce dtype.ReduceFunc) backends.Request {
	if err := e.check(peer); err != nil {
		return failed{fmt.Errorf("recv from rank %d: %w", peer, err)}
	}
	l := e.w.link(peer, e.rank)
	r := e.newRecv()
	r.peer, r.ticket, r.dst, r.acc, r.reduce, r.call = peer, l.nextRecv.Add(1)-1, dst, acc, reduce, e.call
	return r
}

// Wait takes the matching send, reads the sender's buffer into dst (reducing
// on the way if asked; not at all for a call without payload, which both
// sides' call signatures agree on), and releases the sender.
func (r *recvReq) Wait(ctx context.Context) error {
	if r.done {
		return r.err
	}
	r.done = true
	s, err := r.take(ctx)
	if err != nil {
		r.err = fmt.Errorf("recv from rank %d: %w", r.peer, err)
		return r.err
	}
	s.mu.Lock()
	if s.state == sendAbandoned {
		s.mu.Unlock()
		r.err = fmt.Errorf("recv from rank %d: %w: it stopped waiting for its send", r.peer, backends.ErrPeerGone)
		return r.err
	}
	s.state = sendTaken
	s.mu.Unlock()

	if !s.call.Same(r.call) {
		err := fmt.Errorf("%w: rank %d called %v as op #%d while rank %d called %v as op #%d",
			backends.ErrMismatch, r.peer, s.call, s.call.Seq, r.e.rank, r.call, r.call.Seq)
		r.err = fmt.Errorf("recv from rank %d: %w", r.peer, err)
		s.finish(fmt.Errorf("send to rank %d: %w", r.e.rank, err))
		return r.err
	}
	if len(s.buf) != len(r.dst) {
		err := fmt.Errorf("%w: rank %d sent %d bytes, rank %d expected %d",
			backends.ErrMismatch, r.peer, len(s.buf), r.e.rank, len(r.dst))
		r.err = fmt.Errorf("recv from rank %d: %w", r.peer, err)
		s.finish(fmt.Errorf("send to rank %d: %w", r.e.rank, err))
		return r.err
	}
	switch {
	case r.call.NoPayload:
		// Lengths only (backends.Call.NoPayload): neither buffer is touched.
	case r.reduce != nil:
		r.reduce(r.dst, r.acc[:len(r.dst)], s.buf)
	default:
		copy(r.dst, s.buf)
	}
	s.finish(nil)
	return nil
}

// take blocks until the send with r's ticket is posted, and removes it.
func (r *recvReq) take(ctx context.Context) (*sendReq, error) {
	l := r.e.w.link(r.peer, r.e.rank)
	if r.e.w.spin {
		spinUntil(func() bool { return l.sent.Load() > r.ticket })
	}
	for {
		l.mu.Lock()
		if err := l.dropped; err != nil {
			l.mu.Unlock()
			return nil, err
		}
		s, ok := l.sends.take(r.ticket)
		if ok {
			l.mu.Unlock()
			return s, nil
		}
		l.waiting = true
		l.mu.Unlock()
		select {
		case <-l.bell:
		case <-ctx.Done():
			return nil, backends.ContextError(ctx)
		}
	}
}

func (s *sendReq) finish(err error) {
	s.mu.Lock()
	s.endLocked(sendDone, err)
	s.mu.Unlock()
}

// failed is a request that failed when it was posted.
type failed struct{ err error }

func (f failed) Wait(context.Context) error { return f.err }

// spinBudget is how long a waiting rank polls, yielding between polls,
// before it parks on a channel. Parking and being woken costs several
// microseconds on virtual machines, more than a small message takes from a
// rank running on another processor; polling briefly keeps small-message
// latency near the cost of the copy. Ranks poll only when there are no more
// of them than processors, so polling never takes a processor from the rank
// being waited for.
const spinBudget = 20 * time.Microsecond

// spinUntil polls done, yielding the processor between polls, until it
// reports true or spinBudget has passed. (Polling without yielding, with
// or without the PAUSE instruction, measured no faster.) The clock is read
// every spinCheck polls, first after spinCheck of them: a wait that ends
// within a few polls, as most small messages' do, reads it never, where a
// reading costs 30-90 ns on virtual machines. The budget so starts that
// many polls late.
func spinUntil(done func() bool) {
	var start time.Time
	for i := 1; ; i++ {
		if done() {
			return
		}
		if i%spinCheck == 0 {
			if i == spinCheck {
				start = time.Now()
			} else if time.Since(start) > spinBudget {
				return
			}
		}
		runtime.Gosched()
	}
}

// spinCheck is how many polls spinUntil makes between readings of the
// clock.
const spinCheck = 16

// ReadsSenderBuffer implements backends.DirectReader: a receiver copies or
// reduces straight out of the sender's buffer (out of its copy, for the
// eager sends of at most EagerBytes).
func (e *endpoint) ReadsSenderBuffer() bool { return true }

// Ready implements backends.Readier: the receiver has finished with the
// send.
func (s *sendReq) Ready() bool { return s.fin.Load() }

// Ready implements backends.Readier: the send a receive takes has been
// posted (or the receive is done).
func (r *recvReq) Ready() bool {
	return r.done || r.e.w.link(r.peer, r.e.rank).sent.Load() > r.ticket
}

// Describe implements backends.Describer.
func (s *sendReq) Describe() string { return fmt.Sprintf("send to rank %d", s.peer) }

// Describe implements backends.Describer.
func (r *recvReq) Describe() string { return fmt.Sprintf("receive from rank %d", r.peer) }

// Peer implements backends.PeerReporter.
func (s *sendReq) Peer() (int, bool) { return s.peer, true }

// Peer implements backends.PeerReporter.
func (r *recvReq) Peer() (int, bool) { return r.peer, false }
