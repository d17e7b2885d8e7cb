//go:build mpi && cgo

package mpi

/*
#include "hccl_mpi.h"
*/
import "C"

import (
	"fmt"
	"math/bits"
	"time"

	"github.com/hccl-test/hccl-test/backends"
	"github.com/hccl-test/hccl-test/dtype"
)

// Transport is this process's rank on MPI_COMM_WORLD: point-to-point
// messages on a duplicate of it, native collectives on another (see
// backends.Native). It implements backends.Transport and backends.Native.
type Transport struct {
	rank, size int
	// spin is how long a wait polls MPI_Test without sleeping.
	spin time.Duration
	// blocking runs native collectives as blocking MPI calls.
	blocking bool

	// Guarded by mu, as every MPI call is.
	closed  bool
	dirty   bool       // Close left requests that MPI may still be using
	pending []*request // posted and not yet completed, abandoned ones included
	// unmatched holds, per peer, the receives that wait for a message, in
	// posting order (requests with n == 0).
	unmatched [][]*request
	pool      bufPool // receive temporaries, reused
}

// Statically check that Transport implements the interfaces.
var (
	_ backends.Transport = (*Transport)(nil)
	_ backends.Native    = (*Transport)(nil)
)

// Rank implements backends.Transport.
func (t *Transport) Rank() int { return t.rank }

// Size implements backends.Transport.
func (t *Transport) Size() int { return t.size }

// Send implements backends.Transport: MPI_Isend of MPI_BYTE to peer.
func (t *Transport) Send(peer int, buf []byte) backends.Request {
	r := &request{t: t, kind: kindSend, peer: peer, want: len(buf)}
	mu.Lock()
	defer mu.Unlock()
	if r.check() {
		r.pinBuf(buf)
		r.post(C.hccl_isend(ptr(buf), C.int(len(buf)), C.int(peer), &r.reqs[0]), 1)
	}
	return r
}

// Recv implements backends.Transport: a receive from peer, matched in
// posting order. The receive is handed to MPI (MPI_Imrecv) once MPI_Improbe
// has found the peer's message and its length: a message of another length
// is taken into a temporary and fails the request with
// backends.ErrMismatch, and buf is not written.
func (t *Transport) Recv(peer int, buf []byte) backends.Request {
	r := &request{t: t, kind: kindRecv, peer: peer, want: len(buf), in: buf}
	mu.Lock()
	defer mu.Unlock()
	if r.check() {
		r.pinBuf(buf)
		t.queue(r)
	}
	return r
}

// RecvReduce implements backends.Transport, as Recv does. The message lands
// in dst itself when dst and acc do not overlap, and otherwise in a
// temporary from the transport's pool; on completion dst = reduce(acc,
// message). dst and acc may also overlap without being the same slice.
func (t *Transport) RecvReduce(peer int, dst, acc []byte, reduce dtype.ReduceFunc) backends.Request {
	r := &request{t: t, kind: kindRecvReduce, peer: peer, want: len(dst), dst: dst, acc: acc, reduce: reduce}
	mu.Lock()
	defer mu.Unlock()
	if !r.check() {
		return r
	}
	if len(acc) < len(dst) {
		r.fail(fmt.Errorf("accumulator of %d bytes is shorter than the destination's %d", len(acc), len(dst)))
		return r
	}
	r.in = dst
	if overlap(dst, acc[:len(dst)]) {
		r.tmp = t.pool.get(len(dst))
		r.in = r.tmp
	}
	r.pinBuf(r.in)
	t.queue(r)
	return r
}

// queue adds a receive to its peer's queue of receives waiting for a
// message, and matches what has already arrived.
func (t *Transport) queue(r *request) {
	if t.unmatched == nil {
		t.unmatched = make([][]*request, t.size)
	}
	r.idx = len(t.pending)
	t.pending = append(t.pending, r)
	t.unmatched[r.peer] = append(t.unmatched[r.peer], r)
	t.match(r.peer)
}

// match gives the messages that have arrived from peer to its waiting
// receives, oldest first: MPI_Improbe finds the next message and its
// length, MPI_Imrecv receives it. A message of the wrong length is
// received into a temporary, and its receive will fail.
func (t *Transport) match(peer int) {
	q := t.unmatched[peer]
	for len(q) > 0 {
		r := q[0]
		var found, count C.int
		var msg C.MPI_Message
		if rc := C.hccl_improbe(C.int(peer), &found, &msg, &count); rc != C.MPI_SUCCESS {
			r.perr, r.n = mpiError(rc), 1 // completes at its next poll
		} else if found == 0 {
			break
		} else {
			into := r.in
			if int(count) != r.want {
				// The receive's count check will fail it.
				if r.tmp != nil {
					t.pool.put(r.tmp)
				}
				r.tmp = t.pool.get(max(int(count), 1))[:count]
				into = r.tmp
				r.pinBuf(into)
			}
			r.n = 1
			if err := mpiError(C.hccl_imrecv(ptr(into), count, &msg, &r.reqs[0])); err != nil {
				r.perr = err
			}
		}
		copy(q, q[1:])
		q[len(q)-1] = nil
		q = q[:len(q)-1]
	}
	t.unmatched[peer] = q
}

// unqueue removes a receive that never got its message from its peer's
// queue, keeping the others in order. It reports whether r was there.
func (t *Transport) unqueue(r *request) bool {
	if t.unmatched == nil {
		return false
	}
	q := t.unmatched[r.peer]
	for i, x := range q {
		if x == r {
			copy(q[i:], q[i+1:])
			q[len(q)-1] = nil
			t.unmatched[r.peer] = q[:len(q)-1]
			return true
		}
	}
	return false
}

// Close implements backends.Transport. Pending receives are cancelled and
// pending sends abandoned; their requests fail with backends.ErrClosed.
func (t *Transport) Close() error {
	mu.Lock()
	defer mu.Unlock()
	if t.closed {
		return nil
	}
	t.closed = true
	for _, r := range t.pending {
		gone := r.kind != kindNative // MPI may cancel r.reqs[:r.n]
		if gone {
			for i := range r.n {
				gone = C.hccl_cancel(&r.reqs[i]) != 0 && gone
			}
		} // else MPI forbids cancelling or freeing a nonblocking collective
		if !r.done {
			r.done, r.err = true, r.wrap(backends.ErrClosed)
		}
		if gone {
			r.release()
			continue
		}
		// MPI may still use the request's buffers: keep them pinned,
		// and reachable, for the life of the process.
		leaked = append(leaked, r)
		t.dirty = true
	}
	t.pending, t.unmatched = nil, nil
	t.pool = bufPool{}
	return nil
}

// leaked holds requests MPI may still use after their transport closed,
// so that their pinned buffers stay valid (and pinned) until the process
// exits.
var leaked []*request

// overlap reports whether a and b share any byte.
func overlap(a, b []byte) bool {
	if len(a) == 0 || len(b) == 0 {
		return false
	}
	pa, pb := uintptr(ptr(a)), uintptr(ptr(b))
	return pa < pb+uintptr(len(b)) && pb < pa+uintptr(len(a))
}

// bufPool keeps receive temporaries by power-of-two capacity, so that
// steady-state traffic allocates nothing. It is used with mu held.
type bufPool struct {
	free [64][][]byte
}

// get returns a buffer of n > 0 bytes.
func (p *bufPool) get(n int) []byte {
	c := bits.Len(uint(n - 1))
	if k := len(p.free[c]); k > 0 {
		b := p.free[c][k-1]
		p.free[c][k-1] = nil
		p.free[c] = p.free[c][:k-1]
		return b[:n]
	}
	return make([]byte, n, 1<<c)
}

// put returns b, which get gave, to the pool.
func (p *bufPool) put(b []byte) {
	c := bits.Len(uint(cap(b) - 1))
	p.free[c] = append(p.free[c], b[:0])
}
