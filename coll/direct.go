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

// directLevels is one direct step on two levels: every rank sends a
// message of s bytes to each of the others, those to the P-1 ranks of its
// server on the fast link and those to the n-P others on the slow one, the
// two side by side. A rank hands its messages to its ports a gap apart
// (the fast link's model's), and a port sends each once the one before
// has left, so a group's last message leaves after the later of all the
// n-2 gaps and its own messages back to back (both, when the sender's CPU
// moves them), and arrives a latency later. It returns when each group's last message has arrived, the
// earlier group first, and how many messages each has.
func directLevels(n int, s float64, m Model) (endA, endB, kA, kB float64) {
	_, p, _ := m.split(n)
	intra, inter := m.intraLevel(), m.interLevel()
	gaps := float64(n-2) * intra.gap()
	group := func(l Model, k float64) float64 {
		per := s * l.Beta
		if m.SenderMoves {
			return l.Alpha + per + gaps + (k-1)*per
		}
		return l.Alpha + per + max(gaps, (k-1)*per)
	}
	kA, kB = float64(p-1), float64(n-p)
	endA, endB = group(intra, kA), group(inter, kB)
	if endA > endB {
		endA, endB, kA, kB = endB, endA, kB, kA
	}
	return endA, endB, kA, kB
}

// directMove is directLevels' step without reductions: until the later
// group has arrived.
func directMove(n int, s float64, m Model) float64 {
	_, end, _, _ := directLevels(n, s, m)
	return end
}

// directReceived is directLevels' step with every message reduced on
// arrival: the earlier group's reductions hide behind the later group's
// transfer where they can, the later group's follow it. With a fused
// backend a message's transfer is its reduction's pass, and the receiver
// makes every pass itself, from the first arrival on.
func directReceived(n int, s float64, m Model) float64 {
	endA, endB, kA, kB := directLevels(n, s, m)
	rA, rB := kA*s*m.Gamma, kB*s*m.Gamma
	if m.Fused {
		return max(endB, max(m.intraLevel().Alpha, m.interLevel().Alpha)+rA+rB)
	}
	return max(endB, endA+rA) + rB
}

// directReduceScatterLevelCost: one direct step of a block each, n-1
// blocks reduced.
func directReduceScatterLevelCost(n int, b float64, m Model) float64 {
	return directReceived(n, b, m)
}

// directAllToAllLevelCost: one direct step of a block each.
func directAllToAllLevelCost(n int, b float64, m Model) float64 {
	return directMove(n, b, m)
}
