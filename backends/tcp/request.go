package tcp

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/hccl-test/hccl-test/backends"
	"github.com/hccl-test/hccl-test/dtype"
	"github.com/hccl-test/hccl-test/internal/freelist"
)

// request is a posted send or receive.
type request struct {
	ep     *endpoint // the endpoint that made it, and may reuse it
	l      *link
	send   bool
	buf    []byte // send payload, or receive destination
	acc    []byte // receive-and-reduce accumulator
	reduce dtype.ReduceFunc
	call   backends.Call
	// done holds one token once the request has finished, put there by
	// finish and back by every Wait that takes it; err is valid then.
	// finished is set just before the token is first put: a channel that
	// is drained rather than closed can be used again.
	done     chan struct{}
	err      error
	finished atomic.Bool
}

// Peer implements backends.PeerReporter.
func (r *request) Peer() (int, bool) { return r.l.peer, r.send }

// Describe implements backends.Describer.
func (r *request) Describe() string {
	if r.send {
		return fmt.Sprintf("send to rank %d", r.l.peer)
	}
	return fmt.Sprintf("receive from rank %d", r.l.peer)
}

// finish ends the request with err; it is called once per use.
func (r *request) finish(err error) {
	r.err = err
	r.finished.Store(true)
	r.done <- struct{}{}
}

// Wait implements backends.Request.
func (r *request) Wait(ctx context.Context) error {
	select {
	case <-r.done:
		r.done <- struct{}{} // for the next Wait
		return r.err
	default:
	}
	if !r.send {
		r.l.readInline(ctx, r)
	}
	select {
	case <-r.done:
		r.done <- struct{}{}
		return r.err
	case <-ctx.Done():
		// The buffer stays with the link until it finishes or the
		// endpoint closes; the run is failing anyway.
		dir := "recv from"
		if r.send {
			dir = "send to"
		}
		return fmt.Errorf("%s rank %d: %w", dir, r.l.peer, backends.ContextError(ctx))
	}
}

// maxFree bounds the released requests an endpoint keeps for reuse: more
// than any algorithm has pending at once at the world sizes one host runs.
const maxFree = 256

// newRequest returns a request to fill in: one released earlier when
// there is one, so that a small message allocates nothing.
func (ep *endpoint) newRequest() *request {
	if r := freelist.Pop(&ep.free); r != nil {
		return r
	}
	return &request{ep: ep, done: make(chan struct{}, 1)}
}

// Release implements backends.Releaser. It keeps for reuse a request of
// this endpoint's that has finished, once its token is back (see Wait); a
// request still pending stays the link's (its Wait gave up on the
// context) and is left to the garbage collector.
func (ep *endpoint) Release(req backends.Request) {
	r, ok := req.(*request)
	if !ok || r.ep != ep || !r.finished.Load() || len(ep.free) >= maxFree {
		return
	}
	<-r.done // put by finish, or by Wait, just after finished was set
	*r = request{ep: ep, done: r.done}
	ep.free = append(ep.free, r)
}
