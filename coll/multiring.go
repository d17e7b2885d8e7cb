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
// one ring would put all of it on one rank's link. The channels do not
// step together: each passes its data on as soon as it has come (flow),
// so both levels move data at once rather than one after the other
// (hier), and a step's latency and gaps hide behind the other channels'
// transfers.
//
// Two ranks that are neighbours in several channels post those channels'
// messages by step, then channel, on both ends, so FIFO matching pairs
// each with its own receive. With one server, or one rank per server,
// there is one channel: the ring itself. Its cost is +Inf there, so that
// auto never picks it without a second level.

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

// hop is one channel's part of step t on a rank at position q of its
// ring: send out to the next rank, receive into in from the previous one,
// and with a reduction, in = reduce(acc, incoming).
type hop func(t, ch, q int) (out, in, acc []byte)

// flow runs steps steps of every channel on c's rank, NCCL's way: each
// channel moves on as soon as its own data has come, not when every
// channel has finished the step. For each step t and each channel in
// turn it waits for the channel's receive of step t-1 (the data that step
// t passes on), then posts the channel's send of step t, so a channel
// whose data came over a fast link forwards it while another's still
// crosses a slow one, and the sends of step t leave while the receives
// of step t+1 are on their way: a step pays its latency and its gaps
// behind the transfers of its neighbours rather than after them all.
//
// Every rank posts its messages in the same order (by step, then
// channel), so two ranks that are neighbours in several channels pair
// each send with its own receive. A rank waits for its send of step t-2
// of a channel before it goes on with the channel's step t: that bounds
// what is in flight, and the receiver took it at its own step t-1, so no
// rank waits on one further along. With early, the receive of step t is
// posted with the send of step t; else (its buffer is the one that the
// send of step t-1 reads) just before it is waited for, once that send
// is done. reduce(t) is the reduction of step t's receives, nil for
// plain ones; arrived, if set, is called once a channel's receive of a
// step is in.
func (g rings) flow(ctx context.Context, c *Comm, steps int, h hop, reduce func(t int) dtype.ReduceFunc, early bool, arrived func(t, ch int)) error {
	r := c.rank
	sends := [2][]backends.Request{make([]backends.Request, g.k), make([]backends.Request, g.k)}
	recvs := make([]backends.Request, g.k)
	post := func(t, ch int) {
		q := g.pos(ch, r)
		_, in, acc := h(t, ch, q)
		from := g.at(ch, q-1)
		if red := reduce(t); red != nil {
			recvs[ch] = c.t.RecvReduce(from, in, acc, red)
		} else {
			recvs[ch] = c.t.Recv(from, in)
		}
	}
	receive := func(t, ch int) error {
		if !early {
			post(t, ch)
		}
		err := c.waitAll(ctx, recvs[ch])
		recvs[ch] = nil
		if err != nil {
			return fmt.Errorf("step %d channel %d: receive: %w", t, ch, err)
		}
		if arrived != nil {
			arrived(t, ch)
		}
		return nil
	}
	sent := func(t, ch int) error {
		req := sends[t%2][ch]
		sends[t%2][ch] = nil
		if err := c.waitAll(ctx, req); err != nil {
			return fmt.Errorf("step %d channel %d: send: %w", t, ch, err)
		}
		return nil
	}
	for t := range steps {
		for ch := range g.k {
			if t >= 2 {
				if err := sent(t-2, ch); err != nil {
					return err
				}
			}
			if t >= 1 {
				if err := receive(t-1, ch); err != nil {
					return err
				}
			}
			q := g.pos(ch, r)
			out, _, _ := h(t, ch, q)
			sends[t%2][ch] = c.t.Send(g.at(ch, q+1), out)
			if early {
				post(t, ch)
			}
		}
	}
	// Step steps, which sends nothing: the last receives, then the last
	// sends.
	for ch := range g.k {
		if steps >= 2 {
			if err := sent(steps-2, ch); err != nil {
				return err
			}
		}
		if err := receive(steps-1, ch); err != nil {
			return err
		}
	}
	for ch := range g.k {
		if err := sent(steps-1, ch); err != nil {
			return err
		}
	}
	return nil
}

// multiringAllReduce is ringAllReduce on every channel's part of the
// vector: n-1 reduce-scatter steps after which the rank at position q of
// channel ch's ring holds part q of the channel's part reduced, then n-1
// allgather steps, all in one flow, so a channel starts passing its
// reduced part on as soon as it has it.
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
	rs := g.n - 1 // the reduce-scatter's steps; the allgather's follow
	red := dtype.Reducer(a.DType, a.RedOp)
	h := func(t, ch, q int) (out, in, acc []byte) {
		if t < rs {
			out = part(recv, ch, q-t-1)
			if t == 0 {
				out = part(send, ch, q-1)
			}
			return out, part(recv, ch, q-t-2), part(send, ch, q-t-2)
		}
		s := t - rs
		return part(recv, ch, q-s), part(recv, ch, q-s-1), nil
	}
	reduce := func(t int) dtype.ReduceFunc {
		if t < rs {
			return red
		}
		return nil
	}
	var arrived func(t, ch int)
	if a.RedOp == dtype.Avg {
		// A channel's own part is whole once its last reducing step is in.
		arrived = func(t, ch int) {
			if t == rs-1 {
				c.divideBy(a.DType, part(recv, ch, g.pos(ch, c.rank)), g.n)
			}
		}
	}
	return g.flow(ctx, c, 2*rs, h, reduce, true, arrived)
}

// multiringReduceScatter is ringReduceScatter on every channel's part of
// the blocks: at step t the rank at position q sends its partial of block
// at(q-t-1) and folds its input into the one of block at(q-t-2), the last
// being its own block. Partials live in two scratch blocks, each channel
// in its part of them, so the input is never written; a step's receive
// goes to the block that the step before sends from, so it is posted
// once that send is done.
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
	red := dtype.Reducer(a.DType, a.RedOp)
	scratch := c.scratchBuf(2 * b)
	partial := [2][]byte{scratch[:b], scratch[b:]}
	h := func(t, ch, q int) (out, in, acc []byte) {
		out = input(ch, q-1)
		if t > 0 {
			out = piece(partial[(t-1)%2], ch)
		}
		in = piece(recv, ch)
		if t < g.n-2 {
			in = piece(partial[t%2], ch)
		}
		return out, in, input(ch, q-t-2)
	}
	err := g.flow(ctx, c, g.n-1, h, func(int) dtype.ReduceFunc { return red }, false, nil)
	if err != nil {
		return err
	}
	if a.RedOp == dtype.Avg {
		c.divideBy(a.DType, recv, g.n)
	}
	return nil
}

// multiringAllGather places its own block, then at step t the rank at
// position q of each channel's ring passes on its piece of block at(q-t)
// and receives the piece of block at(q-t-1).
func multiringAllGather(ctx context.Context, c *Comm, a *Args) error {
	g, b, es := ringsOf(c), a.Bytes(), a.DType.Size()
	c.copyIfDistinct(block(a.Recv, c.rank, b), a.Send[:b])
	if g.n == 1 {
		return nil
	}
	piece := func(ch, q int) []byte {
		lo, hi := span(a.Count, g.k, ch)
		return elems(block(a.Recv, g.at(ch, q), b), lo, hi, es)
	}
	h := func(t, ch, q int) (out, in, acc []byte) { return piece(ch, q-t), piece(ch, q-t-1), nil }
	return g.flow(ctx, c, g.n-1, h, func(int) dtype.ReduceFunc { return nil }, true, nil)
}
