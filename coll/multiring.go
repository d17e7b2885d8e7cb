package coll

import (
	"context"
	"fmt"

	"github.com/hccl-test/hccl-test/backends"
	"github.com/hccl-test/hccl-test/dtype"
)

// Multiring algorithms, as NCCL's rings over several channels: on a Comm
// with a topology (SetTopology) of S servers of P ranks, the data is cut
// into P channels, and channel c runs a ring over all n ranks laid out
// server by server, each server's ranks visited from local rank c on:
// c, c+1, ..., c-1. A ring crosses between servers from local rank c-1 of
// one server to local rank c of the next, so every rank sends across for
// exactly one channel and receives across for one, and the links between
// servers of all P ranks of a server carry the data side by side, where
// one ring would put all of it on one rank's link. The channels step
// together: at each step every rank posts its P messages (P-1 inside its
// server, one across) and waits for all of them, so a step takes the
// slower of its two ports' loads, and both levels move data at once
// rather than one after the other (hier).
//
// Two ranks that are neighbours in several channels post those channels'
// messages in channel order at each step on both ends, so FIFO matching
// pairs each with its own receive. With one server, or one rank per
// server, there is one channel: the ring itself. Its cost is +Inf there,
// so that auto never picks it without a second level.

// multiringName is the name multiring is registered under.
const multiringName = "multiring"

func init() {
	register(AllReduce, multiringName, multiringAllReduce, costs{levels: multiringAllReduceCost})
	register(ReduceScatter, multiringName, multiringReduceScatter, costs{levels: multiringReduceScatterCost})
	register(AllGather, multiringName, multiringAllGather, costs{levels: multiringAllGatherCost})
}

// rings is the layout of a Comm's channels: n ranks on servers of p, and
// k channels (p with several servers, else 1).
type rings struct{ n, p, k int }

// ringsOf returns c's channels.
func ringsOf(c *Comm) rings {
	servers, p := c.Topology()
	if servers == 1 {
		return rings{n: c.size, p: c.size, k: 1}
	}
	return rings{n: c.size, p: p, k: p}
}

// at returns the rank at position i (taken mod n) of channel ch's ring.
func (g rings) at(ch, i int) int {
	i = mod(i, g.n)
	return i - i%g.p + (ch+i%g.p)%g.p
}

// pos returns the position of rank r in channel ch's ring.
func (g rings) pos(ch, r int) int { return r - r%g.p + mod(r%g.p-ch, g.p) }

// hop is one channel's part of a step on a rank at position q of its
// ring: send out to the next rank, receive into in from the previous one,
// and with a reduction, in = reduce(acc, incoming).
type hop func(ch, q int) (out, in, acc []byte)

// step runs one step of every channel on c's rank: it posts each
// channel's send and receive in channel order, then waits for the
// receives from its own server, the one from another server, and the
// sends, in that order (so that the reductions of what arrived first are
// done while the slower link still moves). reduce nil receives plainly.
func (g rings) step(ctx context.Context, c *Comm, h hop, reduce dtype.ReduceFunc) error {
	var near, far, sends []backends.Request
	r := c.rank
	for ch := range g.k {
		q := g.pos(ch, r)
		out, in, acc := h(ch, q)
		to, from := g.at(ch, q+1), g.at(ch, q-1)
		sends = append(sends, c.t.Send(to, out))
		var req backends.Request
		if reduce != nil {
			req = c.t.RecvReduce(from, in, acc, reduce)
		} else {
			req = c.t.Recv(from, in)
		}
		if from/g.p == r/g.p {
			near = append(near, req)
		} else {
			far = append(far, req)
		}
	}
	return c.waitAll(ctx, append(append(near, far...), sends...)...)
}

// multiringAllReduce is ringAllReduce on every channel's part of the
// vector: a reduce-scatter after which the rank at position q of channel
// ch's ring holds part q of the channel's part reduced, then an allgather.
func multiringAllReduce(ctx context.Context, c *Comm, a *Args) error {
	g, es := ringsOf(c), a.DType.Size()
	send, recv := a.Send[:a.Bytes()], a.Recv[:a.Bytes()]
	if g.n == 1 {
		c.copyIfDistinct(recv, send)
		return nil
	}
	part := func(buf []byte, ch, i int) []byte {
		clo, chi := span(a.Count, g.k, ch)
		lo, hi := span(chi-clo, g.n, mod(i, g.n))
		return elems(buf, clo+lo, clo+hi, es)
	}
	reduce := dtype.Reducer(a.DType, a.RedOp)
	for s := range g.n - 1 {
		err := g.step(ctx, c, func(ch, q int) (out, in, acc []byte) {
			out = part(recv, ch, q-s-1)
			if s == 0 {
				out = part(send, ch, q-1)
			}
			return out, part(recv, ch, q-s-2), part(send, ch, q-s-2)
		}, reduce)
		if err != nil {
			return fmt.Errorf("reduce-scatter step %d: %w", s, err)
		}
	}
	if a.RedOp == dtype.Avg {
		for ch := range g.k {
			c.divideBy(a.DType, part(recv, ch, g.pos(ch, c.rank)), g.n)
		}
	}
	for s := range g.n - 1 {
		err := g.step(ctx, c, func(ch, q int) (out, in, acc []byte) {
			return part(recv, ch, q-s), part(recv, ch, q-s-1), nil
		}, nil)
		if err != nil {
			return fmt.Errorf("allgather step %d: %w", s, err)
		}
	}
	return nil
}

// multiringReduceScatter is ringReduceScatter on every channel's part of
// the blocks: at step s the rank at position q sends its partial of block
// at(q-s-1) and folds its input into the one of block at(q-s-2), the last
// being its own block. Partials live in two scratch blocks, each channel
// in its part of them, so the input is never written.
func multiringReduceScatter(ctx context.Context, c *Comm, a *Args) error {
	g, b, es := ringsOf(c), a.Bytes(), a.DType.Size()
	recv := a.Recv[:b]
	piece := func(blk []byte, ch int) []byte {
		lo, hi := span(a.Count, g.k, ch)
		return elems(blk, lo, hi, es)
	}
	input := func(ch, q int) []byte { return piece(block(a.Send, g.at(ch, q), b), ch) }
	if g.n == 1 {
		c.copyIfDistinct(recv, a.Send[:b])
		return nil
	}
	reduce := dtype.Reducer(a.DType, a.RedOp)
	scratch := c.scratchBuf(2 * b)
	partial := [2][]byte{scratch[:b], scratch[b:]}
	for s := range g.n - 1 {
		err := g.step(ctx, c, func(ch, q int) (out, in, acc []byte) {
			out = input(ch, q-1)
			if s > 0 {
				out = piece(partial[(s-1)%2], ch)
			}
			in = piece(recv, ch)
			if s < g.n-2 {
				in = piece(partial[s%2], ch)
			}
			return out, in, input(ch, q-s-2)
		}, reduce)
		if err != nil {
			return fmt.Errorf("step %d: %w", s, err)
		}
	}
	if a.RedOp == dtype.Avg {
		c.divideBy(a.DType, recv, g.n)
	}
	return nil
}

// multiringAllGather places its own block, then at step s the rank at
// position q of each channel's ring passes on its piece of block at(q-s)
// and receives the piece of block at(q-s-1).
func multiringAllGather(ctx context.Context, c *Comm, a *Args) error {
	g, b, es := ringsOf(c), a.Bytes(), a.DType.Size()
	c.copyIfDistinct(block(a.Recv, c.rank, b), a.Send[:b])
	piece := func(ch, q int) []byte {
		lo, hi := span(a.Count, g.k, ch)
		return elems(block(a.Recv, g.at(ch, q), b), lo, hi, es)
	}
	for s := range g.n - 1 {
		err := g.step(ctx, c, func(ch, q int) (out, in, acc []byte) {
			return piece(ch, q-s), piece(ch, q-s-1), nil
		}, nil)
		if err != nil {
			return fmt.Errorf("step %d: %w", s, err)
		}
	}
	return nil
}
