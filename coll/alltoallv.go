package coll

import (
	"context"
	"fmt"
)

// Variable-size all-to-all (alltoallv): rank r sends c(r, d) elements to
// each rank d and receives c(s, r) from each rank s (Counts). A pair with
// no elements exchanges no message: both sides know its count, as MPI's
// ranks know their sendcounts and recvcounts. The costs are alltoall's on
// the nominal block, which is what auto can know before the draw; what
// the skew adds is measured, not predicted.

func init() {
	register(AllToAllV, "direct", directAllToAllV, costs{flat: directAllToAllCost, levels: directAllToAllLevelCost})
	register(AllToAllV, "pairwise", pairwiseAllToAllV, costs{flat: pairwiseAllToAllCost, levels: pairwiseAllToAllLevelCost})
}

// directAllToAllV posts every receive and every send at once, in rotated
// orders as directAllToAll does, then waits for all: one step, so a hot
// receiver takes all its blocks at once and the cold ones are done early.
// Cost for blocks of b bytes: (n-1)α + (n-1)bβ with even counts; with
// uneven ones, the largest column's bytes at the receiving end.
func directAllToAllV(ctx context.Context, c *Comm, a *Args) error {
	n, r, es := c.size, c.rank, a.DType.Size()
	timer := c.startReceives()
	sends, recvs := a.Counts.SendSpans(r), a.Counts.RecvSpans(r)
	// Step 1: our own block stays here.
	if recvs[r].Len > 0 {
		c.copyIfDistinct(recvs[r].bytes(a.Recv, es), sends[r].bytes(a.Send, es))
	}
	// Step 2: post the receives from r-1, r-2, ... and the sends to r+1,
	// r+2, ..., skipping the empty ones.
	reqs := make(inFlight, 0, 2*(n-1))
	for _, p := range others(r, n, -1) {
		if recvs[p].Len > 0 {
			reqs = append(reqs, c.t.Recv(p, recvs[p].bytes(a.Recv, es)))
		}
	}
	nrecv := len(reqs)
	for _, p := range others(r, n, +1) {
		if sends[p].Len > 0 {
			reqs = append(reqs, c.t.Send(p, sends[p].bytes(a.Send, es)))
		}
	}
	// Step 3: wait for the receives, when our data is all here, then
	// for the sends.
	return waitRecvsSends(ctx, c, timer, reqs[:nrecv], reqs[nrecv:])
}

// waitRecvsSends waits for a call's receives, notes when they were done
// (timer), then waits for its sends, even after a failed receive, and
// returns the first error.
func waitRecvsSends(ctx context.Context, c *Comm, timer recvTimer, recvs, sends inFlight) error {
	rerr := c.waitAll(ctx, recvs...)
	timer.done()
	serr := c.waitAll(ctx, sends...)
	if rerr != nil {
		return fmt.Errorf("exchange: %w", rerr)
	}
	if serr != nil {
		return fmt.Errorf("exchange: %w", serr)
	}
	return nil
}

// pairwiseAllToAllV keeps its own block, then at step s sends its block
// for rank r+s while receiving rank r-s's block for it, skipping an empty
// side: one message each way per step, so a hot receiver takes its
// blocks one after another and every step waits for the largest pair.
// Cost for blocks of b bytes: (n-1)(α + bβ) with even counts.
func pairwiseAllToAllV(ctx context.Context, c *Comm, a *Args) error {
	n, r, es := c.size, c.rank, a.DType.Size()
	// Its last receive ends with its last step: every rank's time to
	// receive is about the call's, and names no hot receiver.
	defer c.startReceives().done()
	sends, recvs := a.Counts.SendSpans(r), a.Counts.RecvSpans(r)
	// Step 0: our own block stays here.
	if recvs[r].Len > 0 {
		c.copyIfDistinct(recvs[r].bytes(a.Recv, es), sends[r].bytes(a.Send, es))
	}
	// Step s: swap with the ranks s places to either side.
	reqs := make(inFlight, 0, 2)
	for s := 1; s < n; s++ {
		to, from := mod(r+s, n), mod(r-s, n)
		reqs = reqs[:0]
		if recvs[from].Len > 0 {
			reqs = append(reqs, c.t.Recv(from, recvs[from].bytes(a.Recv, es)))
		}
		if sends[to].Len > 0 {
			reqs = append(reqs, c.t.Send(to, sends[to].bytes(a.Send, es)))
		}
		if err := c.waitAll(ctx, reqs...); err != nil {
			return fmt.Errorf("step %d to rank %d, from rank %d: %w", s, to, from, err)
		}
	}
	return nil
}
