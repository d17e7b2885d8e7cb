package sim

import (
	"context"
	"fmt"
	"sync"

	"github.com/hccl-test/hccl-test/backends"
	"github.com/hccl-test/hccl-test/dtype"
)

// queue carries the messages of one ordered pair of ranks. Sends and
// receives each take a ticket in posting order; the receive holding ticket
// k takes the send holding ticket k, which gives MPI's non-overtaking order
// while letting the receiver wait on its requests in any order.
type queue struct {
	mu sync.Mutex // guards the fields below
	// sends holds posted sends not yet taken, by ticket.
	sends map[uint64]*sendReq
	// nextSend and nextRecv are the next tickets to hand out.
	nextSend, nextRecv uint64
	// posted is closed, and replaced, when a send is posted while the
	// receiver is parked on it (waiting).
	posted  chan struct{}
	waiting bool
}

// newQueue returns an empty queue.
func newQueue() *queue {
	return &queue{sends: map[uint64]*sendReq{}, posted: make(chan struct{})}
}

// Send states.
const (
	sendPosted    = iota // waiting for the receiver
	sendTaken            // the receiver is reading the buffer
	sendDone             // the receiver has finished with the buffer
	sendAbandoned        // the sender gave up before the receiver came
)

// sendReq is a posted send.
type sendReq struct {
	e     *endpoint // the sender
	buf   []byte
	peer  int           // destination rank, for errors
	at    timing        // when it leaves and arrives, in virtual time
	mu    sync.Mutex    // guards state and err
	done  chan struct{} // closed when the receiver has finished with buf
	state int
	err   error
	call  backends.Call
}

// Send implements backends.Transport: the message is booked on its egress
// port now (see the package comment) and waits for its receiver.
func (e *endpoint) Send(peer int, buf []byte) backends.Request {
	if err := e.check(peer); err != nil {
		return failed{fmt.Errorf("send to rank %d: %w", peer, err)}
	}
	s := &sendReq{e: e, buf: buf, peer: peer, at: e.book(peer, len(buf)), done: make(chan struct{}), call: e.call}
	q := e.w.queue(e.rank, peer)
	q.mu.Lock()
	q.sends[q.nextSend] = s
	q.nextSend++
	if q.waiting {
		close(q.posted)
		q.posted = make(chan struct{})
		q.waiting = false
	}
	q.mu.Unlock()
	return s
}

// Wait blocks until the receiver has taken the data, then advances the
// sender's clock to when the data left its port.
func (s *sendReq) Wait(ctx context.Context) error {
	select {
	case <-s.done:
		return s.finished()
	case <-ctx.Done():
	}
	s.mu.Lock()
	switch s.state {
	case sendPosted:
		s.state = sendAbandoned
		s.err = fmt.Errorf("send to rank %d: %w", s.peer, backends.ContextError(ctx))
		close(s.done)
		s.mu.Unlock()
		return s.err
	case sendAbandoned:
		s.mu.Unlock()
		return s.err
	}
	s.mu.Unlock()
	// The receiver is copying; that ends without waiting on anyone.
	<-s.done
	return s.finished()
}

// finished returns the outcome of a send whose receiver is done with it,
// advancing the sender's clock if it succeeded.
func (s *sendReq) finished() error {
	if s.err == nil {
		s.e.advance(s.at.left)
	}
	return s.err
}

// finish releases the sender with err.
func (s *sendReq) finish(err error) {
	s.mu.Lock()
	s.state = sendDone
	s.err = err
	s.mu.Unlock()
	close(s.done)
}

// recvReq is a posted receive.
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

// Recv implements backends.Transport.
func (e *endpoint) Recv(peer int, buf []byte) backends.Request {
	return e.postRecv(peer, buf, nil, nil)
}

// RecvReduce implements backends.Transport; the reduction costs the
// receiver len(dst)/ReduceGBps of virtual time after the data arrived.
func (e *endpoint) RecvReduce(peer int, dst, acc []byte, reduce dtype.ReduceFunc) backends.Request {
	if len(acc) < len(dst) {
		return failed{fmt.Errorf("recv-reduce from rank %d: accumulator of %d bytes for %d", peer, len(acc), len(dst))}
	}
	return e.postRecv(peer, dst, acc, reduce)
}

// postRecv takes the next receive ticket from peer.
func (e *endpoint) postRecv(peer int, dst, acc []byte, reduce dtype.ReduceFunc) backends.Request {
	if err := e.check(peer); err != nil {
		return failed{fmt.Errorf("recv from rank %d: %w", peer, err)}
	}
	q := e.w.queue(peer, e.rank)
	q.mu.Lock()
	ticket := q.nextRecv
	q.nextRecv++
	q.mu.Unlock()
	return &recvReq{e: e, peer: peer, ticket: ticket, dst: dst, acc: acc, reduce: reduce, call: e.call}
}

// Wait takes the matching send, delivers its payload, releases the sender,
// and advances the receiver's clock to the message's arrival (plus the
// reduction's time).
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

	if s.call != r.call {
		err = fmt.Errorf("%w: rank %d called %v as op #%d while rank %d called %v as op #%d",
			backends.ErrMismatch, r.peer, s.call, s.call.Seq, r.e.rank, r.call, r.call.Seq)
	} else {
		err = r.deliver(s)
	}
	if err != nil {
		r.err = fmt.Errorf("recv from rank %d: %w", r.peer, err)
		s.finish(fmt.Errorf("send to rank %d: %w", r.e.rank, err))
		return r.err
	}
	s.finish(nil)
	if idle := s.at.arrive - r.e.Now(); idle > 0 {
		r.e.waited.Add(int64(idle))
		r.e.advance(s.at.arrive)
	}
	if r.reduce != nil {
		r.e.advance(r.e.Now() + r.e.w.reduceTime(len(r.dst)))
	}
	return nil
}

// take blocks until the send with r's ticket is posted, and removes it.
func (r *recvReq) take(ctx context.Context) (*sendReq, error) {
	q := r.e.w.queue(r.peer, r.e.rank)
	for {
		q.mu.Lock()
		s, ok := q.sends[r.ticket]
		if ok {
			delete(q.sends, r.ticket)
			q.mu.Unlock()
			return s, nil
		}
		q.waiting = true
		posted := q.posted
		q.mu.Unlock()
		select {
		case <-posted:
		case <-ctx.Done():
			return nil, backends.ContextError(ctx)
		}
	}
}

// failed is a request that failed when it was posted.
type failed struct{ err error }

// Wait implements backends.Request.
func (f failed) Wait(context.Context) error { return f.err }

// Describe implements backends.Describer.
func (s *sendReq) Describe() string { return fmt.Sprintf("send to rank %d", s.peer) }

// Describe implements backends.Describer.
func (r *recvReq) Describe() string { return fmt.Sprintf("receive from rank %d", r.peer) }

// Peer implements backends.PeerReporter.
func (s *sendReq) Peer() (int, bool) { return s.peer, true }

// Peer implements backends.PeerReporter.
func (r *recvReq) Peer() (int, bool) { return r.peer, false }
