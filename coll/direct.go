package coll

import (
	"context"
	"fmt"

	"github.com/hccl-test/hccl-test/backends"
	"github.com/hccl-test/hccl-test/dtype"
)

// Direct algorithms: every rank messages every other rank in one step, all
// messages in flight at once. One step of latency, at the price of n-1
// messages per rank, so they suit small sizes.

func init() {
	register(ReduceScatter, "direct", directReduceScatter, costs{flat: directReduceScatterCost, levels: directReduceScatterLevelCost})
	register(AllToAll, "direct", directAllToAll, costs{flat: directAllToAllCost, levels: directAllToAllLevelCost})
}

// directReduceScatter sends every rank j its block j at once, then combines
// the copies of block r that arrive from ranks r+1, r+2, ... into its own.
// Cost for blocks of b bytes: (n-1)α + (n-1)bβ + (n-1)bγ, sends overlapped.
func directReduceScatter(ctx context.Context, c *Comm, a *Args) error {
	n, r, b := c.size, c.rank, a.Bytes()
	blk := func(i int) []byte { return block(a.Send, i, b) }
	recv := a.Recv[:b]
	reduce := dtype.Reducer(a.DType, a.RedOp)

	// Step 1: post the send of block j to every rank j, in the order r-1,
	// r-2, ...; rank r-s takes ours as its s-th receive below.
	sends := c.postSends(others(r, n, -1), blk)

	// Step 2: fold block r from ranks r+1, r+2, ... into the result, one
	// after another, starting from our own. Each receive is posted only
	// once the previous one is done: they share the result buffer, and a
	// pending request owns its buffers. Our sends are all in flight, so no
	// peer waits on us meanwhile.
	acc := blk(r)
	var err error
	for _, from := range others(r, n, +1) {
		if err = c.recvReduce(ctx, from, recv, acc, reduce); err != nil {
			err = fmt.Errorf("reduce from rank %d: %w", from, err)
			break
		}
		acc = recv
	}

	// Step 3: wait for the peers to take our blocks.
	if serr := c.waitAll(ctx, sends...); err == nil && serr != nil {
		err = fmt.Errorf("sends: %w", serr)
	}
	if err != nil {
		return err
	}
	c.copyIfDistinct(recv, acc) // one rank: the result is our own block
	if a.RedOp == dtype.Avg {
		c.divideBy(a.DType, recv, n)
	}
	return nil
}

// directAllToAll posts the send of block j to rank j and the receive of
// block j from rank j for every other rank j at once, then waits for all.
// Cost for blocks of b bytes: (n-1)α + (n-1)bβ, all messages overlapped.
func directAllToAll(ctx context.Context, c *Comm, a *Args) error {
	n, r, b := c.size, c.rank, a.Bytes()
	recv := a.Recv[:n*b]
	out := c.outgoing(a.Send[:n*b], recv)
	sendBlk := func(j int) []byte { return block(out, j, b) }
	recvBlk := func(j int) []byte { return block(recv, j, b) }

	// Step 1: our own block stays here.
	c.copyIfDistinct(recvBlk(r), sendBlk(r))
	// Step 2: post every receive and every send, in rotated orders (send to
	// r+1, r+2, ...; receive from r-1, r-2, ...) so that no rank is every
	// rank's first peer.
	recvs := c.postRecvs(others(r, n, -1), recvBlk)
	sends := c.postSends(others(r, n, +1), sendBlk)
	// Step 3: wait for all of them, receives first.
	if err := c.waitAll(ctx, append(recvs, sends...)...); err != nil {
		return fmt.Errorf("exchange: %w", err)
	}
	return nil
}

// others returns the n-1 ranks other than r in the order r+dir, r+2·dir,
// ... (mod n); dir is +1 or -1.
func others(r, n, dir int) []int {
	out := make([]int, 0, n-1)
	for s := 1; s < n; s++ {
		out = append(out, mod(r+dir*s, n))
	}
	return out
}

// inFlight is a batch of posted operations, completed with Comm.waitAll.
type inFlight []backends.Request

// postSends posts, without waiting, a send of blk(p) to each rank p of
// peers.
func (c *Comm) postSends(peers []int, blk func(int) []byte) inFlight {
	return post(peers, blk, c.t.Send)
}

// postRecvs posts, without waiting, a receive into blk(p) from each rank p
// of peers.
func (c *Comm) postRecvs(peers []int, blk func(int) []byte) inFlight {
	return post(peers, blk, c.t.Recv)
}

// post calls op(p, blk(p)) for each rank p of peers and collects the
// requests.
func post(peers []int, blk func(int) []byte, op func(int, []byte) backends.Request) inFlight {
	reqs := make(inFlight, len(peers))
	for i, p := range peers {
		reqs[i] = op(p, blk(p))
	}
	return reqs
}

// directAlpha is the latency of one step that posts k messages at once:
// one message's latency, plus a gap for each further message, whose
// latencies overlap but whose handling does not.
func directAlpha(k int, m Model) float64 { return m.Alpha + float64(k-1)*m.gap() }

// directStep is one step that posts k messages at once, each taking per to
// move (and reduce, where it is reduced): the rank hands them out a gap
// apart, and each moves once the one before has, so they go max(gap, per)
// apart, and the last one is done per and a latency after it went. Small
// messages pay every gap (directAlpha); large ones hide the gaps behind
// their transfers, unless the sender's CPU moves them (SenderMoves).
func directStep(k int, per float64, m Model) float64 {
	return m.Alpha + per + float64(k-1)*m.spacing(per)
}

// spacing is how far apart a step's messages of per each go: a gap or
// per, whichever is longer, or both when the sender's CPU moves them.
func (m Model) spacing(per float64) float64 {
	if m.SenderMoves {
		return m.gap() + per
	}
	return max(m.gap(), per)
}

// directReduceScatterCost: one step of n-1 messages of a block each, each
// reduced.
func directReduceScatterCost(n int, b float64, m Model) float64 {
	return directStep(n-1, m.moveReduce(b), m)
}

// directAllToAllCost: one step of n-1 messages of a block each.
func directAllToAllCost(n int, b float64, m Model) float64 {
	return directStep(n-1, b*m.Beta, m)
}
