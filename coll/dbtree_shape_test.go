package coll

import (
	"math/bits"
	"testing"
)

// TestBtree checks NCCL's binary tree on every size up to 70: parent and
// children agree, every index hangs from the root, heights match their
// definition, and no index is deeper than ⌈log2 size⌉.
func TestBtree(t *testing.T) {
	for size := 1; size <= 70; size++ {
		// height computes heights from the child lists, checking them.
		var height func(i int) int
		height = func(i int) int {
			h := 0
			k0, k1 := btreeChildren(i, size)
			for _, k := range []int{k0, k1} {
				if k < 0 {
					continue
				}
				if k >= size || k == i || btreeParent(k, size) != i {
					t.Fatalf("size %d: child %d of %d: parent says %d", size, k, i, btreeParent(k, size))
				}
				h = max(h, 1+height(k))
			}
			return h
		}
		for i := range size {
			if got, want := btreeHeight(i, size), height(i); got != want {
				t.Errorf("size %d: btreeHeight(%d) = %d, want %d", size, i, got, want)
			}
		}
		for i := 1; i < size; i++ {
			p, depth := i, 0
			for p != 0 {
				k0, k1 := btreeChildren(btreeParent(p, size), size)
				if k0 != p && k1 != p {
					t.Fatalf("size %d: %d is not a child of its parent %d", size, p, btreeParent(p, size))
				}
				p, depth = btreeParent(p, size), depth+1
			}
			if limit := bits.Len(uint(size - 1)); depth > limit {
				t.Errorf("size %d: index %d at depth %d, over %d", size, i, depth, limit)
			}
		}
	}
}

// TestDBTreeShape checks both trees on every world size up to 70: they span
// every rank, parent and children agree, heights and depths are right, and
// no rank but the root is an inner node of both.
func TestDBTreeShape(t *testing.T) {
	for n := 2; n <= 70; n++ {
		inner := make([]int, n)
		for off := range 2 {
			tr := dbTree{n: n, off: off}
			seen := 0
			var walk func(v, depth int) int
			walk = func(v, depth int) int {
				seen++
				if got := tr.depth(v); got != depth {
					t.Errorf("n=%d tree %d: depth(%d) = %d, want %d", n, off, v, got, depth)
				}
				if depth > 1+bits.Len(uint(n-2)) {
					t.Errorf("n=%d tree %d: rank %d at depth %d", n, off, v, depth)
				}
				h := 0
				for _, k := range tr.children(v) {
					if k < 0 {
						continue
					}
					if tr.parent(k) != v {
						t.Fatalf("n=%d tree %d: child %d of %d has parent %d", n, off, k, v, tr.parent(k))
					}
					h = max(h, 1+walk(k, depth+1))
				}
				if h > 0 {
					inner[v]++
				}
				if got := tr.height(v); got != h {
					t.Errorf("n=%d tree %d: height(%d) = %d, want %d", n, off, v, got, h)
				}
				return h
			}
			walk(0, 0)
			if seen != n {
				t.Errorf("n=%d tree %d: spans %d ranks", n, off, seen)
			}
		}
		for v := 1; v < n; v++ {
			if inner[v] > 1 {
				t.Errorf("n=%d: rank %d is an inner node of both trees", n, v)
			}
		}
	}
}
