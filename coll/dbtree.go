package coll

import (
	"context"
	"fmt"

	"github.com/hccl-test/hccl-test/dtype"
)

// Double binary tree (Sanders, Speck and Träff, 2009; NCCL's trees): two
// binary trees over the same ranks, each carrying half of the buffer, built
// so that a rank that is an inner node of one is a leaf of the other. A
// binary tree alone keeps its leaves' links idle and sends everything
// through half the ranks; with two complementary trees every rank sends and
// receives about as much, and the depth stays logarithmic.
//
// Both trees hang from relative rank 0 (the root of broadcast and reduce,
// rank 0 for allreduce), which has one child in each. Tree A is NCCL's
// binary tree over relative ranks 0..n-1 (btreeParent): its inner nodes are
// 0 and the even ranks. Tree B is the same tree built over ranks 1..n-1
// (rank u at index u-1), whose inner nodes are the odd ranks, with rank 1,
// its top, hung under rank 0. (NCCL mirrors or shifts tree A instead; that
// puts the second root elsewhere, which allreduce can afford but the rooted
// collectives cannot.) Both trees are at most L = 1 + ⌈log2(n-1)⌉ deep.
//
// Each half is cut into K segments, and segments move in lockstep steps:
// segment s goes up from a node of height h at step s+h, and down from a
// node at depth δ at step s+D0+δ, where D0 is where the broadcast starts
// (the root's height for allreduce, 0 for broadcast). A step posts all its
// sends, then does its receives one by one, then waits for the sends, so a
// message sent at step t is received at step t by its peer.

func init() {
	register(AllReduce, "dbtree", dbtreeAllReduce, costs{flat: dbtreeAllReduceCost, levels: dbtreeAllReduceCost})
	register(Broadcast, "dbtree", dbtreeBroadcast, costs{flat: dbtreeBroadcastCost, levels: dbtreeBroadcastCost})
	register(Reduce, "dbtree", dbtreeReduce, costs{flat: dbtreeReduceCost, levels: dbtreeReduceCost})
}

// dbtreeMinSegment is the smallest segment in bytes. Every step of the
// lockstep pipeline waits for all its messages, which costs about a
// latency however little the step moves: over loopback TCP 30 µs at 2
// ranks and 240 µs at 8 on 2 cores, where a 64 KiB segment takes 50 µs
// and 180 µs to move. 256 KiB keeps that wait a fraction of each step;
// measured against 64 KiB, fp32 allreduce over tcp at 1 and 4 MiB ran in
// 0.55-0.88 of the time at 2 ranks and 0.55-0.72 at 8; on shm, within
// the noise (0.63-1.02, one reading 1.41). Larger sizes take
// dbtreeMaxSegments either way.
// dbtreeMaxSegments caps the segments per half: K segments take K + 2L - 1
// steps, so with 32 the fill and drain of an 8-rank allreduce (L = 4) are
// 7 steps of 39, and a 64 MiB vector moves in 1 MiB segments.
const (
	dbtreeMinSegment  = 256 << 10
	dbtreeMaxSegments = 32
)

// dbtreeAllReduce reduces each half up its tree to rank 0, which divides
// it by n for Avg, and broadcasts it back down the same tree, segment by
// segment; a segment starts down as soon as rank 0 has it. Partials and the
// result are kept in the receive buffer. Each half is reduced once, at rank
// 0, and copied everywhere else, so all ranks end bitwise equal. The
// busiest rank, an inner node of one tree and a leaf of the other, sends
// and receives 2m in all for m bytes, reduces m, and posts up to 4
// messages each way in a step. Its cost follows the steps
// (dbtree_cost.go).
func dbtreeAllReduce(ctx context.Context, c *Comm, a *Args) error {
	b := a.Bytes()
	send, recv := a.Send[:b], a.Recv[:b]
	if c.size == 1 {
		c.copyIfDistinct(recv, send)
		return nil
	}
	return c.dbtreeRun(ctx, a, 0, func(h *dbHalf, view func([]byte) []byte) {
		h.in, h.out = view(send), view(recv)
		h.reduce, h.downAt = dtype.Reducer(a.DType, a.RedOp), h.tree.height(0)
	})
}

// dbtreeBroadcast sends each half of the root's buffer down its tree,
// segment by segment. Every rank sends at most m bytes for m (two
// children's worth of half the buffer) and receives m, posting up to two
// sends and two receives (one per tree) a step.
func dbtreeBroadcast(ctx context.Context, c *Comm, a *Args) error {
	b := a.Bytes()
	recv := a.Recv[:b]
	src := recv
	if c.rank == a.Root {
		src = a.Send[:b]
	}
	if c.size == 1 {
		c.copyIfDistinct(recv, src)
		return nil
	}
	// Out of place, the root copies each segment into its receive buffer
	// once it has handed it to its children, while they take it.
	copyTo := !aliased(recv, src) && c.rank == a.Root
	return c.dbtreeRun(ctx, a, a.Root, func(h *dbHalf, view func([]byte) []byte) {
		h.out, h.downAt = view(src), 0
		if copyTo {
			h.copyTo = view(recv)
		}
	})
}

// dbtreeReduce reduces each half up its tree to the root, segment by
// segment. Inner nodes other than the root keep partials in scratch, so no
// input is written; the root divides by n for Avg. An inner node takes
// and reduces two children's halves, m bytes in all for m, posting up to
// two receives and two sends a step.
func dbtreeReduce(ctx context.Context, c *Comm, a *Args) error {
	b := a.Bytes()
	send := a.Send[:b]
	if c.size == 1 {
		c.copyIfDistinct(a.Recv[:b], send)
		return nil
	}
	var out []byte
	if c.rank == a.Root {
		out = a.Recv[:b]
	} else {
		out = c.scratchBuf(b)
	}
	return c.dbtreeRun(ctx, a, a.Root, func(h *dbHalf, view func([]byte) []byte) {
		h.in, h.out = view(send), view(out)
		h.reduce, h.downAt = dtype.Reducer(a.DType, a.RedOp), -1
	})
}

// dbtreeRun moves the two halves of a's buffer through trees A and B rooted
// at root: setup fills in each half's buffers and phases, given a function
// that cuts a whole buffer down to that half. It then runs the lockstep
// steps until this rank has done its last.
func (c *Comm) dbtreeRun(ctx context.Context, a *Args, root int, setup func(h *dbHalf, view func([]byte) []byte)) error {
	n, es := c.size, a.DType.Size()
	v := relRank(c.rank, root, n)
	var halves [2]dbHalf
	last := 0
	for i := range halves {
		lo, hi := span(a.Count, 2, i)
		h := &halves[i]
		*h = newDBHalf(dbTree{n: n, off: i}, v, root, hi-lo, es)
		setup(h, func(buf []byte) []byte { return elems(buf, lo, hi, es) })
		h.seg.parts = dbtreeSegments(n, (hi-lo)*es, h.reduce != nil, h.downAt >= 0)
		if a.RedOp == dtype.Avg && h.reduce != nil && v == 0 {
			h.avg = func(seg []byte) { c.divideBy(a.DType, seg, n) }
		}
		last = max(last, h.lastStep())
	}
	sends := make(inFlight, 0, 8)
	for t := 0; t <= last; t++ {
		sends = sends[:0]
		for i := range halves {
			sends = halves[i].postSends(c, t, sends)
		}
		for i := range halves {
			halves[i].copySent(c, t)
		}
		var err error
		for i := range halves {
			if err = halves[i].recvs(ctx, c, t); err != nil {
				err = fmt.Errorf("tree %c: %w", 'A'+i, err)
				break
			}
		}
		if serr := c.waitAll(ctx, sends...); err == nil && serr != nil {
			err = serr
		}
		if err != nil {
			return fmt.Errorf("step %d: %w", t, err)
		}
	}
	return nil
}

// dbHalf is this rank's part in moving one half of the buffer through one
// tree. Nodes are relative ranks.
type dbHalf struct {
	tree          dbTree
	root          int // the root's world rank
	parent        int // -1 at the root
	kids          []int
	height, depth int
	seg           chainSegmenter
	// in is this half of the rank's input, read by the reduction; out is
	// where partials and the result go (the input, for broadcast's root).
	in, out []byte
	// reduce, when set, runs the reduction up the tree. downAt, when not
	// negative, runs the broadcast down it, from the root at step s+downAt.
	reduce dtype.ReduceFunc
	downAt int
	avg    func(seg []byte) // at the root for Avg: divide by n
	// copyTo, when set (a broadcast's root, out of place), takes a copy
	// of each segment of out once it has gone down (copySent).
	copyTo []byte
}

// dbtreeSegments is how many segments a half of b bytes is cut into on n
// ranks, for a call that reduces up the trees (up), broadcasts down them
// (down) or both: segments of at least dbtreeMinSegment bytes, at most
// dbtreeMaxSegments of them. On 2 ranks a rooted call's segments cross
// one hop, so there is no pipeline to overlap: each further segment would
// only add a step (measured before this rule, 4 MiB reduce on 2 ranks:
// 702 µs in 32 segments against the binomial tree's 274 on shm, 2486
// against 1473 over tcp), and it takes one.
func dbtreeSegments(n, b int, up, down bool) int {
	if n == 2 && up != down {
		return 1
	}
	return max(1, min(dbtreeMaxSegments, b/dbtreeMinSegment))
}

// newDBHalf places relative rank v in tree t for a half of count elements
// of es bytes, cut as a call that goes both up and down the trees is
// (dbtreeSegments); dbtreeRun sets the count for its call.
func newDBHalf(t dbTree, v, root, count, es int) dbHalf {
	parts := dbtreeSegments(t.n, count*es, true, true)
	h := dbHalf{tree: t, root: root, parent: t.parent(v), height: t.height(v), depth: t.depth(v),
		seg: chainSegmenter{count: count, parts: parts, es: es}, downAt: -1}
	// Children in the order their partials fold in: shortest subtree
	// first, as its partial of a segment is ready first.
	for _, k := range t.children(v) {
		if k >= 0 {
			h.kids = append(h.kids, k)
		}
	}
	if len(h.kids) == 2 && t.height(h.kids[1]) < t.height(h.kids[0]) {
		h.kids[0], h.kids[1] = h.kids[1], h.kids[0]
	}
	return h
}

// lastStep returns the last step at which this rank has anything to do.
func (h *dbHalf) lastStep() int {
	end := 0
	if h.reduce != nil {
		end = h.height // sends up at s+height, receives before
	}
	if h.downAt >= 0 {
		end = max(end, h.downAt+h.depth) // sends down at s+downAt+depth
	}
	return h.seg.parts - 1 + end
}

// has reports whether s is a segment; steps before the first and after
// the last have none.
func (h *dbHalf) has(s int) bool { return s >= 0 && s < h.seg.parts }

// world returns the world rank of node u.
func (h *dbHalf) world(u int) int { return absRank(u, h.root, h.tree.n) }

// postSends appends to reqs the sends of step t: the partial of segment
// t-height up to the parent, and the result's segment t-downAt-depth down
// to each child.
func (h *dbHalf) postSends(c *Comm, t int, reqs inFlight) inFlight {
	if h.reduce != nil && h.parent >= 0 {
		partial := h.out
		if len(h.kids) == 0 {
			partial = h.in // a leaf passes its input on as it is
		}
		if s := t - h.height; h.has(s) {
			reqs = append(reqs, c.t.Send(h.world(h.parent), h.seg.of(partial, s)))
		}
	}
	if s := t - h.downAt - h.depth; h.downAt >= 0 && h.has(s) {
		for _, k := range h.kids {
			reqs = append(reqs, c.t.Send(h.world(k), h.seg.of(h.out, s)))
		}
	}
	return reqs
}

// copySent copies into copyTo the segment that step t sent down.
func (h *dbHalf) copySent(c *Comm, t int) {
	if s := t - h.downAt - h.depth; h.copyTo != nil && h.has(s) {
		c.copy(h.seg.of(h.copyTo, s), h.seg.of(h.out, s))
	}
}

// recvs does the receives of step t, one after another: segment
// t-height(k) from each child k, folded into the partial (the first child's
// onto this rank's input), then the result's segment t-downAt-depth+1 from
// the parent. Two children's copies of one segment share the partial, so each
// receive is waited for before the next is posted.
func (h *dbHalf) recvs(ctx context.Context, c *Comm, t int) error {
	if h.reduce != nil {
		for i, k := range h.kids {
			s := t - h.tree.height(k)
			if !h.has(s) {
				continue
			}
			seg, acc := h.seg.of(h.out, s), h.out
			if i == 0 {
				acc = h.in
			}
			if err := c.recvReduce(ctx, h.world(k), seg, h.seg.of(acc, s), h.reduce); err != nil {
				return fmt.Errorf("segment %d from child %d: %w", s, h.world(k), err)
			}
			if h.avg != nil && i == len(h.kids)-1 {
				h.avg(seg) // the root has the whole sum of segment s
			}
		}
	}
	if h.downAt >= 0 && h.parent >= 0 {
		if s := t - h.downAt - h.depth + 1; h.has(s) {
			if err := c.recv(ctx, h.world(h.parent), h.seg.of(h.out, s)); err != nil {
				return fmt.Errorf("segment %d from parent %d: %w", s, h.world(h.parent), err)
			}
		}
	}
	return nil
}
