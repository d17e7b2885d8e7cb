package proc

import (
	"slices"

	"github.com/hccl-test/hccl-test/backends"
	"github.com/hccl-test/hccl-test/internal/freelist"
)

// reqPool holds the requests of an endpoint that its caller handed back
// (Release) and that nothing else refers to, for its next posts to reuse:
// a small message's requests were all of its allocations.
type reqPool struct {
	sends []*sendReq
	recvs []*recvReq
}

// maxPooled bounds each free list: a call's requests are a few per peer.
const maxPooled = 256

// newSend returns a send request, reused if one is free.
func (e *endpoint) newSend() *sendReq {
	if s := freelist.Pop(&e.pool.sends); s != nil {
		return s
	}
	return new(sendReq)
}

// newRecv returns a receive request, reused if one is free.
func (e *endpoint) newRecv() *recvReq {
	if r := freelist.Pop(&e.pool.recvs); r != nil {
		return r
	}
	return new(recvReq)
}

// Release implements backends.Releaser. It takes back a request of this
// endpoint that completed without error and that neither a queue, a ring
// slot nor the list of pending receives still refers to; any other (one
// that failed, one of the tcp transport's, a failed post's, one already
// released) it leaves to the garbage collector. A failed request may still
// be referred to where its failure left it (a queued send given up is
// posted later, as abandoned), and failures are rare.
func (e *endpoint) Release(r backends.Request) {
	switch q := r.(type) {
	case *sendReq:
		if q.e != e || !q.done || q.err != nil || q.queued || q.dropped != nil ||
			q.staged || len(e.pool.sends) >= maxPooled {
			return
		}
		p := q.p
		if slot := &p.inflight[q.ticket%ringSlots]; *slot == q {
			// Harvested: its receiver is done with the slot, which the
			// next send to it reuses without looking back.
			*slot = nil
		}
		if slices.Contains(p.queue, q) {
			return
		}
		*q = sendReq{} // e nil: a second release is ignored
		e.pool.sends = append(e.pool.sends, q)
	case *recvReq:
		if q.e != e || !q.done || q.err != nil || len(e.pool.recvs) >= maxPooled {
			return
		}
		p := q.p
		e.popDone(p)
		if slices.Contains(p.recvs, q) {
			return // behind a receive still pending
		}
		*q = recvReq{}
		e.pool.recvs = append(e.pool.recvs, q)
	}
}

// popDone drops the completed receives at the head of p's pending ones,
// keeping the list's memory for the next.
func (e *endpoint) popDone(p *peer) {
	k := 0
	for k < len(p.recvs) && p.recvs[k].done {
		k++
	}
	if k == 0 {
		return
	}
	n := copy(p.recvs, p.recvs[k:])
	clear(p.recvs[n:])
	p.recvs = p.recvs[:n]
	e.receiving -= k
}
