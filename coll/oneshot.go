package coll

import (
	"context"
	"fmt"

	"github.com/hccl-test/hccl-test/dtype"
)

// One-shot and two-shot allreduce: direct algorithms in which every rank
// messages every other rank at once, as NCCL and vendor libraries use on
// shared memory and NVLink. One-shot moves n-1 whole vectors per rank in a
// single step of latency; two-shot is a direct reduce-scatter followed by a
// direct allgather, two steps that move about twice the vector. Reductions
// run in rank order, ((v0 ⊕ v1) ⊕ v2) ⊕ ..., on whichever rank does them.

func init() {
	register(AllReduce, "oneshot", oneshotAllReduce, costs{flat: oneshotAllReduceCost, levels: oneshotAllReduceLevelCost})
	register(AllReduce, "twoshot", twoshotAllReduce, costs{flat: twoshotAllReduceCost, levels: twoshotAllReduceLevelCost})
}

// oneshotAllReduce:
//
//  1. posts the send of its whole vector to every other rank;
//  2. folds all n vectors into the receive buffer in rank order
//     (reduceRankOrder), each received straight into the reduction; on shm
//     the receiver reads the sender's buffer, so this is one pass over
//     each vector;
//  3. waits for its sends, and for Avg divides by n.
//
// Every rank evaluates the same expression in the same order, so all end
// bitwise equal. In place, the vector is first saved to scratch, since the
// pending sends own it while the result is written.
// Cost for m bytes: rankOrderStep(n-1), that is about
// directAlpha(n-1) + (n-1)·mβ + (n-1)·mγ (the in-place
// copy, as in the other direct algorithms, is not counted).
func oneshotAllReduce(ctx context.Context, c *Comm, a *Args) error {
	n, r := c.size, c.rank
	recv := a.Recv[:a.Bytes()]
	out := c.outgoing(a.Send[:a.Bytes()], recv)
	reduce, inFirst := c.reducers(a.DType, a.RedOp)

	// Step 1.
	sends := c.postSends(others(r, n, +1), func(int) []byte { return out })
	// Step 2.
	err := c.reduceRankOrder(ctx, recv, out, reduce, inFirst)
	// Step 3.
	if serr := c.waitAll(ctx, sends...); err == nil && serr != nil {
		err = fmt.Errorf("sends: %w", serr)
	}
	if err != nil {
		return err
	}
	if a.RedOp == dtype.Avg {
		c.divideBy(a.DType, recv, n)
	}
	return nil
}

// twoshotAllReduce cuts the vector into n near-equal parts:
//
//  1. direct reduce-scatter: it posts the send of part j of its input to
//     every rank j, then folds part r from all ranks in rank order
//     (reduceRankOrder) into part r of the receive buffer;
//  2. Avg only: part r is divided by n;
//  3. direct allgather: it posts the send of part r to every other rank and
//     the receive of part j from every rank j, and waits for them all.
//
// Each part is reduced on one rank only and copied to the others, so all
// ranks end bitwise equal. In place, a rank after the first two saves its
// own part r to scratch before it receives rank 0's copy over it.
// Cost for m bytes: a rankOrderStep and a directStep of n-1 messages of
// m/n, about 2·directAlpha(n-1) + 2(n-1)/n·mβ + (n-1)/n·mγ.
func twoshotAllReduce(ctx context.Context, c *Comm, a *Args) error {
	n, r, es := c.size, c.rank, a.DType.Size()
	send, recv := a.Send[:a.Bytes()], a.Recv[:a.Bytes()]
	part := func(buf []byte, i int) []byte {
		lo, hi := span(a.Count, n, i)
		return elems(buf, lo, hi, es)
	}
	reduce, inFirst := c.reducers(a.DType, a.RedOp)
	mine := part(recv, r)

	// Step 1.
	sends := c.postSends(others(r, n, +1), func(j int) []byte { return part(send, j) })
	own := part(send, r)
	if aliased(own, mine) && r >= 2 {
		saved := c.scratchBuf(len(own))
		c.copy(saved, own)
		own = saved
	}
	err := c.reduceRankOrder(ctx, mine, own, reduce, inFirst)
	if serr := c.waitAll(ctx, sends...); err == nil && serr != nil {
		err = fmt.Errorf("reduce-scatter sends: %w", serr)
	}
	if err != nil {
		return fmt.Errorf("reduce-scatter: %w", err)
	}
	// Step 2.
	if a.RedOp == dtype.Avg {
		c.divideBy(a.DType, mine, n)
	}
	// Step 3.
	recvs := c.postRecvs(others(r, n, -1), func(j int) []byte { return part(recv, j) })
	sends = c.postSends(others(r, n, +1), func(int) []byte { return mine })
	if err := c.waitAll(ctx, append(recvs, sends...)...); err != nil {
		return fmt.Errorf("allgather: %w", err)
	}
	return nil
}

// reduceRankOrder sets dst to v0 ⊕ v1 ⊕ ... ⊕ v(n-1), evaluated left to
// right, where this rank's own vector is own and every other rank's arrives
// in one message of len(dst) bytes. The receives share dst, so each is
// posted once the one before is done; the peers' sends must already be in
// flight. own may alias dst only on ranks 0 and 1, which read it before
// anything is written there. inFirst is reduce with the incoming vector
// first (lowFirst), which rank 1 receives v0 with.
func (c *Comm) reduceRankOrder(ctx context.Context, dst, own []byte, reduce, inFirst dtype.ReduceFunc) error {
	n, r := c.size, c.rank
	acc := own // v0 ⊕ ... ⊕ v(j-1) once step j starts; own only if r == 0
	for j := range n {
		var err error
		switch {
		case j == r && r == 0:
			continue // v0 is ours: acc is already right
		case j == r && r == 1:
			continue // folded in with v0 at j = 0
		case j == r:
			c.reduceLocal(reduce, dst, acc, own)
		case j == 0 && r == 1:
			// dst = v0 ⊕ v1 in one pass, the incoming v0 first.
			err = c.recvReduce(ctx, 0, dst, own, inFirst)
		case j == 0:
			err = c.recv(ctx, 0, dst)
		default:
			err = c.recvReduce(ctx, j, dst, acc, reduce)
		}
		if err != nil {
			return fmt.Errorf("reduce from rank %d: %w", j, err)
		}
		acc = dst
	}
	c.copyIfDistinct(dst, acc) // a single rank: the result is its own vector
	return nil
}

// oneshotAllReduceCost: one step of n-1 messages of the whole vector each
// way, n-1 vectors reduced.
func oneshotAllReduceCost(n int, b float64, m Model) float64 {
	return rankOrderStep(n-1, b, m)
}

// twoshotAllReduceCost: two direct steps of n-1 messages of 1/n of the
// vector each way; the first reduces n-1 of them.
func twoshotAllReduceCost(n int, b float64, m Model) float64 {
	s := b / float64(n)
	return rankOrderStep(n-1, s, m) + directStep(n-1, s*m.Beta, m)
}

// rankOrderStep is a direct step of k messages of s bytes folded in rank
// order, as oneshot and twoshot fold them so that every rank ends bitwise
// equal: the last rank's first operand, rank 0's, is the last message rank
// 0 sends, so all k of its reductions (k-1 received, one of its own) follow
// that message's arrival. With a fused backend each received message is
// one pass by the receiver, from rank 0's on, once rank 0 has handed it
// out.
func rankOrderStep(k int, s float64, m Model) float64 {
	if m.Fused {
		return directAlpha(k, m) + float64(k)*m.moveReduce(s)
	}
	return directStep(k, s*m.Beta, m) + float64(k)*s*m.Gamma
}

// oneshotAllReduceLevelCost: one direct step of the whole vector, n-1
// vectors reduced.
func oneshotAllReduceLevelCost(n int, b float64, m Model) float64 {
	return directReceived(n, b, m)
}

// twoshotAllReduceLevelCost: two direct steps of 1/n of the vector; the
// first reduces n-1 of them.
func twoshotAllReduceLevelCost(n int, b float64, m Model) float64 {
	s := b / float64(n)
	return directReceived(n, s, m) + directMove(n, s, m)
}

// reducers returns dtype's reduction of dt and op, and the same with its
// operands swapped (lowFirst(reduce, true)), which is made once per
// Comm and shape rather than once per call, where it was one of a small
// call's few allocations.
func (c *Comm) reducers(dt dtype.DType, op dtype.ReduceOp) (reduce, inFirst dtype.ReduceFunc) {
	k := &c.lastReduce
	if k.reduce == nil || k.dt != dt || k.op != op {
		k.dt, k.op = dt, op
		k.reduce = dtype.Reducer(dt, op)
		k.inFirst = lowFirst(k.reduce, true)
	}
	return k.reduce, k.inFirst
}
