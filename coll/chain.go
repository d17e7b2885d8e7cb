package coll

import (
	"context"
	"fmt"

	"github.com/hccl-test/hccl-test/backends"
	"github.com/hccl-test/hccl-test/dtype"
)

// Chain algorithms, registered as "ring" for the rooted collectives: the
// ranks form a path in ring order starting (or ending) at the root, and data
// moves one hop per step with every link of the path busy at once.
// Broadcast and reduce cut the buffer into segments so that one segment's
// later hops overlap the next segment's earlier ones; gather and scatter
// pipeline whole blocks. Costs below are for n ranks and m bytes per
// buffer (per block for gather and scatter), K segments, alpha per message,
// beta per byte, gamma per byte reduced.

func init() {
	register(Broadcast, "ring", chainBroadcast, costs{flat: chainBroadcastCost, levels: chainBroadcastLevelCost})
	register(Reduce, "ring", chainReduce, costs{flat: chainReduceCost, levels: chainReduceLevelCost})
	register(Gather, "ring", chainGather, costs{flat: chainGatherCost, levels: chainGatherLevelCost})
	register(Scatter, "ring", chainScatter, costs{flat: chainGatherCost, levels: chainScatterLevelCost})
}

// chainSegments is how many segments broadcast and reduce cut a large
// buffer into. K segments cross a chain of n ranks in K+n-2 segment times,
// so with 8 the pipeline's fill and drain cost (n-2)/8 of a whole-buffer
// hop, while each hop still sends only 8 messages.
const chainSegments = 8

// chainMinSegment is the smallest segment in bytes. Loopback TCP costs
// about 10 us per message and moves about 1.8 GB/s (shared/reference/
// peers.md), so a 16 KiB segment spends about as long in flight as in
// setup: smaller segments would add more per-message cost than overlap
// saves. It is a multiple of every element size.
const chainMinSegment = 16 << 10

// chainNone stands for the missing peer at either end of a chain, or for a
// side of a step that has nothing to move.
const chainNone = -1

// relRank returns rank's position counted from root in ring order.
func relRank(rank, root, n int) int { return mod(rank-root, n) }

// absRank returns the rank at position vr counted from root in ring order.
func absRank(vr, root, n int) int { return mod(vr+root, n) }

// chainSegmenter cuts a buffer of count elements into the segments of a
// pipelined chain.
type chainSegmenter struct {
	count, parts, es int
}

// newChainSegmenter splits count elements of es bytes into about
// chainSegments near-equal segments of at least chainMinSegment bytes each,
// and always at least one segment (empty when count is 0).
func newChainSegmenter(count, es int) chainSegmenter {
	parts := max(1, min(chainSegments, count*es/chainMinSegment))
	return chainSegmenter{count: count, parts: parts, es: es}
}

// of returns segment i of buf, or nil when i is not a segment (the steps
// before the first and after the last).
func (g chainSegmenter) of(buf []byte, i int) []byte {
	if i < 0 || i >= g.parts {
		return nil
	}
	lo, hi := span(g.count, g.parts, i)
	return elems(buf, lo, hi, g.es)
}

// chainStep sends out to `to` while receiving in from `from`; either side
// is skipped when its peer is chainNone.
func (c *Comm) chainStep(ctx context.Context, to int, out []byte, from int, in []byte) error {
	return c.chainStepReduce(ctx, to, out, from, in, nil, nil)
}

// chainStepReduce is chainStep whose receive, when reduce is not nil, folds
// the incoming data in: in = reduce(acc, incoming).
func (c *Comm) chainStepReduce(ctx context.Context, to int, out []byte, from int, in, acc []byte, reduce dtype.ReduceFunc) error {
	reqs := make([]backends.Request, 0, 2)
	switch {
	case from == chainNone:
	case reduce == nil:
		reqs = append(reqs, c.t.Recv(from, in))
	default:
		reqs = append(reqs, c.t.RecvReduce(from, in, acc, reduce))
	}
	if to != chainNone {
		reqs = append(reqs, c.t.Send(to, out))
	}
	return c.waitAll(ctx, reqs...)
}

// chainPeers returns whom a rank with successor next and predecessor prev
// (either chainNone) sends to and receives from at step s of a pipeline of
// parts segments, where step s forwards segment s-1 and receives segment s.
func chainPeers(s, parts, next, prev int) (to, from int) {
	to, from = next, prev
	if s == 0 {
		to = chainNone // nothing has arrived to forward yet
	}
	if s == parts {
		from = chainNone // every segment has arrived
	}
	return to, from
}

// chainBroadcast passes the root's buffer down the chain root, root+1, ...,
// root+n-1 segment by segment: at step s every rank forwards segment s-1,
// which it received at step s-1, while segment s arrives.
// Cost: (K+n-2)(alpha + beta m/K).
func chainBroadcast(ctx context.Context, c *Comm, a *Args) error {
	n, b := c.size, a.Bytes()
	recv := a.Recv[:b]
	if n == 1 {
		c.copyIfDistinct(recv, a.Send[:b])
		return nil
	}
	vr := relRank(c.rank, a.Root, n)
	next, prev := absRank(vr+1, a.Root, n), absRank(vr-1, a.Root, n)
	buf := recv
	if vr == 0 {
		prev, buf = chainNone, a.Send[:b]
	}
	if vr == n-1 {
		next = chainNone
	}
	seg := newChainSegmenter(a.Count, a.DType.Size())
	for s := range seg.parts + 1 {
		// Forward the segment that arrived last step while the next arrives.
		to, from := chainPeers(s, seg.parts, next, prev)
		if err := c.chainStep(ctx, to, seg.of(buf, s-1), from, seg.of(buf, s)); err != nil {
			return fmt.Errorf("step %d: %w", s, err)
		}
	}
	if vr == 0 {
		c.copyIfDistinct(recv, buf)
	}
	return nil
}

// chainReduce passes partial reductions up the chain root+n-1, ..., root+1,
// root segment by segment: the first rank of the chain sends its input, and
// every later one folds its input into each incoming partial and passes it
// on, the root into its receive buffer. Non-roots keep partials in scratch,
// so their input is never written.
// Cost: (K+n-2)(alpha + (beta+gamma) m/K).
func chainReduce(ctx context.Context, c *Comm, a *Args) error {
	n, b := c.size, a.Bytes()
	send := a.Send[:b]
	if n == 1 {
		c.copyIfDistinct(a.Recv[:b], send)
		return nil
	}
	vr := relRank(c.rank, a.Root, n)
	next, prev := absRank(vr-1, a.Root, n), absRank(vr+1, a.Root, n)
	// partial holds what this rank passes on: its own input at the start of
	// the chain, input folded into the incoming partial after that.
	var partial []byte
	switch vr {
	case 0:
		next, partial = chainNone, a.Recv[:b]
	case n - 1:
		prev, partial = chainNone, send
	default:
		partial = c.scratchBuf(b)
	}
	reduce := dtype.Reducer(a.DType, a.RedOp)
	seg := newChainSegmenter(a.Count, a.DType.Size())
	for s := range seg.parts + 1 {
		// Pass on the partial finished last step while folding our input
		// into the next one as it arrives.
		to, from := chainPeers(s, seg.parts, next, prev)
		err := c.chainStepReduce(ctx, to, seg.of(partial, s-1), from, seg.of(partial, s), seg.of(send, s), reduce)
		if err != nil {
			return fmt.Errorf("step %d: %w", s, err)
		}
	}
	if vr == 0 && a.RedOp == dtype.Avg {
		c.divideBy(a.DType, partial, n)
	}
	return nil
}

// chainGather moves blocks up the chain root+n-1, ..., root+1, root: at
// step s the rank at distance d from the root passes the block that started
// at distance d+s one hop inwards (its own at step 0, after that the one it
// received at step s-1) while the block from distance d+1+s arrives. The
// root receives straight into place; other ranks relay through two scratch
// blocks.
// Cost: (n-1)(alpha + beta m).
func chainGather(ctx context.Context, c *Comm, a *Args) error {
	n, b := c.size, a.Bytes()
	d := relRank(c.rank, a.Root, n)
	// held returns the block from distance d+1+s, which this rank has once
	// step s is done (its own input before step 0).
	var held func(s int) []byte
	if d == 0 {
		c.copyIfDistinct(block(a.Recv, a.Root, b), a.Send[:b])
		held = func(s int) []byte { return block(a.Recv, absRank(1+s, a.Root, n), b) }
	} else {
		relay := c.scratchBuf(2 * b)
		held = func(s int) []byte {
			if s < 0 {
				return a.Send[:b]
			}
			return block(relay, s%2, b)
		}
	}
	for s := range n - 1 {
		// Pass the block from distance d+s inwards while the one from d+1+s
		// arrives.
		to, out := chainNone, []byte(nil)
		if d > 0 && d+s < n {
			to, out = absRank(d-1, a.Root, n), held(s-1)
		}
		from, in := chainNone, []byte(nil)
		if d+1+s < n {
			from, in = absRank(d+1, a.Root, n), held(s)
		}
		if err := c.chainStep(ctx, to, out, from, in); err != nil {
			return fmt.Errorf("step %d: %w", s, err)
		}
	}
	return nil
}

// chainScatter is chainGather run backwards, down the chain root, root+1,
// ..., root+n-1: at step s the root sends the block for distance n-1-s,
// farthest first, and every other rank at distance d passes on the block it
// received at step s-1 while the block for distance d+n-2-s arrives; the
// last to arrive, at step n-2, is its own. Relayed blocks wait in two
// scratch blocks.
// Cost: (n-1)(alpha + beta m).
func chainScatter(ctx context.Context, c *Comm, a *Args) error {
	n, b := c.size, a.Bytes()
	d := relRank(c.rank, a.Root, n)
	recv := a.Recv[:b]
	// held returns the block for distance d+n-2-s, which this rank has once
	// step s is done.
	var held func(s int) []byte
	if d == 0 {
		c.copyIfDistinct(recv, block(a.Send, a.Root, b))
		held = func(s int) []byte { return block(a.Send, absRank(n-2-s, a.Root, n), b) }
	} else {
		relay := c.scratchBuf(2 * b)
		held = func(s int) []byte {
			if s == n-2 {
				return recv
			}
			return block(relay, s%2, b)
		}
	}
	for s := range n - 1 {
		// Pass the block held since last step outwards while the next one
		// arrives.
		to, out := chainNone, []byte(nil)
		if d+1 < n && s >= d {
			to, out = absRank(d+1, a.Root, n), held(s-1)
		}
		from, in := chainNone, []byte(nil)
		if d > 0 && s >= d-1 {
			from, in = absRank(d-1, a.Root, n), held(s)
		}
		if err := c.chainStep(ctx, to, out, from, in); err != nil {
			return fmt.Errorf("step %d: %w", s, err)
		}
	}
	return nil
}
