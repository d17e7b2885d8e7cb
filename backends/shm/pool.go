package shm

import (
	"github.com/hccl-test/hccl-test/backends"
	"github.com/hccl-test/hccl-test/internal/freelist"
)

// A rank's requests are reused (backends.Releaser): a small message's two
// requests were all its allocations, and the garbage collector they fed
// made the slow tail of small rows. Each endpoint keeps its own free
// lists, used by the rank's goroutine alone, so they need no lock.

// poolCap is how many free requests of each kind an endpoint keeps: more
// than any algorithm posts in one wait, so steady state allocates none.
const poolCap = 64

// newSend returns a send request in its posted state, reused when one is
// free.
func (e *endpoint) newSend() *sendReq {
	s := freelist.Pop(&e.freeSends)
	if s == nil {
		return &sendReq{owner: e}
	}
	s.rearm()
	return s
}

// rearm puts a send that ended back in its posted state, field by field,
// never by assigning the whole struct: the receiver of its last use may
// still hold its lock (endLocked).
func (s *sendReq) rearm() {
	s.state, s.err, s.parked = sendPosted, nil, false
	s.fin.Store(false)
}

// newRecv returns a receive request, reused when one is free.
func (e *endpoint) newRecv() *recvReq {
	r := freelist.Pop(&e.freeRecvs)
	if r == nil {
		return &recvReq{e: e}
	}
	r.done, r.err = false, nil
	return r
}

// Release implements backends.Releaser. It takes back a send the receiver
// has finished with (an abandoned one may still sit in the link's queue)
// and a receive that has been waited on (one not waited on still holds a
// ticket); anything else, another endpoint's requests included, it leaves
// to the garbage collector.
func (e *endpoint) Release(req backends.Request) {
	switch r := req.(type) {
	case *sendReq:
		if r.owner != e || !r.fin.Load() || r.state != sendDone || len(e.freeSends) == poolCap {
			return
		}
		r.buf, r.call = nil, backends.Call{}
		e.freeSends = append(e.freeSends, r)
	case *recvReq:
		if r.e != e || !r.done || len(e.freeRecvs) == poolCap {
			return
		}
		r.dst, r.acc, r.reduce, r.call = nil, nil, nil, backends.Call{}
		e.freeRecvs = append(e.freeRecvs, r)
	}
}
