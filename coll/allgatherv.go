package coll

import (
	"context"
	"fmt"
)

// Variable-size all-gather (allgatherv): rank r contributes PerRank(r)
// elements, and every rank receives every rank's block in rank order
// (Counts.RankSpans). An empty block crosses no link. The costs are
// allgather's on the nominal block.

func init() {
	register(AllGatherV, "direct", directAllGatherV, costs{flat: directAllToAllCost})
	register(AllGatherV, "ring", ringAllGatherV, costs{flat: ringAllGatherVCost})
}

// directAllGatherV sends our block to every other rank and receives every
// other rank's block, all at once. In place, our block already sits in
// the receive buffer. Cost for blocks of b bytes: (n-1)α + (n-1)bβ.
func directAllGatherV(ctx context.Context, c *Comm, a *Args) error {
	n, r, es := c.size, c.rank, a.DType.Size()
	timer := c.startReceives()
	spans := a.Counts.RankSpans()
	blk := func(j int) []byte { return spans[j].bytes(a.Recv, es) }
	// Step 1: our own block into place.
	if spans[r].Len > 0 {
		c.copyIfDistinct(blk(r), a.Send[:spans[r].Len*es])
	}
	// Step 2: post every receive and, if we have a block, its sends.
	reqs := make(inFlight, 0, 2*(n-1))
	for _, p := range others(r, n, -1) {
		if spans[p].Len > 0 {
			reqs = append(reqs, c.t.Recv(p, blk(p)))
		}
	}
	nrecv := len(reqs)
	if spans[r].Len > 0 {
		for _, p := range others(r, n, +1) {
			reqs = append(reqs, c.t.Send(p, blk(r)))
		}
	}
	// Step 3: wait for the receives, then for the sends.
	return waitRecvsSends(ctx, c, timer, reqs[:nrecv], reqs[nrecv:])
}

// ringAllGatherV passes the blocks around the ring: at step k (0 to n-2)
// rank r sends block r-k to rank r+1 and receives block r-k-1 from rank
// r-1, skipping an empty block on both sides, which agree on its length.
// Cost for blocks of b bytes: (n-1)(α + bβ) with even counts; every step
// waits for the largest block in flight, so a hot block costs n-1 times.
func ringAllGatherV(ctx context.Context, c *Comm, a *Args) error {
	n, r, es := c.size, c.rank, a.DType.Size()
	// Its last receive ends with its last step, as pairwise alltoallv's.
	defer c.startReceives().done()
	spans := a.Counts.RankSpans()
	blk := func(j int) []byte { return spans[j].bytes(a.Recv, es) }
	if spans[r].Len > 0 {
		c.copyIfDistinct(blk(r), a.Send[:spans[r].Len*es])
	}
	right, left := mod(r+1, n), mod(r-1, n)
	reqs := make(inFlight, 0, 2)
	for k := 0; k < n-1; k++ {
		out, in := mod(r-k, n), mod(r-k-1, n)
		reqs = reqs[:0]
		if spans[in].Len > 0 {
			reqs = append(reqs, c.t.Recv(left, blk(in)))
		}
		if spans[out].Len > 0 {
			reqs = append(reqs, c.t.Send(right, blk(out)))
		}
		if err := c.waitAll(ctx, reqs...); err != nil {
			return fmt.Errorf("step %d: block %d to rank %d, block %d from rank %d: %w", k, out, right, in, left, err)
		}
	}
	return nil
}

// ringAllGatherVCost: n-1 steps, each moving one block.
func ringAllGatherVCost(n int, b float64, m Model) float64 {
	return float64(n-1) * (m.Alpha + b*m.Beta)
}
