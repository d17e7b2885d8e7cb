package coll

import (
	"context"
	"fmt"

	"github.com/hccl-test/hccl-test/dtype"
)

// Variable-size reduce-scatter (reducescatterv): every rank's send buffer
// holds the blocks of every rank, block j PerRank(j) elements long
// (Counts.RankSpans), and rank r receives the reduction of block r. An
// empty block crosses no link. The cost is reducescatter's direct one on
// the nominal block.

func init() {
	register(ReduceScatterV, "direct", directReduceScatterV, costs{flat: directReduceScatterCost})
}

// directReduceScatterV sends every rank j its block j at once, then folds
// the copies of block r from ranks r+1, r+2, ... into its own, one after
// another, as directReduceScatter does. Cost for blocks of b bytes:
// (n-1)α + (n-1)bβ + (n-1)bγ with even counts; the rank of the largest
// block reduces longest.
func directReduceScatterV(ctx context.Context, c *Comm, a *Args) error {
	n, r, es := c.size, c.rank, a.DType.Size()
	timer := c.startReceives()
	spans := a.Counts.RankSpans()
	blk := func(j int) []byte { return spans[j].bytes(a.Send, es) }
	recv := a.Recv[:spans[r].Len*es]
	reduce := dtype.Reducer(a.DType, a.RedOp)

	// Step 1: post the send of block j to every rank j that has one.
	sends := make(inFlight, 0, n-1)
	for _, p := range others(r, n, -1) {
		if spans[p].Len > 0 {
			sends = append(sends, c.t.Send(p, blk(p)))
		}
	}
	// Step 2: fold block r from ranks r+1, r+2, ... into the result,
	// starting from our own; each receive waits for the one before, as
	// they share the result buffer.
	acc := blk(r)
	var err error
	if spans[r].Len > 0 {
		for _, from := range others(r, n, +1) {
			if err = c.recvReduce(ctx, from, recv, acc, reduce); err != nil {
				err = fmt.Errorf("reduce from rank %d: %w", from, err)
				break
			}
			acc = recv
		}
	}
	timer.done() // every copy of block r is in
	// Step 3: wait for the peers to take our blocks.
	if serr := c.waitAll(ctx, sends...); err == nil && serr != nil {
		err = fmt.Errorf("sends: %w", serr)
	}
	if err != nil || len(recv) == 0 {
		return err
	}
	c.copyIfDistinct(recv, acc) // one rank: the result is our own block
	if a.RedOp == dtype.Avg {
		c.divideBy(a.DType, recv, n)
	}
	return nil
}
