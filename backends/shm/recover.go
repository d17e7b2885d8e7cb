package shm

import (
	"context"
	"fmt"

	"github.com/hccl-test/hccl-test/backends"
	"github.com/hccl-test/hccl-test/backends/agree"
)

// Watch implements backends.Recoverer.
func (e *endpoint) Watch(seq uint64, cancel context.CancelCauseFunc) {
	e.w.watchers[e.rank].Watch(seq, cancel)
}

// Agree implements backends.Recoverer: the ranks vote through a hub that
// every goroutine of the world shares.
func (e *endpoint) Agree(ctx context.Context, seq uint64, v backends.Vote) (backends.Vote, error) {
	defer e.w.watchers[e.rank].Done(seq)
	return e.w.hub.Submit(ctx, agree.Round{Kind: agree.Verdict, Seq: seq}, v)
}

// Recover implements backends.Recoverer. Every rank's attempt has ended
// once the verdict is in (a rank votes after its attempt returns), so no
// rank posts or takes a message now: each rank empties the links into it
// of sends that were abandoned and restarts their tickets, and the ranks
// meet before anyone posts again.
func (e *endpoint) Recover(ctx context.Context, seq uint64) error {
	if e.closed {
		return fmt.Errorf("recovering from op #%d: %w", seq, backends.ErrClosed)
	}
	e.w.links.Into(e.rank, func(_ int, l *link) { l.reset() })
	_, err := e.w.hub.Submit(ctx, agree.Round{Kind: agree.Recovered, Seq: seq}, backends.Vote{Rank: e.rank})
	return err
}

// reset drops the sends still queued on the link and starts its tickets
// again from zero. Neither side may be using the link.
func (l *link) reset() {
	l.mu.Lock()
	defer l.mu.Unlock()
	// Sends still queued were abandoned by their senders; eager copies
	// unread are dropped with the slots.
	l.sends.drain(func(s *sendReq) {
		s.mu.Lock()
		if s.state == sendPosted {
			s.endLocked(sendAbandoned, nil)
		}
		s.mu.Unlock()
	})
	l.sends.reset()
	l.nextSend = 0
	l.nextRecv.Store(0)
	l.sent.Store(0)
	l.waiting.Store(false)
	l.dropped = nil
	l.down.Store(false)
	l.clearSlots()
}

// DropLink implements backends.LinkDropper, as tcp drops a connection:
// both directions between this rank and peer fail with err, the
// operations pending on them at once (a receive waiting for a send, a
// send not yet taken) and later ones when posted, on both sides, until
// the ranks recover (Recover).
func (e *endpoint) DropLink(peer int, err error) {
	if e.check(peer) != nil {
		return
	}
	e.links.Out(peer).drop(err)
	e.links.In(peer).drop(err)
}

// drop fails the link with err: the sends queued on it end with err, and
// a receiver parked on it wakes to find it dropped.
func (l *link) drop(err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.dropped != nil {
		return
	}
	l.dropped = err
	l.down.Store(true)
	l.sends.drain(func(s *sendReq) {
		s.mu.Lock()
		if s.state == sendPosted {
			s.endLocked(sendAbandoned, fmt.Errorf("send to rank %d: %w", s.peer, err))
		}
		s.mu.Unlock()
	})
	l.wake()
}

// relay passes a failure vote to every rank's watcher.
func (w *World) relay(r agree.Round, v backends.Vote) {
	for i := range w.watchers {
		w.watchers[i].Report(r.Seq, v)
	}
}
