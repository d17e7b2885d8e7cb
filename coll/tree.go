package coll

import (
	"context"
	"fmt"
	"iter"
	"math/bits"

	"github.com/hccl-test/hccl-test/dtype"
)

// Binomial-tree algorithms for the rooted collectives, over ranks numbered
// relative to the root (relRank). The parent of relative rank v is v with
// its lowest set bit cleared; its children are v+1, v+2, v+4, ... below
// that bit and below n. Each subtree covers a contiguous run of relative
// ranks, which lets gather and scatter move a subtree's blocks as one
// message. Every rank takes part in at most ceil(log2 n) rounds. Costs below
// are for n ranks and m bytes per buffer (per block for gather and scatter),
// alpha per message, beta per byte, gamma per byte reduced.

func init() {
	register(Broadcast, "tree", treeBroadcast, costs{flat: treeBroadcastCost, levels: treeBroadcastLevelCost, pow2: true})
	register(Reduce, "tree", treeReduce, costs{flat: treeReduceCost, levels: treeReduceLevelCost, pow2: true})
	register(Gather, "tree", treeGather, costs{flat: treeGatherCost, levels: treeGatherLevelCost, pow2: true})
	register(Scatter, "tree", treeScatter, costs{flat: treeGatherCost, levels: treeScatterLevelCost, pow2: true})
}

// treeNode is one rank's place in the binomial tree over n ranks rooted at
// root. Its methods take and return relative ranks except where they say
// otherwise.
type treeNode struct {
	v, n, root int // v is this rank relative to root
}

func newTreeNode(rank, root, n int) treeNode {
	return treeNode{v: relRank(rank, root, n), n: n, root: root}
}

// rank returns the world rank of relative rank u.
func (t treeNode) rank(u int) int { return absRank(u, t.root, t.n) }

// parent returns the world rank of this rank's parent; the root has none.
func (t treeNode) parent() int { return t.rank(treeParent(t.v)) }

// children yields this rank's children, smallest subtree first: the order
// in which their subtrees finish a reduction or gather.
func (t treeNode) children() iter.Seq[int] {
	return func(yield func(int) bool) {
		for bit := 1; bit < treeReach(t.v, t.n) && t.v+bit < t.n; bit <<= 1 {
			if !yield(t.v + bit) {
				return
			}
		}
	}
}

// childrenLargestFirst yields this rank's children, largest subtree first:
// the order that lets the deepest branch of a broadcast or scatter start
// earliest.
func (t treeNode) childrenLargestFirst() iter.Seq[int] {
	return func(yield func(int) bool) {
		for bit := treeReach(t.v, t.n) >> 1; bit > 0; bit >>= 1 {
			if t.v+bit < t.n && !yield(t.v+bit) {
				return
			}
		}
	}
}

// size returns the number of ranks in this rank's subtree.
func (t treeNode) size() int { return treeEnd(t.v, t.n) - t.v }

// runBuf returns where this rank keeps its subtree's blocks: own, a
// one-block buffer of the caller's, when it is a leaf, scratch otherwise.
func (t treeNode) runBuf(c *Comm, own []byte, b int) []byte {
	if t.size() == 1 {
		return own
	}
	return c.scratchBuf(t.size() * b)
}

// part returns the blocks of u's subtree within run, the blocks of this
// rank's subtree in relative-rank order, for blocks of b bytes.
func (t treeNode) part(run []byte, u, b int) []byte {
	return run[(u-t.v)*b : (treeEnd(u, t.n)-t.v)*b]
}

// treeReach returns how many relative ranks the subtree of v could span in
// a world of any size: v's lowest set bit, or for the root the smallest
// power of two that is at least n.
func treeReach(v, n int) int {
	if v == 0 {
		return 1 << bits.Len(uint(n-1))
	}
	return v & -v
}

// treeEnd returns the end of the run [v, treeEnd) of relative ranks in v's
// subtree.
func treeEnd(v, n int) int { return min(v+treeReach(v, n), n) }

// treeParent returns the parent of relative rank v > 0.
func treeParent(v int) int { return v &^ (v & -v) }

// treeBroadcast sends the root's buffer down the tree: each rank receives it
// from its parent, then sends it to each child, largest subtree first so
// that the deepest branch starts earliest.
// Cost: ceil(log2 n)(alpha + beta m).
func treeBroadcast(ctx context.Context, c *Comm, a *Args) error {
	b := a.Bytes()
	t := newTreeNode(c.rank, a.Root, c.size)
	recv := a.Recv[:b]
	// The root has the buffer; everyone else receives it from the parent.
	buf := recv
	if t.v == 0 {
		buf = a.Send[:b]
	} else if err := c.recv(ctx, t.parent(), buf); err != nil {
		return fmt.Errorf("from parent %d: %w", t.parent(), err)
	}
	for kid := range t.childrenLargestFirst() {
		// Pass the buffer on to the next child.
		if err := c.send(ctx, t.rank(kid), buf); err != nil {
			return fmt.Errorf("to child %d: %w", t.rank(kid), err)
		}
	}
	c.copyIfDistinct(recv, buf)
	return nil
}

// treeReduce folds partials up the tree: each rank receives its children's
// partials, smallest subtree first, folding each into its accumulator (its
// own input at first), then sends the result to its parent. Non-roots
// accumulate in scratch, so their input is never written; the root
// accumulates in its receive buffer.
// Cost: ceil(log2 n)(alpha + (beta+gamma) m).
func treeReduce(ctx context.Context, c *Comm, a *Args) error {
	n, b := c.size, a.Bytes()
	t := newTreeNode(c.rank, a.Root, n)
	reduce := dtype.Reducer(a.DType, a.RedOp)
	var dst []byte // non-roots may have no receive buffer
	if t.v == 0 {
		dst = a.Recv[:b]
	} else {
		dst = c.scratchBuf(b)
	}
	acc := a.Send[:b]
	for kid := range t.children() {
		// Fold the child's partial into the accumulator.
		if err := c.recvReduce(ctx, t.rank(kid), dst, acc, reduce); err != nil {
			return fmt.Errorf("from child %d: %w", t.rank(kid), err)
		}
		acc = dst
	}
	if t.v != 0 {
		// Pass the subtree's partial to the parent.
		return treeToParent(ctx, c, t, acc)
	}
	c.copyIfDistinct(dst, acc) // acc is still the input if n == 1
	if a.RedOp == dtype.Avg {
		c.divideBy(a.DType, dst, n)
	}
	return nil
}

// treeGather collects blocks up the tree: each rank lays out its subtree's
// blocks in relative-rank order, its own first, with each child's subtree
// received straight into its place, and sends the run to its parent. The
// root then rotates the run into rank order. A leaf sends its input as it
// is.
// Cost: ceil(log2 n) alpha + (n-1) beta m.
func treeGather(ctx context.Context, c *Comm, a *Args) error {
	n, b := c.size, a.Bytes()
	t := newTreeNode(c.rank, a.Root, n)
	run := t.runBuf(c, a.Send[:b], b)
	c.copyIfDistinct(run[:b], a.Send[:b])
	for kid := range t.children() {
		// Receive the child's subtree into its place in the run.
		if err := c.recv(ctx, t.rank(kid), t.part(run, kid, b)); err != nil {
			return fmt.Errorf("from child %d: %w", t.rank(kid), err)
		}
	}
	if t.v != 0 {
		// Pass the subtree's run to the parent.
		return treeToParent(ctx, c, t, run)
	}
	// Relative block i belongs to rank root+i.
	c.rotateBlocks(a.Recv[:n*b], run, mod(n-a.Root, n), b)
	return nil
}

// treeScatter is treeGather run backwards: the root rotates its blocks into
// relative-rank order, and each rank receives its subtree's run from its
// parent, sends each child its part, largest subtree first, and keeps the
// first block. A leaf receives straight into its receive buffer.
// Cost: ceil(log2 n) alpha + (n-1) beta m.
func treeScatter(ctx context.Context, c *Comm, a *Args) error {
	n, b := c.size, a.Bytes()
	t := newTreeNode(c.rank, a.Root, n)
	recv := a.Recv[:b]
	run := t.runBuf(c, recv, b)
	// The root lays its blocks out in relative-rank order (block i for rank
	// root+i); everyone else receives its subtree's run from the parent.
	if t.v == 0 {
		c.rotateBlocks(run, a.Send[:n*b], a.Root, b)
	} else if err := c.recv(ctx, t.parent(), run); err != nil {
		return fmt.Errorf("from parent %d: %w", t.parent(), err)
	}
	for kid := range t.childrenLargestFirst() {
		// Send the child its subtree's part of the run.
		if err := c.send(ctx, t.rank(kid), t.part(run, kid, b)); err != nil {
			return fmt.Errorf("to child %d: %w", t.rank(kid), err)
		}
	}
	c.copyIfDistinct(recv, run[:b])
	return nil
}

// treeToParent sends a non-root's result for its subtree to its parent.
func treeToParent(ctx context.Context, c *Comm, t treeNode, buf []byte) error {
	if err := c.send(ctx, t.parent(), buf); err != nil {
		return fmt.Errorf("to parent %d: %w", t.parent(), err)
	}
	return nil
}

// treeRounds is ceil(log2 n) rounds of a binomial tree, each a latency and
// round seconds of moving (and reducing) the whole buffer; in the round
// where h ranks have it, min(h, n-h) of them send (Model.share).
func treeRounds(n int, round float64, m Model) float64 {
	var t float64
	for h := 1; h < n; h *= 2 {
		t += m.Alpha + round*m.share(min(h, n-h), n)
	}
	return t
}

// treeBroadcastCost: the tree's rounds, each moving the whole buffer.
func treeBroadcastCost(n int, b float64, m Model) float64 { return treeRounds(n, b*m.Beta, m) }

// treeReduceCost: the broadcast's rounds in reverse, each received buffer
// also reduced.
func treeReduceCost(n int, b float64, m Model) float64 { return treeRounds(n, m.moveReduce(b), m) }

// treeGatherCost: ceil(log2 n) rounds; in the round at distance d about
// n/2d subtrees send their d blocks (at most n-d), so the root takes n-1
// blocks in all. Scatter is the same in reverse.
func treeGatherCost(n int, b float64, m Model) float64 {
	var t float64
	for d := 1; d < n; d *= 2 {
		k := (n - d + 2*d - 1) / (2 * d)
		t += m.Alpha + float64(min(d, n-d))*b*m.Beta*m.share(k, n)
	}
	return t
}

// Two-level costs of the binomial tree. It is costed for a root at the
// start of a server: rank 0, the default root, or any multiple of
// PerServer. A CostFunc is not told the root, and from such a root the
// relative ranks that the tree is built over sit on servers as the world
// ranks do, so the edges that cross servers are known: those at distances
// of at least PerServer (with PerServer a power of two, every subtree
// below that distance lies inside one server). From a root elsewhere in
// its server more edges cross than these costs charge. They also need n
// to be a power of two: then the deepest path takes a hop at every
// distance; otherwise some children are missing and the sums below
// overstate it by a latency or more.
//
// A rank's own copies count where they lie on the way of the rank that
// finishes last, as the simulated backend charges them and the one-level
// formulas leave them out: the root's copy of its buffer into its receive
// buffer (broadcast), the root's rotation of all n blocks (gather and
// scatter), an inner rank's copy of its own block into its run of blocks
// (gather and scatter). Calls are taken to be out of place, the default;
// in place some of these copies are not made.

// treeTop returns the distance of a binomial tree's widest round over n
// ranks: the root's first child in a broadcast, its last in a reduction.
func treeTop(n int) int { return treeReach(0, n) / 2 }

// treeBroadcastLevelCost: the buffer reaches the last leaf after one hop
// at every distance, each on its own link (the rounds at distances of at
// least PerServer cross servers), and each parent sends to its children
// one after another, widest first; so the last leaf, down the path that
// takes every hop, has it after every round's latency and transfer. The
// root sends in every round, then copies its buffer into its receive
// buffer, which may end later. With shared cores, a round's bytes cost
// as in treeRounds.
func treeBroadcastLevelCost(n int, b float64, m Model) float64 {
	var path, root float64
	for h := 1; h < n; h *= 2 {
		l := m.level(treeTop(n) / h)
		move := b * l.Beta * m.share(min(h, n-h), n)
		path += l.Alpha + move
		root += move
	}
	return max(path, root+m.copy(b))
}

// treeReduceLevelCost: the broadcast's rounds in reverse, nearest first,
// each received and reduced on its own link; a rank takes its children's
// partials in the order they are ready, so the root's last partial, from
// its widest subtree, comes after every round's latency, transfer and
// reduction. The root reduces into its receive buffer: nothing is copied.
func treeReduceLevelCost(n int, b float64, m Model) float64 {
	var t float64
	for h := 1; h < n; h *= 2 {
		l := m.level(treeTop(n) / h)
		t += l.Alpha + l.moveReduce(b)*m.share(min(h, n-h), n)
	}
	return t
}

// treeRunRound is the round at distance d of a binomial tree gather or
// scatter of blocks of b bytes on two levels: about n/2d subtrees move
// their min(d, n-d) blocks over the link at distance d, with shared cores
// as in treeGatherCost. It returns that link's latency and the transfer.
func treeRunRound(n, d int, b float64, m Model) (alpha, move float64) {
	k := (n - d + 2*d - 1) / (2 * d)
	l := m.level(d)
	return l.Alpha, float64(min(d, n-d)) * b * l.Beta * m.share(k, n)
}

// treeGatherLevelCost: the root takes its subtrees' runs nearest first,
// each after its own link's latency and transfer (the rounds at distances
// of at least PerServer cross servers), the last from its widest subtree,
// which took its own the same way; then it rotates the n blocks into rank
// order. An inner rank first copies its own block into its run, which
// its nearest child's block may take longer to arrive than.
func treeGatherLevelCost(n int, b float64, m Model) float64 {
	var t float64
	for d := 1; d < n; d *= 2 {
		alpha, move := treeRunRound(n, d, b, m)
		if d == 1 {
			t += max(alpha+move, m.copy(b))
			continue
		}
		t += alpha + move
	}
	return t + m.copy(float64(n)*b)
}

// treeScatterLevelCost: the root rotates its n blocks into relative-rank
// order, then each rank sends its children their parts, widest first, one
// after another; the last rank to finish is the last leaf, after every
// round's latency and transfer, or its parent, which after sending that
// leaf its block copies its own out of its run.
func treeScatterLevelCost(n int, b float64, m Model) float64 {
	t := m.copy(float64(n) * b)
	for d := 1; d < n; d *= 2 {
		alpha, move := treeRunRound(n, d, b, m)
		if d == 1 {
			t += move + max(alpha, m.copy(b))
			continue
		}
		t += alpha + move
	}
	return t
}
