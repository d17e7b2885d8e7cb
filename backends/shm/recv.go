package shm

import (
	"context"
	"fmt"
	"runtime"
	"time"

	"github.com/hccl-test/hccl-test/backends"
	"github.com/hccl-test/hccl-test/dtype"
)

// The receiving side of a link: a receive takes a ticket when posted,
// waits for the send of that ticket to be posted (polling, then parked on
// the link's bell), and reads it from its eager slot or the sender's
// buffer.

// recvReq is a receive from another rank of the world.
type recvReq struct {
	e      *endpoint
	peer   int
	l      *link // from peer to e
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
	if err := backends.CheckAccumulator(peer, dst, acc); err != nil {
		return failed{err}
	}
	return e.postRecv(peer, dst, acc, reduce)
}

func (e *endpoint) postRecv(peer int, dst, acc []byte, reduce dtype.ReduceFunc) backends.Request {
	if err := e.check(peer); err != nil {
		return failed{fmt.Errorf("recv from rank %d: %w", peer, err)}
	}
	l := e.links.In(peer)
	r := e.newRecv()
	r.peer, r.l, r.ticket, r.dst, r.acc, r.reduce, r.call = peer, l, l.nextRecv.Add(1)-1, dst, acc, reduce, e.call
	return r
}

// Wait takes the matching send, reads the sender's buffer (or its eager
// copy) into dst (reducing on the way if asked; not at all for a call
// without payload, which both sides' call signatures agree on), and
// releases the sender.
func (r *recvReq) Wait(ctx context.Context) error {
	if r.done {
		return r.err
	}
	r.done = true
	l := r.l
	if err := r.posted(ctx, l); err != nil {
		r.err = fmt.Errorf("recv from rank %d: %w", r.peer, err)
		return r.err
	}
	if slot := l.eagerSlotOf(r.ticket); slot != nil {
		return r.readEager(slot)
	}
	s, err := r.take(l)
	if err != nil {
		r.err = fmt.Errorf("recv from rank %d: %w", r.peer, err)
		return r.err
	}
	if !s.claim() {
		r.err = fmt.Errorf("recv from rank %d: %w: it stopped waiting for its send", r.peer, backends.ErrPeerGone)
		return r.err
	}

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

// posted blocks until the send of r's ticket is posted on l, or l is
// dropped.
func (r *recvReq) posted(ctx context.Context, l *link) error {
	ready := func() bool { return l.sent.Load() > r.ticket || l.down.Load() }
	if r.e.w.spin && !ready() {
		spinUntil(ready)
	}
	for {
		if l.down.Load() {
			return l.droppedErr()
		}
		if l.sent.Load() > r.ticket {
			return nil
		}
		l.waiting.Store(true)
		if ready() {
			// Posted while waiting was being set: the sender may have
			// seen it, and rings at worst a stale token.
			l.waiting.Store(false)
			continue
		}
		select {
		case <-l.bell:
		case <-ctx.Done():
			return backends.ContextError(ctx)
		}
	}
}

// droppedErr returns why l was dropped.
func (l *link) droppedErr() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.dropped
}

// take removes the posted send of r's ticket, which lends its buffer,
// from l's queue.
func (r *recvReq) take(l *link) (*sendReq, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.dropped; err != nil {
		return nil, err
	}
	s, ok := l.sends.take(r.ticket)
	if !ok {
		// Posted (sent counts it), not in a slot, not queued: only a
		// reset between the post and this receive could do it.
		return nil, fmt.Errorf("%w: the send of ticket %d is gone", backends.ErrPeerGone, r.ticket)
	}
	return s, nil
}

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

// Ready implements backends.Readier: the send a receive takes has been
// posted (or the receive is done).
func (r *recvReq) Ready() bool {
	return r.done || r.l.sent.Load() > r.ticket
}

// Describe implements backends.Describer.
func (r *recvReq) Describe() string { return fmt.Sprintf("receive from rank %d", r.peer) }

// Peer implements backends.PeerReporter.
func (r *recvReq) Peer() (int, bool) { return r.peer, false }
