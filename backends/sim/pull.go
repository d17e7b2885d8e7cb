package sim

import (
	"context"
	"time"

	"github.com/hccl-test/hccl-test/backends"
	"github.com/hccl-test/hccl-test/internal/limits"
)

// Where receivers move the data (LinkModel.Pull), as on shared memory,
// where a receiver copies out of the sender's buffer with its own CPU, a
// message takes no port: its sender hands it out a gap after its previous
// one, and it is there to take a latency later. Its receiver takes it,
// once there, when it waits for it: the bytes at the link's rate, or for a
// receive that reduces, the slower of that and the reduction's rate (one
// pass over the data), each message after the one before. The sender's
// wait ends when the receiver has taken it.

// pulled is a message that its receiver moves.
type pulled struct {
	// avail is when the receiver may begin taking it; move is what
	// taking it costs (its bytes at the link's rate, and any hold).
	avail, move time.Duration
	// done is closed once the receiver has taken it, at taken.
	done  chan struct{}
	taken time.Duration
}

// post hands a message of n bytes to peer out, a gap after e's previous
// one, for the receiver to take; a hold makes it that much slower to take,
// as on a slower link.
func (e *endpoint) post(peer, n int, hold time.Duration) timing {
	l := e.f.links
	alpha, gbps := l.IntraAlpha, l.IntraGBps
	if e.f.server(peer) != e.f.server(e.rank) {
		alpha, gbps = l.InterAlpha, l.InterGBps
	}
	issued := max(e.Now(), e.issue)
	e.issue = limits.AddDurations(issued, l.Gap)
	return timing{pull: &pulled{avail: limits.AddDurations(issued, alpha), move: limits.AddDurations(hold, bytesAt(n, gbps)),
		done: make(chan struct{})}}
}

// take moves p into e: once it is there, its bytes, or its reduction if
// that is slower (reduce), on e's clock.
func (e *endpoint) take(p *pulled, reduce time.Duration) {
	if idle := p.avail - e.Now(); idle > 0 {
		e.waited.Add(int64(idle))
		e.advance(p.avail)
	}
	e.advanceBy(max(p.move, reduce))
}

// release tells p's sender that its receiver is done with it at t.
func (p *pulled) release(t time.Duration) {
	p.taken = t
	close(p.done)
}

// wait advances e, p's sender, to when the receiver had taken p.
func (p *pulled) wait(ctx context.Context, e *endpoint) error {
	select {
	case <-p.done:
		e.advance(p.taken)
		return nil
	case <-ctx.Done():
		return backends.ContextError(ctx)
	}
}
