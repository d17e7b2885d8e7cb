//go:build mpi && cgo

package mpi

/*
#include "hccl_mpi.h"
*/
import "C"

import (
	"context"
	"fmt"
	"runtime"
	"syscall"
	"time"

	"github.com/hccl-test/hccl-test/backends"
	"github.com/hccl-test/hccl-test/dtype"
)

// kind is what a request does, for errors and for Close.
type kind uint8

const (
	kindSend kind = iota + 1
	kindRecv
	kindRecvReduce
	kindNative // a nonblocking collective: MPI forbids cancelling it
	kindNativeP2P
)

// request is a posted operation: one or two MPI requests and what to do
// when they complete. Its fields are guarded by mu.
type request struct {
	t    *Transport
	kind kind
	peer int    // point-to-point: the other rank
	op   string // native: the collective
	want int    // bytes the receive expects (counted requests)

	reqs    [2]C.MPI_Request
	n       int   // MPI requests in reqs; 0 for a receive still in its peer's queue
	counted bool  // reqs[0] is a receive whose length is checked
	got     C.int // bytes reqs[0] received, once it has completed
	perr    error // the first error MPI returned
	pin     runtime.Pinner
	pinned  bool
	idx     int // position in t.pending, while there

	done bool
	err  error

	// Receives: the message lands in `in` (the receive buffer, or for
	// RecvReduce possibly tmp from the pool), then for RecvReduce dst =
	// reduce(acc, in). A message of the wrong length lands in tmp.
	dst, acc, in, tmp []byte
	reduce            dtype.ReduceFunc
	// finish runs when a native collective completes without error.
	finish func() error
}

// describe names the request in errors: its operation and its ranks.
func (r *request) describe() string {
	switch r.kind {
	case kindSend:
		return fmt.Sprintf("send rank %d to rank %d", r.t.rank, r.peer)
	case kindRecv:
		return fmt.Sprintf("recv rank %d from rank %d", r.t.rank, r.peer)
	case kindRecvReduce:
		return fmt.Sprintf("recv-reduce rank %d from rank %d", r.t.rank, r.peer)
	}
	return fmt.Sprintf("%s rank %d", r.op, r.t.rank)
}

// wrap adds the request's description to err.
func (r *request) wrap(err error) error { return fmt.Errorf("mpi %s: %w", r.describe(), err) }

// check fails the point-to-point request before posting when the transport
// is closed, the peer does not exist or the message is too long for MPI.
func (r *request) check() bool {
	t := r.t
	switch {
	case t.closed:
		r.fail(backends.ErrClosed)
	case r.peer < 0 || r.peer >= t.size || r.peer == t.rank:
		r.fail(fmt.Errorf("no peer rank %d in a world of %d (a rank may not message itself)", r.peer, t.size))
	case r.want > maxCount:
		r.fail(fmt.Errorf("%d bytes exceed MPI's limit of %d per message", r.want, maxCount))
	default:
		r.counted = r.kind == kindRecv || r.kind == kindRecvReduce
		return true
	}
	return false
}

// pinBuf pins b (when it is Go memory) until the request completes: MPI
// keeps its address after the call that posted it returns.
func (r *request) pinBuf(b []byte) {
	if len(b) > 0 {
		r.pin.Pin(ptr(b))
		r.pinned = true
	}
}

// post records the outcome of posting n MPI requests: on an error the
// request fails (and what was posted is cancelled), otherwise it is
// pending.
func (r *request) post(rc C.int, n int) {
	r.n = n
	if err := mpiError(rc); err != nil {
		if r.kind != kindNative {
			for i := range n {
				C.hccl_cancel(&r.reqs[i])
			}
		}
		r.fail(err)
		return
	}
	r.idx = len(r.t.pending)
	r.t.pending = append(r.t.pending, r)
}

// fail completes a request that never became pending.
func (r *request) fail(err error) {
	r.release()
	r.done, r.err = true, r.wrap(err)
}

// release unpins the buffers and returns the temporary to the pool.
func (r *request) release() {
	if r.pinned {
		r.pin.Unpin()
		r.pinned = false
	}
	if r.tmp != nil {
		r.t.pool.put(r.tmp)
		r.tmp, r.in = nil, nil
	}
}

// poll tests the request's MPI requests and completes it once all have
// completed. It reports whether the request is done.
func (r *request) poll() bool {
	if r.done {
		return true
	}
	if r.n == 0 && (r.kind == kindRecv || r.kind == kindRecvReduce) {
		r.t.match(r.peer)
		if r.n == 0 {
			return false // no message yet
		}
	}
	all := true
	for i := range r.n {
		var done C.int
		var count *C.int
		if i == 0 && r.counted {
			count = &r.got
		}
		if rc := C.hccl_test(&r.reqs[i], &done, count); rc != C.MPI_SUCCESS && r.perr == nil {
			r.perr = mpiError(rc)
		}
		all = all && done != 0
	}
	if all {
		r.complete()
	}
	return all
}

// complete finishes a request whose MPI requests have all completed.
func (r *request) complete() {
	r.unlist()
	err := r.perr
	if err == nil && r.counted && int(r.got) != r.want {
		err = fmt.Errorf("%w: got %d bytes, want %d", backends.ErrMismatch, int(r.got), r.want)
	}
	if err == nil && r.reduce != nil {
		acc := r.acc[:len(r.dst)]
		if r.tmp != nil && !sameStart(r.dst, acc) {
			// dst and acc overlap without being the same: a kernel
			// may only write over an operand it is given whole.
			r.reduce(r.tmp, acc, r.tmp)
			copy(r.dst, r.tmp)
		} else {
			r.reduce(r.dst, acc, r.in)
		}
	}
	r.release()
	if err == nil && r.finish != nil {
		err = r.finish()
	}
	r.done = true
	if err != nil {
		r.err = r.wrap(err)
	}
}

// abandon fails a pending request because ctx ended. A receive that has
// no message yet leaves its peer's queue, so that it cannot take a later
// message; a send, or a receive MPI has begun, stays pending until the
// transport closes (its buffers stay pinned).
func (r *request) abandon(ctx context.Context) {
	r.done, r.err = true, r.wrap(backends.ContextError(ctx))
	if r.t.unqueue(r) || ((r.kind == kindRecv || r.kind == kindRecvReduce) && C.hccl_try_cancel(&r.reqs[0]) != 0) {
		r.unlist()
		r.release()
	}
}

// unlist removes the request from its transport's pending list.
func (r *request) unlist() {
	t := r.t
	last := t.pending[len(t.pending)-1]
	t.pending[r.idx], last.idx = last, r.idx
	t.pending[len(t.pending)-1] = nil
	t.pending = t.pending[:len(t.pending)-1]
}

// Wait implements backends.Request: it polls MPI_Test, backing off (see
// backoff), until the request completes or ctx ends. A request abandoned
// because ctx ended stays with MPI until the transport closes.
func (r *request) Wait(ctx context.Context) error {
	var b backoff
	for {
		mu.Lock()
		done := r.poll()
		if !done && ctx.Err() != nil {
			r.abandon(ctx)
			done = true
		}
		err := r.err
		mu.Unlock()
		if done {
			return err
		}
		b.pause(r.t.spin)
	}
}

// How a wait backs off between polls: a few yields to other goroutines,
// then, for up to the transport's spin time, more yields, then for
// yieldFor sched_yield system calls (the CPU goes to another rank's process
// if one is runnable), then sleeps that grow from minSleep to maxSleep. The
// sleeps are nanosleep system calls: time.Sleep rounds short sleeps up to
// about a millisecond on Linux.
const (
	yieldPolls = 4
	yieldFor   = 200 * time.Microsecond
	minSleep   = 20 * time.Microsecond
	maxSleep   = 50 * time.Microsecond
)

// backoff paces one wait's polls.
type backoff struct {
	polls int
	since time.Time
	sleep time.Duration
}

// pause waits before the next poll.
func (b *backoff) pause(spin time.Duration) {
	b.polls++
	if b.polls <= yieldPolls {
		runtime.Gosched()
		return
	}
	now := time.Now()
	if b.since.IsZero() {
		b.since = now
	}
	switch waited := now.Sub(b.since); {
	case waited < spin:
		runtime.Gosched()
		return
	case waited < spin+yieldFor:
		syscall.Syscall(syscall.SYS_SCHED_YIELD, 0, 0, 0)
		return
	}
	b.sleep = min(max(2*b.sleep, minSleep), maxSleep)
	ts := syscall.NsecToTimespec(int64(b.sleep))
	_ = syscall.Nanosleep(&ts, nil) // EINTR only shortens the pause
}
