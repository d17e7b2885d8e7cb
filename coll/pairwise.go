package coll

import (
	"context"
	"fmt"
)

// Pairwise exchange all-to-all: n-1 steps, one message each way per step,
// so every link carries one block at a time; it suits large sizes.

func init() {
	register(AllToAll, "pairwise", pairwiseAllToAll, costs{flat: pairwiseAllToAllCost, levels: pairwiseAllToAllLevelCost})
}

// pairwiseAllToAll keeps its own block, then at step s sends block r+s to
// rank r+s while receiving block r-s from rank r-s. In place, the outgoing
// blocks are saved first: block r-s is overwritten at step s but is not
// sent until step n-s.
// Cost for blocks of b bytes: (n-1)(α + bβ).
func pairwiseAllToAll(ctx context.Context, c *Comm, a *Args) error {
	n, r, b := c.size, c.rank, a.Bytes()
	recv := a.Recv[:n*b]
	out := c.outgoing(a.Send[:n*b], recv)

	// Step 0: our own block stays here.
	c.copyIfDistinct(block(recv, r, b), block(out, r, b))
	// Step s: swap with the ranks s places to either side.
	for s := 1; s < n; s++ {
		to, from := mod(r+s, n), mod(r-s, n)
		if err := c.exchange(ctx, to, block(out, to, b), from, block(recv, from, b)); err != nil {
			return fmt.Errorf("step %d to rank %d, from rank %d: %w", s, to, from, err)
		}
	}
	return nil
}

// pairwiseAllToAllCost: n-1 steps, each exchanging one block.
func pairwiseAllToAllCost(n int, b float64, m Model) float64 {
	return float64(n-1) * (m.Alpha + b*m.Beta)
}

// pairwiseAllToAllLevelCost: a rank copies its own block into place (out
// of place), then at step s = 1, ..., n-1 sends a block s ranks on while
// one arrives from s ranks back.
func pairwiseAllToAllLevelCost(n int, b float64, m Model) float64 {
	steps := func(yield func(shiftStep) bool) {
		for s := 1; s < n; s++ {
			if !yield(shiftStep{shift: s, bytes: b}) {
				return
			}
		}
	}
	return shiftLevels(n, m.copy(b), steps, 0, m)
}
