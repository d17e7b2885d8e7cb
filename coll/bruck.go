package coll

import (
	"context"
	"fmt"
)

// Bruck's allgather (Bruck et al., 1997): ⌈log2 n⌉ steps for any n, where
// recursive doubling needs a power of two. Each rank gathers the blocks of
// ranks r, r+1, r+2, ... in that order into a working buffer, doubling what
// it holds every step, and rotates them into place at the end.

func init() {
	register(AllGather, "bruck", bruckAllGather, costs{flat: bruckAllGatherCost, levels: bruckAllGatherLevelCost})
}

// bruckAllGather starts from its own block; at step k, with d = 2^k, it
// sends the first min(d, n-d) blocks it holds to rank r-d and appends as
// many from rank r+d. Block i of the working buffer is then rank r+i's.
// Cost for blocks of b bytes: ⌈log2 n⌉α + (n-1)bβ.
func bruckAllGather(ctx context.Context, c *Comm, a *Args) error {
	n, r, b := c.size, c.rank, a.Bytes()
	work := c.scratchBuf(n * b)
	held := func(lo, hi int) []byte { return work[lo*b : hi*b] }

	// Step 0: we hold our own block.
	c.copy(held(0, 1), a.Send[:b])
	// Step k: trade the first blocks we hold for those rank r+d holds.
	for k, d := 0, 1; d < n; k, d = k+1, 2*d {
		cnt := min(d, n-d)
		to, from := mod(r-d, n), mod(r+d, n)
		if err := c.exchange(ctx, to, held(0, cnt), from, held(d, d+cnt)); err != nil {
			return fmt.Errorf("step %d to rank %d, from rank %d: %w", k, to, from, err)
		}
	}
	// Last: rotate down by r blocks, so rank j's block lands at block j:
	// held blocks 0..n-r-1 belong to ranks r..n-1, the rest to 0..r-1.
	c.copy(a.Recv[r*b:n*b], held(0, n-r))
	c.copy(a.Recv[:r*b], held(n-r, n))
	return nil
}

// bruckAllGatherCost: ceil(log2 n) steps moving n-1 blocks in all, plus
// the local copies in and out of the work area (Model.copy).
func bruckAllGatherCost(n int, b float64, m Model) float64 {
	return log2Ceil(n)*m.Alpha + float64(n-1)*b*m.Beta + m.copy(2*float64(n)*b)
}

// bruckAllGatherLevelCost: a rank copies its own block into its work area,
// then at distance d = 1, 2, 4, ... sends the first min(d, n-d) blocks it
// holds d ranks back while as many arrive from d ranks on, then rotates
// all n blocks into place: n+1 blocks copied in all. (The one-level
// formula, bruckAllGatherCost, charges 2n.)
func bruckAllGatherLevelCost(n int, b float64, m Model) float64 {
	steps := func(yield func(shiftStep) bool) {
		for d := 1; d < n; d *= 2 {
			if !yield(shiftStep{shift: -d, bytes: float64(min(d, n-d)) * b}) {
				return
			}
		}
	}
	return shiftLevels(n, m.copy(b), steps, m.copy(float64(n)*b), m)
}
