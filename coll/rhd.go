package coll

import (
	"context"
	"fmt"

	"github.com/hccl-test/hccl-test/dtype"
)

// Recursive halving and doubling (Rabenseifner's algorithm; Thakur,
// Rabenseifner and Gropp, 2005; HCCL's H-D_R): a reduce-scatter by recursive
// halving, where partners at distance p/2, p/4, ..., 1 each keep half of
// what they still reduce and swap the other half, then for allreduce an
// allgather by recursive doubling. It takes 2·log2 p steps and moves no more
// data than the ring. A world that is not a power of two is folded onto
// p = 2^⌊log2 n⌋ survivors as rd.go folds it (rdFold).

func init() {
	register(AllReduce, "rhd", rhdAllReduce, costs{flat: rhdAllReduceCost, levels: rhdAllReduceLevelCost, pow2: true})
	register(ReduceScatter, "rhd", rhdReduceScatter, costs{flat: rhdReduceScatterCost, levels: rhdReduceScatterLevelCost, pow2: true})
}

// rhdAllReduce cuts the vector into p near-equal parts, one per survivor:
//
//  1. fold: each even rank r < 2·rem sends its vector to rank r+1, which
//     reduces it into its own, and sits out until step 5;
//  2. recursive halving (rhdHalve): survivor v ends with part v reduced
//     over every rank;
//  3. Avg only: part v is divided by n;
//  4. recursive doubling (rdDouble): every survivor gathers all p parts;
//  5. unfold: each rank that absorbed one sends it the result.
//
// Partials are written only into the receive buffer, so no scratch is used.
// Every part is reduced on one rank only and copied everywhere else, so all
// ranks end bitwise equal. Each step puts the lower survivor's partial
// first, but the halving does not combine ranks in rank order (survivors v
// and v+p/2 meet first), which commutative reductions do not need.
// Cost for m bytes, p = 2^⌊log2 n⌋, e = [n≠p]:
// (2·log2 p + 2e)α + (2(p-1)/p + 2e)·mβ + ((p-1)/p + e)·mγ.
func rhdAllReduce(ctx context.Context, c *Comm, a *Args) error {
	n, r, es := c.size, c.rank, a.DType.Size()
	send, recv := a.Send[:a.Bytes()], a.Recv[:a.Bytes()]
	reduce, inFirst := c.reducers(a.DType, a.RedOp)
	f := newRDFold(n)
	v := f.survivor(r)
	if v < 0 {
		// Step 1, folded side, and step 5: hand over, take the result.
		return sitOut(ctx, c, send, recv)
	}
	cur := send
	if f.absorbs(r) {
		// Step 1, surviving side: recv = rank r-1's vector ⊕ ours.
		if err := c.recvReduce(ctx, r-1, recv, send, inFirst); err != nil {
			return fmt.Errorf("fold from rank %d: %w", r-1, err)
		}
		cur = recv
	}
	off := func(i int) int { lo, _ := span(a.Count, f.p, i); return lo * es }
	mine := recv[off(v):off(v+1)]
	// Step 2.
	res, err := rhdHalve(ctx, c, f, v, cur, recv, off, reduce, inFirst)
	if err != nil {
		return err
	}
	c.copyIfDistinct(mine, res[off(v):off(v+1)]) // a single rank reduced nothing
	// Step 3.
	if a.RedOp == dtype.Avg {
		c.divideBy(a.DType, mine, n)
	}
	// Steps 4 and 5.
	if err := rdDouble(ctx, c, f, v, recv, off); err != nil {
		return err
	}
	return unfold(ctx, c, f, recv)
}

// rhdReduceScatter works on the n blocks of the input, survivor v standing
// for the blocks of its run of ranks [runStart(v), runStart(v+1)):
//
//  1. fold: each even rank r < 2·rem sends its whole input to rank r+1,
//     which reduces it into its own, and sits out until step 4;
//  2. recursive halving (rhdHalve) over the survivors' runs of blocks:
//     survivor v ends with the blocks of its run reduced over every rank;
//  3. Avg only: those blocks are divided by n;
//  4. unfold: each rank that absorbed one sends it its block;
//  5. the survivor copies its own block to the receive buffer.
//
// Halving keeps, at each step, the half of the survivors that holds v, so
// survivor v's run is the last part left and every rank r ends with block
// r. Partials live in scratch laid out like the input, which is never
// written (in place, the receive buffer is the input's block r).
// Cost for blocks of b bytes, p = 2^⌊log2 n⌋, e = [n≠p]: an absorbing
// survivor is on the critical path, with (log2 p + 2e)α + (n-1 + e·n)·bβ +
// (1+e)(n-1)·bγ, plus the copy of step 5 (Model.copy).
func rhdReduceScatter(ctx context.Context, c *Comm, a *Args) error {
	n, r, b := c.size, c.rank, a.Bytes()
	send, recv := a.Send[:n*b], a.Recv[:b]
	reduce, inFirst := c.reducers(a.DType, a.RedOp)
	f := newRDFold(n)
	v := f.survivor(r)
	if v < 0 {
		// Step 1, folded side, and step 4: hand over, take our block.
		return sitOut(ctx, c, send, recv)
	}
	work := c.scratchBuf(n * b)
	cur := send
	if f.absorbs(r) {
		// Step 1, surviving side: work = rank r-1's input ⊕ ours.
		if err := c.recvReduce(ctx, r-1, work, send, inFirst); err != nil {
			return fmt.Errorf("fold from rank %d: %w", r-1, err)
		}
		cur = work
	}
	// Step 2: survivor i's part is the blocks of its run.
	off := func(i int) int { return f.runStart(i) * b }
	res, err := rhdHalve(ctx, c, f, v, cur, work, off, reduce, inFirst)
	if err != nil {
		return err
	}
	run := res[off(v):off(v+1)]
	// Step 3.
	if a.RedOp == dtype.Avg {
		c.divideBy(a.DType, run, n)
	}
	// Step 4: the run's first block is rank r-1's when r absorbed it.
	if f.absorbs(r) {
		if err := c.send(ctx, r-1, run[:b]); err != nil {
			return fmt.Errorf("unfold to rank %d: %w", r-1, err)
		}
	}
	// Step 5: our block is the run's last.
	c.copyIfDistinct(recv, run[len(run)-b:])
	return nil
}

// rhdHalve is the reduce-scatter among the p survivors of f by recursive
// halving. Survivor i's part of a buffer is [off(i), off(i+1)). This
// survivor, v, starts from its data in cur and writes partials into work,
// which has the same layout and may be cur itself. At distance d = p/2,
// p/4, ..., 1, of the range of 2d survivors' parts it still reduces, it
// keeps the half that holds part v and sends the other half to survivor
// v^d, while that one's copy of the kept half arrives and is folded into
// work, the lower survivor's data first. After log2 p steps part v is
// reduced over all survivors; rhdHalve returns the buffer holding it (cur
// when p is 1).
func rhdHalve(ctx context.Context, c *Comm, f rdFold, v int, cur, work []byte, off func(int) int, reduce, inFirst dtype.ReduceFunc) ([]byte, error) {
	part := func(buf []byte, lo, hi int) []byte { return buf[off(lo):off(hi)] }
	lo := 0 // we still reduce the parts of survivors [lo, lo+2d)
	for k, d := 0, f.p/2; d >= 1; k, d = k+1, d/2 {
		keep, give := lo, lo+d // first survivors of the kept and given halves
		high := v&d != 0
		if high {
			keep, give = give, keep
		}
		peer := f.rank(v ^ d)
		err := c.exchangeReduce(ctx, peer, part(cur, give, give+d), peer,
			part(work, keep, keep+d), part(cur, keep, keep+d), pickFirst(reduce, inFirst, high))
		if err != nil {
			return nil, fmt.Errorf("halving step %d with rank %d: %w", k, peer, err)
		}
		cur, lo = work, keep
	}
	return cur, nil
}

// rhdAllReduceCost is the cost given on rhdAllReduce.
func rhdAllReduceCost(n int, b float64, m Model) float64 {
	p, e := pow2Below(n)
	l, frac := log2Floor(n), (p-1)/p
	return (2*l+2*e)*m.Alpha + (frac+e)*b*m.Beta + m.moveReduce((frac+e)*b)
}

// rhdReduceScatterCost is the cost given on rhdReduceScatter.
func rhdReduceScatterCost(n int, b float64, m Model) float64 {
	_, e := pow2Below(n)
	k := float64(n - 1)
	return (log2Floor(n)+2*e)*m.Alpha + (e*float64(n)-e*k)*b*m.Beta + m.moveReduce((1+e)*k*b) + m.copy(b)
}

// rhdAllReduceLevelCost: recursive halving at distances n/2, n/4, ..., 1,
// exchanging and reducing half of what is left each time, then recursive
// doubling back at distances 1, 2, ..., n/2, moving the same amounts.
func rhdAllReduceLevelCost(n int, b float64, m Model) float64 {
	var t float64
	part := b
	for d := n / 2; d >= 1; d /= 2 {
		part /= 2
		l := m.level(d)
		t += l.Alpha + l.moveReduce(part) + l.Alpha + part*l.Beta
	}
	return t
}

// rhdReduceScatterLevelCost: halving at distances n/2, n/4, ..., 1, each
// exchanging and reducing d blocks, then the copy of the result into
// place.
func rhdReduceScatterLevelCost(n int, b float64, m Model) float64 {
	var t float64
	for d := n / 2; d >= 1; d /= 2 {
		l := m.level(d)
		t += l.Alpha + l.moveReduce(float64(d)*b)
	}
	return t + m.copy(b)
}
