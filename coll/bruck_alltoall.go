package coll

import (
	"context"
	"fmt"
	"math/bits"
)

// Bruck's all-to-all (Bruck et al., 1997; HCCL's NB): ⌈log2 n⌉ steps for
// any n, where pairwise exchange takes n-1, at the price of sending each
// block up to ⌈log2 n⌉ times and packing it on the way. It suits small
// blocks on many ranks.

func init() {
	register(AllToAll, "bruck", bruckAllToAll, costs{flat: bruckAllToAllCost, levels: bruckAllToAllLevelCost})
}

// bruckAllToAll works in scratch, as a work area of n blocks followed by
// two packing areas of ⌊n/2⌋ blocks each:
//
//  1. rotation: work block i = the block for rank r+i;
//  2. step k = 0, 1, ..., ⌈log2 n⌉-1, d = 2^k: pack the work blocks whose
//     index has bit k set, send them to rank r+d while the same blocks of
//     rank r-d arrive, and unpack them over the ones sent. A block at index
//     i moves d ranks on exactly when bit k of i is set, so in all it moves
//     i ranks on: it started at rank r-i with index i and was bound for
//     rank r;
//  3. inverse rotation: the block from rank j, at work index r-j, goes to
//     block j of the receive buffer.
//
// The input is read only in step 1, so in-place calls need no more care.
// Cost for blocks of b bytes, with P(n) = Σ_{i<n} popcount(i) blocks sent
// in all (about n/2·log2 n): ⌈log2 n⌉α + P(n)·bβ, plus the local copies
// (2n + 2P(n) blocks) at Model.copy, as for Bruck's
// allgather.
func bruckAllToAll(ctx context.Context, c *Comm, a *Args) error {
	n, r, b := c.size, c.rank, a.Bytes()
	scratch := c.scratchBuf((n + 2*(n/2)) * b)
	work := scratch[:n*b]
	packOut, packIn := scratch[n*b:(n+n/2)*b], scratch[(n+n/2)*b:]
	workBlk := func(i int) []byte { return block(work, i, b) }

	// Step 1.
	for i := range n {
		c.copy(workBlk(i), block(a.Send, mod(r+i, n), b))
	}
	// Step 2.
	for k, d := 0, 1; d < n; k, d = k+1, 2*d {
		cnt := 0
		for i := d; i < n; i++ {
			if i&d != 0 {
				c.copy(block(packOut, cnt, b), workBlk(i))
				cnt++
			}
		}
		to, from := mod(r+d, n), mod(r-d, n)
		if err := c.exchange(ctx, to, packOut[:cnt*b], from, packIn[:cnt*b]); err != nil {
			return fmt.Errorf("step %d to rank %d, from rank %d: %w", k, to, from, err)
		}
		cnt = 0
		for i := d; i < n; i++ {
			if i&d != 0 {
				c.copy(workBlk(i), block(packIn, cnt, b))
				cnt++
			}
		}
	}
	// Step 3.
	for j := range n {
		c.copy(block(a.Recv, j, b), workBlk(mod(r-j, n)))
	}
	return nil
}

// bruckBlocksSent returns P(n) = Σ_{i<n} popcount(i), the number of blocks
// each rank sends in Bruck's all-to-all: for each bit, the indices below n
// with that bit set.
func bruckBlocksSent(n int) int {
	total := 0
	for k := range bits.Len(uint(n)) {
		total += bruckStepBlocks(n, 1<<k)
	}
	return total
}

// bruckStepBlocks returns how many blocks each rank sends at the step of
// distance d (a power of two) of Bruck's all-to-all: the indices below n
// with bit d set, d in every 2d.
func bruckStepBlocks(n, d int) int { return n/(2*d)*d + max(0, n%(2*d)-d) }

// bruckAllToAllCost: ⌈log2 n⌉ steps sending P(n) blocks in all, and
// 2n + 2P(n) blocks copied locally.
func bruckAllToAllCost(n int, b float64, m Model) float64 {
	p := float64(bruckBlocksSent(n))
	return log2Ceil(n)*m.Alpha + p*b*m.Beta + m.copy((2*float64(n)+2*p)*b)
}

// bruckAllToAllLevelCost: a rank rotates its n blocks into its work area,
// then at distance d = 1, 2, 4, ... packs the blocks whose index has bit d
// set, sends them d ranks on while as many arrive from d ranks back, and
// unpacks those; then it rotates the n blocks out.
func bruckAllToAllLevelCost(n int, b float64, m Model) float64 {
	steps := func(yield func(shiftStep) bool) {
		for d := 1; d < n; d *= 2 {
			blocks := float64(bruckStepBlocks(n, d)) * b
			if !yield(shiftStep{shift: d, bytes: blocks, pre: m.copy(blocks), post: m.copy(blocks)}) {
				return
			}
		}
	}
	rotate := m.copy(float64(n) * b)
	return shiftLevels(n, rotate, steps, rotate, m)
}
