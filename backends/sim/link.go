package sim

import (
	"context"
	"sync"
	"time"

	"github.com/hccl-test/hccl-test/backends"
	"github.com/hccl-test/hccl-test/dtype"
	"github.com/hccl-test/hccl-test/internal/freelist"
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
	// at holds the timings of posted sends from number base on, in
	// order, from index head: a queue, as receives mostly complete in
	// order, each slot freed when its receive completes (a map, with an
	// entry made and deleted per message, cost the simulator's messages
	// a tenth of their time).
	at   []slot
	head int
	base uint64
}

// slot is the timing of one posted send, and whether its receive has
// taken it.
type slot struct {
	t     timing
	taken bool
}

// newPair returns the pair of two ranks that have not exchanged a
// message yet.
func newPair() *pair { return &pair{} }

// post records the timing of the next send.
func (p *pair) post(t timing) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.head == len(p.at) {
		// Every slot was taken: start over at the front.
		p.at, p.base, p.head = p.at[:0], p.sent, 0
	} else if p.head > 0 && p.head >= len(p.at)/2 && len(p.at) == cap(p.at) {
		// Half the slots are taken: move the rest down rather than grow.
		n := copy(p.at, p.at[p.head:])
		clear(p.at[n:])
		p.at, p.base, p.head = p.at[:n], p.base+uint64(p.head), 0
	}
	p.at = append(p.at, slot{t: t})
	p.sent++
}

// next numbers the next receive.
func (p *pair) next() uint64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.recvd++
	return p.recvd - 1
}

// take removes and returns the timing of send k; the zero timing if send
// k was never posted (its receive failed first).
func (p *pair) take(k uint64) timing {
	p.mu.Lock()
	defer p.mu.Unlock()
	if k < p.base {
		return timing{}
	}
	i := int(k - p.base)
	if i < p.head || i >= len(p.at) || p.at[i].taken {
		return timing{}
	}
	t := p.at[i].t
	p.at[i] = slot{taken: true}
	for p.head < len(p.at) && p.at[p.head].taken {
		p.head++
	}
	return t
}

// reset drops every timing and starts the numbers again from zero, as shm
// does with its tickets. Neither side may be using the pair.
func (p *pair) reset() {
	p.mu.Lock()
	defer p.mu.Unlock()
	clear(p.at)
	p.at, p.head, p.base = p.at[:0], 0, 0
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
	s := freelist.Pop(&e.freeSends)
	if s == nil {
		s = &sendReq{e: e}
	}
	s.shmRequest, s.left, s.pull = e.shmEndpoint.Send(peer, buf).(shmRequest), at.left, at.pull
	return s
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
	q := freelist.Pop(&e.freeRecvs)
	if q == nil {
		q = &recvReq{e: e}
	}
	q.shmRequest, q.p, q.k, q.reduce, q.done = r.(shmRequest), p, p.next(), reduce, false
	return q
}

// poolCap is how many free requests of each kind an endpoint keeps, as
// shm's endpoints do: more than any algorithm waits on at once.
const poolCap = 64

// Release implements backends.Releaser: shm takes back its request, and
// sim's around it is kept for the rank's next message. The caller is done
// with the request (it waited on it, once); nothing else holds sim's.
func (e *endpoint) Release(req backends.Request) {
	switch r := req.(type) {
	case *sendReq:
		if r.e != e || r.shmRequest == nil {
			return
		}
		e.shmEndpoint.Release(r.shmRequest)
		r.shmRequest, r.pull = nil, nil
		if len(e.freeSends) < poolCap {
			e.freeSends = append(e.freeSends, r)
		}
	case *recvReq:
		if r.e != e || r.shmRequest == nil || !r.done {
			return
		}
		e.shmEndpoint.Release(r.shmRequest)
		r.shmRequest, r.p = nil, nil
		if len(e.freeRecvs) < poolCap {
			e.freeRecvs = append(e.freeRecvs, r)
		}
	}
}

// Wait completes the receive in shm, takes the message on the receiver's
// ingress port, then advances the receiver's clock to the message's
// arrival (plus the reduction's time).
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
	arrive := ingress(at, &r.e.in)
	if idle := arrive - r.e.Now(); idle > 0 {
		r.e.waited.Add(int64(idle))
		r.e.advance(arrive)
	}
	r.e.advanceBy(r.reduce)
	return nil
}
