package coll

import (
	"context"
	"fmt"

	"github.com/hccl-test/hccl-test/dtype"
)

// Ring algorithms: every rank sends to its right neighbour (rank+1) and
// receives from its left (rank-1). Each moves the least possible data per
// rank, (n-1)/n of the buffer per phase, in n-1 steps per phase.

func init() {
	register(AllReduce, "ring", ringAllReduce, costs{flat: ringAllReduceCost, levels: ringAllReduceLevelCost})
	register(ReduceScatter, "ring", ringReduceScatter, costs{flat: ringReduceScatterCost, levels: ringReduceScatterLevelCost})
	register(AllGather, "ring", ringAllGather, costs{flat: ringAllGatherCost, levels: ringAllGatherLevelCost})
}

// ringAllReduce is a ring reduce-scatter followed by a ring allgather over
// the same n near-equal parts of the buffer.
func ringAllReduce(ctx context.Context, c *Comm, a *Args) error {
	n, r, es := c.size, c.rank, a.DType.Size()
	send, recv := a.Send[:a.Bytes()], a.Recv[:a.Bytes()]
	part := func(buf []byte, i int) []byte {
		lo, hi := span(a.Count, n, mod(i, n))
		return elems(buf, lo, hi, es)
	}
	if n == 1 {
		c.copyIfDistinct(recv, send)
		return nil
	}
	// Reduce-scatter, after which part r is complete here; then allgather.
	if err := ringReduceScatterParts(ctx, c, send, recv, part, dtype.Reducer(a.DType, a.RedOp)); err != nil {
		return fmt.Errorf("reduce-scatter %w", err)
	}
	if a.RedOp == dtype.Avg {
		c.divideBy(a.DType, part(recv, r), n)
	}
	if err := ringAllGatherParts(ctx, c, recv, part); err != nil {
		return fmt.Errorf("allgather %w", err)
	}
	return nil
}

// ringReduceScatterParts is the first phase of ringAllReduce on c, with
// the vector cut into c.size parts (part(buf, i), i taken mod c.size, of
// any sizes): rank r ends with part r of recv reduced over c's ranks. At
// step s it passes on part r-s-1 (its input at step 0, the partial it
// made at step s-1 after that) and folds its input into part r-s-2 as it
// arrives. Partials go into recv only; send is only read.
func ringReduceScatterParts(ctx context.Context, c *Comm, send, recv []byte, part func([]byte, int) []byte, reduce dtype.ReduceFunc) error {
	n, r := c.size, c.rank
	if n == 1 {
		c.copyIfDistinct(part(recv, r), part(send, r))
		return nil
	}
	right, left := mod(r+1, n), mod(r-1, n)
	for s := range n - 1 {
		out := part(recv, r-s-1)
		if s == 0 {
			out = part(send, r-1)
		}
		in := r - s - 2
		if err := c.exchangeReduce(ctx, right, out, left, part(recv, in), part(send, in), reduce); err != nil {
			return fmt.Errorf("step %d: %w", s, err)
		}
	}
	return nil
}

// ringAllGatherParts is the second phase of ringAllReduce on c: each rank
// r holding part r of buf, at step s it passes on part r-s and receives
// part r-s-1, until it holds all c.size parts.
func ringAllGatherParts(ctx context.Context, c *Comm, buf []byte, part func([]byte, int) []byte) error {
	n, r := c.size, c.rank
	right, left := mod(r+1, n), mod(r-1, n)
	for s := range n - 1 {
		if err := c.exchange(ctx, right, part(buf, r-s), left, part(buf, r-s-1)); err != nil {
			return fmt.Errorf("step %d: %w", s, err)
		}
	}
	return nil
}

// ringReduceScatter passes partial sums around the ring: at step s rank r
// sends the partial of block r-s-1 and receives the partial of block r-s-2,
// adding its own input; the last block to arrive is its own, r. Partials
// live in two scratch blocks, so the input is never written (in-place calls
// alias Recv with the input's block r, which is read only at the last step).
func ringReduceScatter(ctx context.Context, c *Comm, a *Args) error {
	n, r, b := c.size, c.rank, a.Bytes()
	blk := func(i int) []byte { return block(a.Send, mod(i, n), b) }
	recv := a.Recv[:b]
	if n == 1 {
		c.copyIfDistinct(recv, blk(0))
		return nil
	}
	reduce := dtype.Reducer(a.DType, a.RedOp)
	right, left := mod(r+1, n), mod(r-1, n)
	scratch := c.scratchBuf(2 * b)
	partial := [2][]byte{scratch[:b], scratch[b:]}
	for s := range n - 1 {
		out := blk(r - 1)
		if s > 0 {
			out = partial[(s-1)%2]
		}
		dst := recv
		if s < n-2 {
			dst = partial[s%2]
		}
		if err := c.exchangeReduce(ctx, right, out, left, dst, blk(r-s-2), reduce); err != nil {
			return fmt.Errorf("step %d: %w", s, err)
		}
	}
	if a.RedOp == dtype.Avg {
		c.divideBy(a.DType, recv, n)
	}
	return nil
}

// ringAllGather places its own block, then at step s passes on block r-s and
// receives block r-s-1.
func ringAllGather(ctx context.Context, c *Comm, a *Args) error {
	n, r, b := c.size, c.rank, a.Bytes()
	blk := func(i int) []byte { return block(a.Recv, mod(i, n), b) }
	c.copyIfDistinct(blk(r), a.Send[:b])
	right, left := mod(r+1, n), mod(r-1, n)
	for s := range n - 1 {
		if err := c.exchange(ctx, right, blk(r-s), left, blk(r-s-1)); err != nil {
			return fmt.Errorf("step %d: %w", s, err)
		}
	}
	return nil
}

// ringAllReduceCost: 2(n-1) steps, each moving and (in the first phase)
// reducing 1/n of the vector.
func ringAllReduceCost(n int, b float64, m Model) float64 {
	k := float64(n - 1)
	return 2*k*m.Alpha + k/float64(n)*b*m.Beta + m.moveReduce(k/float64(n)*b)
}

// ringReduceScatterCost: n-1 steps, each moving and reducing one block.
func ringReduceScatterCost(n int, b float64, m Model) float64 {
	return float64(n-1) * (m.Alpha + m.moveReduce(b))
}

// ringAllGatherCost: n-1 steps, each moving one block.
func ringAllGatherCost(n int, b float64, m Model) float64 {
	return float64(n-1) * (m.Alpha + b*m.Beta)
}

// ringLevels is a ring of steps steps, each moving a block of blk bytes to
// the next rank, reduces of which also reduce it, on two levels: the
// slower of the crossing links' ports, which send their steps' blocks back
// to back (one latency at the end), and a block's way round the ring,
// which crosses servers on one step in P and pays each step's latency,
// transfer and reduction. On one level the second is the ring's cost.
func ringLevels(n int, steps, reduces, blk float64, m Model) float64 {
	_, p, _ := m.split(n)
	intra, inter := m.intraLevel(), m.crossing(1)
	port := steps*blk*inter.Beta + inter.Alpha
	cross := 1 / float64(p)
	move := steps * (cross*(inter.Alpha+blk*inter.Beta) + (1-cross)*(intra.Alpha+blk*intra.Beta))
	return max(port, m.received(move, reduces*blk))
}

// ringAllReduceLevelCost: 2(n-1) steps of 1/n of the vector, the first
// n-1 reducing it.
func ringAllReduceLevelCost(n int, b float64, m Model) float64 {
	k := float64(n - 1)
	return ringLevels(n, 2*k, k, b/float64(n), m)
}

// ringReduceScatterLevelCost: n-1 steps, each moving and reducing one
// block.
func ringReduceScatterLevelCost(n int, b float64, m Model) float64 {
	k := float64(n - 1)
	return ringLevels(n, k, k, b, m)
}

// ringAllGatherLevelCost: n-1 steps, each moving one block.
func ringAllGatherLevelCost(n int, b float64, m Model) float64 {
	return ringLevels(n, float64(n-1), 0, b, m)
}
