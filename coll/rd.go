package coll

import (
	"context"
	"fmt"
	"math/bits"

	"github.com/hccl-test/hccl-test/dtype"
)

// Recursive doubling allreduce (Thakur, Rabenseifner and Gropp, 2005;
// MPICH's allreduce_intra_recursive_doubling): whole vectors are exchanged
// with partners at distance 1, 2, 4, ..., so it takes log2 steps where the
// ring takes n-1, at the price of sending the whole vector every step.

func init() {
	register(AllReduce, "rd", rdAllReduce, costs{flat: rdAllReduceCost, levels: rdAllReduceLevelCost, pow2: true})
}

// rdAllReduce folds the world down to p = 2^⌊log2 n⌋ survivors, runs
// log2(p) rounds of exchange-and-reduce between survivors v and v^d, and
// hands the result back to the ranks that were folded away. Every reduction
// is reduce(lower ranks' data, higher ranks' data), so all ranks evaluate
// the same expression and get bitwise the same result.
// Cost for m bytes: (log2 p + 2[n≠p])·(α + mβ) + (log2 p + [n≠p])·mγ.
func rdAllReduce(ctx context.Context, c *Comm, a *Args) error {
	n, r := c.size, c.rank
	send, recv := a.Send[:a.Bytes()], a.Recv[:a.Bytes()]
	reduce, inFirst := c.reducers(a.DType, a.RedOp)
	f := newRDFold(n)
	v := f.survivor(r)

	// Fold, folded side: hand our vector to the odd rank above us and wait
	// for the finished result from it.
	if v < 0 {
		if err := c.send(ctx, r+1, send); err != nil {
			return fmt.Errorf("fold to rank %d: %w", r+1, err)
		}
		if err := c.recv(ctx, r+1, recv); err != nil {
			return fmt.Errorf("unfold from rank %d: %w", r+1, err)
		}
		return nil
	}

	// cur is our partial result: our own input until we first reduce.
	cur := send
	// Fold, surviving side: combine the vector of the even rank below us.
	if f.absorbs(r) {
		if err := c.recvReduce(ctx, r-1, recv, send, inFirst); err != nil {
			return fmt.Errorf("fold from rank %d: %w", r-1, err)
		}
		cur = recv
	}

	// Doubling: at distance d, swap partials with survivor v^d and reduce.
	// Results alternate between recv and scratch so that we never write
	// the buffer we are sending from.
	scratch := c.scratchBuf(len(recv))
	for k, d := 0, 1; d < f.p; k, d = k+1, 2*d {
		peer := f.rank(v ^ d)
		dst := recv
		if aliased(cur, recv) {
			dst = scratch
		}
		red := reduce
		if v&d != 0 {
			red = inFirst // lowFirst(reduce, true)
		}
		if err := c.exchangeReduce(ctx, peer, cur, peer, dst, cur, red); err != nil {
			return fmt.Errorf("step %d with rank %d: %w", k, peer, err)
		}
		cur = dst
	}
	c.copyIfDistinct(recv, cur)
	if a.RedOp == dtype.Avg {
		c.divideBy(a.DType, recv, n)
	}

	// Unfold: return the finished result to the rank we absorbed.
	if f.absorbs(r) {
		if err := c.send(ctx, r-1, recv); err != nil {
			return fmt.Errorf("unfold to rank %d: %w", r-1, err)
		}
	}
	return nil
}

// rdFold maps n ranks onto the p = 2^⌊log2 n⌋ survivors that take part in
// the doubling rounds, as MPICH does. With rem = n-p, each even rank below
// 2·rem folds into the odd rank above it and sits out; odd rank r < 2·rem
// becomes survivor r/2 and rank r >= 2·rem becomes survivor r-rem. Survivor
// v thus stands for a run of ranks that rises with v, which is what lets
// every reduction put the lower ranks' data first.
type rdFold struct{ p, rem int }

func newRDFold(n int) rdFold {
	p := 1 << (bits.Len(uint(n)) - 1)
	return rdFold{p: p, rem: n - p}
}

// survivor returns the survivor index of rank r, or -1 if r sits out.
func (f rdFold) survivor(r int) int {
	switch {
	case r >= 2*f.rem:
		return r - f.rem
	case r%2 == 1:
		return r / 2
	default:
		return -1
	}
}

// rank returns the rank that plays survivor v.
func (f rdFold) rank(v int) int {
	if v < f.rem {
		return 2*v + 1
	}
	return v + f.rem
}

// absorbs reports whether rank r takes in the vector of rank r-1.
func (f rdFold) absorbs(r int) bool { return r < 2*f.rem && r%2 == 1 }

// lowFirst returns the function to give RecvReduce so that it computes
// reduce(lower side's data, higher side's data). RecvReduce passes our own
// accumulator first, so when ours is the higher side (high) the operands
// are swapped. For exact inputs the order does not matter; for floats it
// makes both partners' results identical to the bit, NaN payloads included.
func lowFirst(reduce dtype.ReduceFunc, high bool) dtype.ReduceFunc {
	if !high {
		return reduce
	}
	return func(dst, acc, in []byte) { reduce(dst, in, acc) }
}

// rdAllReduceCost is the cost given on rdAllReduce.
func rdAllReduceCost(n int, b float64, m Model) float64 {
	_, e := pow2Below(n)
	l := log2Floor(n)
	return (l+2*e)*m.Alpha + e*b*m.Beta + (l+e)*m.moveReduce(b)
}

// rdAllReduceLevelCost: log2 n exchanges of the whole vector at distances
// 1, 2, 4, ..., each received and reduced.
func rdAllReduceLevelCost(n int, b float64, m Model) float64 {
	var t float64
	for d := 1; d < n; d *= 2 {
		l := m.level(d)
		t += l.Alpha + l.moveReduce(b)
	}
	return t
}
