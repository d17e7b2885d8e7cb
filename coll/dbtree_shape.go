package coll

import "math/bits"

// The shape of the double binary tree (dbtree.go): its two trees, built
// from NCCL's binary tree (ncclGetBtree), as parent, children, height and
// depth of each node. The algorithm and its cost (dbtree_cost.go) walk
// them.

// dbTree is tree A (off 0), NCCL's binary tree over relative ranks 0..n-1,
// or tree B (off 1), the same tree over ranks 1..n-1 hung under rank 0.
// Node u > 0 of tree B is index u-1 of a binary tree of n-1 indices.
type dbTree struct{ n, off int }

// size returns the number of indices of the underlying binary tree.
func (t dbTree) size() int { return t.n - t.off }

// parent returns the parent of node v, or -1 for node 0.
func (t dbTree) parent(v int) int {
	switch {
	case v == 0:
		return -1
	case v == t.off:
		return 0 // tree B's top
	}
	return btreeParent(v-t.off, t.size()) + t.off
}

// children returns the children of node v; -1 stands for none.
func (t dbTree) children(v int) [2]int {
	if v == 0 && t.off == 1 {
		return [2]int{1, -1}
	}
	var kids [2]int
	kids[0], kids[1] = btreeChildren(v-t.off, t.size())
	for i := range kids {
		if kids[i] >= 0 {
			kids[i] += t.off
		}
	}
	return kids
}

// height returns the height of node v's subtree: 0 for a leaf.
func (t dbTree) height(v int) int {
	if v == 0 && t.off == 1 {
		return 1 + btreeHeight(0, t.size())
	}
	return btreeHeight(v-t.off, t.size())
}

// depth returns the number of hops from node 0 to node v.
func (t dbTree) depth(v int) int {
	d := 0
	for ; v != 0; v = t.parent(v) {
		d++
	}
	return d
}

// btreeParent returns the parent of index i > 0 in NCCL's binary tree of
// size indices (ncclGetBtree): with b the lowest set bit of i, the parent
// is i-b when i has bit 2b set and i+b otherwise, or i-b when i+b is out
// of range. Index 0 is the root, with the one child 2^(⌈log2 size⌉-1).
func btreeParent(i, size int) int {
	b := i & -i
	if up := (i ^ b) | b<<1; up < size {
		return up
	}
	return i ^ b
}

// btreeChildren returns the children of index i in NCCL's binary tree of
// size indices, -1 for none: odd indices are leaves; an even index i > 0
// with lowest set bit 2b has the children i-b and i+b', b' the largest of
// b, b/2, ..., 1 that keeps it below size.
func btreeChildren(i, size int) (int, int) {
	if i == 0 {
		if size < 2 {
			return -1, -1
		}
		return -1, 1 << (bits.Len(uint(size-1)) - 1)
	}
	low := (i & -i) >> 1
	if low == 0 {
		return -1, -1
	}
	right := low
	for right > 0 && i+right >= size {
		right >>= 1
	}
	if right == 0 {
		return i - low, -1
	}
	return i - low, i + right
}

// btreeHeight returns the height of index i's subtree in NCCL's binary tree
// of size indices: ⌈log2 size⌉ for the root and the number of trailing
// zero bits otherwise, since the left subtree of an even index is always
// complete.
func btreeHeight(i, size int) int {
	if i == 0 {
		return bits.Len(uint(size - 1))
	}
	return bits.TrailingZeros(uint(i))
}
