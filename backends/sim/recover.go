package sim

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
// every goroutine of the world shares. Voting takes no virtual time.
func (e *endpoint) Agree(ctx context.Context, seq uint64, v backends.Vote) (backends.Vote, error) {
	defer e.w.watchers[e.rank].Done(seq)
	return e.w.hub.Submit(ctx, agree.Round{Kind: agree.Verdict, Seq: seq}, v)
}

// Recover implements backends.Recoverer. Every rank's attempt has ended
// once the verdict is in, so no rank posts or takes a message now: each
// rank empties the queues into it of sends that were abandoned and
// restarts their tickets, and the ranks meet before anyone posts again.
// Clocks and ports keep their times: a failed attempt took the virtual
// time its messages took.
func (e *endpoint) Recover(ctx context.Context, seq uint64) error {
	if e.closed {
		return fmt.Errorf("recovering from op #%d: %w", seq, backends.ErrClosed)
	}
	for src := range e.w.size {
		if q := e.w.queues[src][e.rank].Load(); q != nil {
			q.reset()
		}
	}
	_, err := e.w.hub.Submit(ctx, agree.Round{Kind: agree.Recovered, Seq: seq}, backends.Vote{Rank: e.rank})
	return err
}

// reset drops the sends still queued and starts the tickets again from
// zero. Neither side may be using the queue.
func (q *queue) reset() {
	q.mu.Lock()
	defer q.mu.Unlock()
	clear(q.sends)
	q.nextSend, q.nextRecv = 0, 0
	q.waiting = false
}

// relay passes a failure vote to every rank's watcher.
func (w *World) relay(r agree.Round, v backends.Vote) {
	for i := range w.watchers {
		w.watchers[i].Report(r.Seq, v)
	}
}
