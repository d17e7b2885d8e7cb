package proc

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/hccl-test/hccl-test/backends"
)

// linkDropped returns the error of a dropped link to p (either way), or
// nil.
func (e *endpoint) linkDropped(p *peer) error {
	if !p.ctl.dropped(p.inRing) && !e.my.dropped(p.outRing) {
		return nil
	}
	e.dropMu.Lock()
	err := p.dropErr
	e.dropMu.Unlock()
	if err != nil {
		return err
	}
	why := p.ctl.text(p.inRing+ringWhy, p.inRing+ringHeaderSize)
	if why == "" {
		why = e.my.text(p.outRing+ringWhy, p.outRing+ringHeaderSize)
	}
	return fmt.Errorf("%w: rank %d dropped the link: %s", backends.ErrPeerGone, p.rank, why)
}

// DropLink implements backends.LinkDropper: both directions between this
// rank and peer fail, on both sides, the operations pending on them at
// once and later ones when posted, until the ranks recover. This side's
// fail with err, the peer's with an error that wraps ErrPeerGone and
// quotes err. It may be called from another goroutine than the rank's
// while the endpoint is open, not at the same time as Close.
func (e *endpoint) DropLink(peer int, err error) {
	if peer < 0 || peer >= e.size || peer == e.rank || e.closed {
		return
	}
	p := e.peers[peer]
	if p == nil {
		if d, ok := e.t.(backends.LinkDropper); ok {
			d.DropLink(peer, err)
		}
		return
	}
	e.dropMu.Lock()
	if p.dropErr == nil {
		p.dropErr = err
	}
	e.dropMu.Unlock()
	e.my.putText(p.outRing+ringWhy, p.outRing+ringHeaderSize, err.Error())
	atomic.StoreUint32(e.my.u32(p.outRing), 1)
	atomic.StoreUint32(p.ctl.u32(p.inRing), 1)
	p.ctl.bell().ring()
	e.my.bell().ring()
}

// Watch implements backends.Recoverer through the tcp transport's control
// connections.
func (e *endpoint) Watch(seq uint64, cancel context.CancelCauseFunc) {
	if r, ok := e.t.(backends.Recoverer); ok {
		r.Watch(seq, cancel)
	}
}

// Agree implements backends.Recoverer through the tcp transport's control
// connections.
func (e *endpoint) Agree(ctx context.Context, seq uint64, v backends.Vote) (backends.Vote, error) {
	r, ok := e.t.(backends.Recoverer)
	if !ok {
		return backends.Vote{}, fmt.Errorf("op #%d: the transport cannot run calls again", seq)
	}
	return r.Agree(ctx, seq, v)
}

// Recover implements backends.Recoverer. Every rank's attempt has ended
// once the verdict is in, so no rank posts or takes a message now: each
// rank fails what it still has pending, empties its rings to the ranks of
// its host and numbers its messages from 0 again, and the tcp transport's
// Recover resets the other links and has the ranks meet before anyone
// posts again.
func (e *endpoint) Recover(ctx context.Context, seq uint64) error {
	if e.closed {
		return fmt.Errorf("recovering from op #%d: %w", seq, backends.ErrClosed)
	}
	err := fmt.Errorf("%w: op #%d is being run again", backends.ErrPeerGone, seq)
	for _, p := range e.peers {
		if p == nil {
			continue
		}
		e.failPending(p, err)
		clear(e.my.mem[p.outRing : p.outRing+ringSize])
		p.nextSend, p.nextRecv = 0, 0
		p.eagerLast = [eagerSlots]uint64{}
		for _, r := range p.recvs {
			if !r.done {
				r.complete(err)
			}
		}
		e.receiving -= len(p.recvs)
		p.recvs = nil
		e.dropMu.Lock()
		p.dropErr = nil
		e.dropMu.Unlock()
	}
	r, ok := e.t.(backends.Recoverer)
	if !ok {
		return fmt.Errorf("op #%d: the transport cannot run calls again", seq)
	}
	return r.Recover(ctx, seq)
}

// failPending ends the sends to p still queued or in flight with err.
func (e *endpoint) failPending(p *peer, err error) {
	for _, s := range p.queue {
		if !s.done {
			s.finish(err)
		}
	}
	e.queued -= len(p.queue)
	p.queue = nil
	if !e.closed {
		e.wantDone(p, false)
	}
	for i, s := range p.inflight {
		if s != nil && !s.done {
			s.finish(err)
		}
		p.inflight[i] = nil
	}
}
