package sim

import (
	"context"
	"sync"
	"time"

	"github.com/hccl-test/hccl-test/backends"
	"github.com/hccl-test/hccl-test/dtype"
)

// pair holds the timings of the messages of one ordered pair of ranks that
// are not received yet. shm matches a pair's sends and receives in posting
// order: the k-th receive posted takes the k-th send. So both sides number
// their requests in posting order, and the receive numbered k reads the
// timing of the send numbered k, which was posted before it could complete.
type pair struct {
	mu sync.Mutex // guards the fields below
	// sent and recvd are the next numbers to hand out.
	sent, recvd uint64
	// at holds the timings of posted sends by number, each dropped when
	// its receive completes.
	at map[uint64]timing
}

// newPair returns the pair of two ranks that have not exchanged a
// message yet.
func newPair() *pair { return &pair{at: map[uint64]timing{}} }

// post records the timing of the next send.
func (p *pair) post(t timing) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.at[p.sent] = t
	p.sent++
}

// next numbers the next receive.
func (p *pair) next() uint64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.recvd++
	return p.recvd - 1
}

// take removes and returns the timing of send k.
func (p *pair) take(k uint64) timing {
	p.mu.Lock()
	defer p.mu.Unlock()
	t := p.at[k]
	delete(p.at, k)
	return t
}

// reset drops every timing and starts the numbers again from zero, as shm
// does with its tickets. Neither side may be using the pair.
func (p *pair) reset() {
	p.mu.Lock()
	defer p.mu.Unlock()
	clear(p.at)
	p.sent, p.recvd = 0, 0
}

// shmRequest is what sim uses of a request shm posted.
type shmRequest interface {
	backends.Request
	backends.Describer
	backends.PeerReporter
}

// sendReq is a posted send.
type sendReq struct {
	shmRequest
	e    *endpoint
	left time.Duration // when its last byte has left the port
	pull *pulled       // set where the receiver moves the data
}

// Send implements backends.Transport: the message is booked on its egress
// port now (see the package comment), and shm passes it on.
func (e *endpoint) Send(peer int, buf []byte) backends.Request { return e.SendHeld(peer, buf, 0) }

// SendHeld implements backends.LinkHolder: Send, with the message held
// on its port hold longer than its bytes take.
func (e *endpoint) SendHeld(peer int, buf []byte, hold time.Duration) backends.Request {
	if !e.valid(peer) {
		return e.shmEndpoint.Send(peer, buf)
	}
	var at timing
	if e.f.links.Pull {
		at = e.post(peer, len(buf), max(hold, 0))
	} else {
		at = e.book(peer, len(buf), max(hold, 0))
	}
	e.pairs.Out(peer).post(at) // before shm can match it
	return &sendReq{shmRequest: e.shmEndpoint.Send(peer, buf).(shmRequest), e: e, left: at.left, pull: at.pull}
}

// Wait blocks until the receiver has taken the data, then advances the
// sender's clock to when the data left its port, or where the receiver
// moves it, to when the receiver had taken it.
func (s *sendReq) Wait(ctx context.Context) error {
	err := s.shmRequest.Wait(ctx)
	if err != nil {
		return err
	}
	if s.pull != nil {
		return s.pull.wait(ctx, s.e)
	}
	s.e.advance(s.left)
	return nil
}

// recvReq is a posted receive.
type recvReq struct {
	shmRequest
	e      *endpoint
	p      *pair
	k      uint64        // its number on p
	reduce time.Duration // what reducing the data costs, 0 for a plain receive
	done   bool
}

// Recv implements backends.Transport.
func (e *endpoint) Recv(peer int, buf []byte) backends.Request {
	if !e.valid(peer) {
		return e.shmEndpoint.Recv(peer, buf)
	}
	return e.recv(peer, e.shmEndpoint.Recv(peer, buf), 0)
}

// RecvReduce implements backends.Transport; the reduction costs the
// receiver len(dst)/ReduceGBps of virtual time after the data arrived.
func (e *endpoint) RecvReduce(peer int, dst, acc []byte, reduce dtype.ReduceFunc) backends.Request {
	if !e.valid(peer) || len(acc) < len(dst) {
		return e.shmEndpoint.RecvReduce(peer, dst, acc, reduce)
	}
	return e.recv(peer, e.shmEndpoint.RecvReduce(peer, dst, acc, reduce), e.f.reduceTime(len(dst)))
}

// recv numbers r, a receive from peer that shm posted.
func (e *endpoint) recv(peer int, r backends.Request, reduce time.Duration) backends.Request {
	p := e.pairs.In(peer)
	return &recvReq{shmRequest: r.(shmRequest), e: e, p: p, k: p.next(), reduce: reduce}
}

// Wait completes the receive in shm, then advances the receiver's clock to
// the message's arrival (plus the reduction's time).
func (r *recvReq) Wait(ctx context.Context) error {
	err := r.shmRequest.Wait(ctx)
	if r.done {
		return err
	}
	r.done = true
	at := r.p.take(r.k) // dropped whatever the outcome
	if at.pull != nil {
		if err == nil {
			r.e.take(at.pull, r.reduce)
		}
		at.pull.release(r.e.Now())
		return err
	}
	if err != nil {
		return err
	}
	if idle := at.arrive - r.e.Now(); idle > 0 {
		r.e.waited.Add(int64(idle))
		r.e.advance(at.arrive)
	}
	r.e.advanceBy(r.reduce)
	return nil
}
