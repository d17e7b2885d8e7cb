package coll

import (
	"time"

	"github.com/hccl-test/hccl-test/internal/ticks"
)

// The variable-size collectives time, on every call, how long a rank took
// to have all its data: from the call's start to its last receive's
// completion. It names the rank the skew made everyone wait for, which
// its time in the op does not: a sender waits until the hot receiver has
// taken its blocks (on shm that receiver copies them inside its own wait),
// so senders and the hot receiver leave the op together, but only the hot
// receiver's receives end late.

// recvTimer times one call until its receives are done (Comm.Received).
type recvTimer struct {
	c    *Comm
	wall ticks.Ticks   // the start, on the wall clock
	virt time.Duration // the start, on the transport's virtual clock
}

// startReceives starts timing a call's receives: one reading of the
// clock the rows are timed by.
func (c *Comm) startReceives() recvTimer {
	t := recvTimer{c: c.top()}
	if t.c.clock != nil {
		t.virt = t.c.clock.Now()
	} else {
		t.wall = ticks.Now()
	}
	return t
}

// done adds the time since the start to the Comm's Received: call it
// once the call's last receive has completed.
func (t recvTimer) done() {
	if t.c.clock != nil {
		t.c.received += t.c.clock.Now() - t.virt
		return
	}
	t.c.received += (ticks.Now() - t.wall).Duration()
}

// Received returns the time this rank's variable-size calls (alltoallv,
// allgatherv, reducescatterv) took until their last receive completed,
// summed over all calls so far; on the transport's virtual clock where it
// has one. Every other call adds nothing. The rank with the most is the
// one whose data came last: with skewed counts, the hot receiver.
func (c *Comm) Received() time.Duration { return c.received }
