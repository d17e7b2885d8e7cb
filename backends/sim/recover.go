package sim

import "context"

// Recover implements backends.Recoverer. Every rank's attempt has ended
// once the verdict is in, so no rank posts or completes a message now:
// each rank drops the timings of the pairs into it and restarts their
// numbers (every pair being some rank's way in, all are reset), then shm
// resets its own tickets and the ranks meet before anyone posts again.
// Clocks and ports keep their times: a failed attempt took the virtual
// time its messages took.
func (e *endpoint) Recover(ctx context.Context, seq uint64) error {
	if !e.closed {
		e.f.pairs.Into(e.rank, func(_ int, p *pair) { p.reset() })
	}
	return e.shmEndpoint.Recover(ctx, seq)
}
