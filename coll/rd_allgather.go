package coll

import (
	"context"
	"fmt"
)

// Recursive doubling allgather (Thakur, Rabenseifner and Gropp, 2005):
// partners at distance 1, 2, 4, ... swap everything they have gathered so
// far, so it takes log2 steps where the ring takes n-1, and each rank still
// receives every block once. A world that is not a power of two is folded
// onto p = 2^⌊log2 n⌋ survivors as rd.go folds it (rdFold): survivor v
// gathers for the run of ranks [runStart(v), runStart(v+1)), which is one
// rank or two, and hands the finished vector to the rank it stood for.

func init() {
	register(AllGather, "rd", rdAllGather, costs{flat: rdAllGatherCost, levels: rdAllGatherLevelCost, pow2: true})
}

// rdAllGather places its own block, then:
//
//  1. fold: each even rank r < 2·rem sends its block to rank r+1 and sits
//     out until step 3;
//  2. doubling: survivor v, holding the blocks of survivors
//     [v &^ (d-1), +d), trades them at d = 1, 2, ..., p/2 for those of
//     survivor v^d (rdDouble);
//  3. unfold: each rank that absorbed one sends it the whole result.
//
// Blocks go straight to their places in the receive buffer; no scratch.
// Cost for blocks of b bytes, p = 2^⌊log2 n⌋ and e = [n≠p]:
// (log2 p + 2e)α + (n-1 + e·n)·bβ.
func rdAllGather(ctx context.Context, c *Comm, a *Args) error {
	n, r, b := c.size, c.rank, a.Bytes()
	recv := a.Recv[:n*b]
	f := newRDFold(n)
	v := f.survivor(r)
	if v < 0 {
		// Step 1, folded side: our block to r+1; step 3: everything back.
		return sitOut(ctx, c, a.Send[:b], recv)
	}
	c.copyIfDistinct(block(recv, r, b), a.Send[:b])
	if f.absorbs(r) {
		// Step 1, surviving side: the block of rank r-1 goes in its place.
		if err := c.recv(ctx, r-1, block(recv, r-1, b)); err != nil {
			return fmt.Errorf("fold from rank %d: %w", r-1, err)
		}
	}
	// Step 2: survivor i's blocks are those of its run of ranks.
	off := func(i int) int { return f.runStart(i) * b }
	if err := rdDouble(ctx, c, f, v, recv, off); err != nil {
		return err
	}
	return unfold(ctx, c, f, recv)
}

// rdDouble is the allgather among the p survivors of f by recursive
// doubling. Survivor i's part of buf is buf[off(i):off(i+1)], and this
// survivor, v, starts with its own part complete. At distance d = 1, 2, ...,
// p/2 it holds the parts of survivors [v &^ (d-1), +d), which it sends to
// survivor v^d while receiving that one's d parts into their places; after
// log2 p steps it holds every part.
func rdDouble(ctx context.Context, c *Comm, f rdFold, v int, buf []byte, off func(int) int) error {
	part := func(lo, hi int) []byte { return buf[off(lo):off(hi)] }
	for k, d := 0, 1; d < f.p; k, d = k+1, 2*d {
		lo := v &^ (d - 1) // the first survivor whose parts we hold
		peer := f.rank(v ^ d)
		if err := c.exchange(ctx, peer, part(lo, lo+d), peer, part(lo^d, lo^d+d)); err != nil {
			return fmt.Errorf("doubling step %d with rank %d: %w", k, peer, err)
		}
	}
	return nil
}

// runStart returns the first rank of the run that survivor v stands for:
// ranks 2v and 2v+1 for v < rem, rank v+rem after that. runStart(p) is n,
// so survivor v's run is [runStart(v), runStart(v+1)).
func (f rdFold) runStart(v int) int {
	if v < f.rem {
		return 2 * v
	}
	return v + f.rem
}

// sitOut is what a rank that the fold leaves out does: it sends out to rank
// r+1, which works for both, and receives its result into in from it.
func sitOut(ctx context.Context, c *Comm, out, in []byte) error {
	peer := c.rank + 1
	if err := c.send(ctx, peer, out); err != nil {
		return fmt.Errorf("fold to rank %d: %w", peer, err)
	}
	if err := c.recv(ctx, peer, in); err != nil {
		return fmt.Errorf("unfold from rank %d: %w", peer, err)
	}
	return nil
}

// unfold sends res to rank r-1 if this rank absorbed it in the fold.
func unfold(ctx context.Context, c *Comm, f rdFold, res []byte) error {
	if !f.absorbs(c.rank) {
		return nil
	}
	if err := c.send(ctx, c.rank-1, res); err != nil {
		return fmt.Errorf("unfold to rank %d: %w", c.rank-1, err)
	}
	return nil
}

// rdAllGatherCost is the cost given on rdAllGather: on the critical path an
// absorbing survivor takes one block in the fold, n-2 in the doubling and
// sends n in the unfold.
func rdAllGatherCost(n int, b float64, m Model) float64 {
	_, e := pow2Below(n)
	nf := float64(n)
	return (log2Floor(n)+2*e)*m.Alpha + (nf-1+e*nf)*b*m.Beta
}

// rdAllGatherLevelCost: exchanges at distances 1, 2, 4, ..., each of the d
// blocks gathered so far.
func rdAllGatherLevelCost(n int, b float64, m Model) float64 {
	var t float64
	for d := 1; d < n; d *= 2 {
		l := m.level(d)
		t += l.Alpha + float64(d)*b*l.Beta
	}
	return t
}
