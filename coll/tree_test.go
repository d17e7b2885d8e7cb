package coll

import (
	"bytes"
	"math/bits"
	"slices"
	"testing"
)

// TestTreeShape checks the binomial tree on every world size up to 33
// against its definition: the parent of v is v minus its lowest set bit.
// Each subtree must be the contiguous run the gather and scatter rely on,
// and no rank may sit deeper than ceil(log2 n).
func TestTreeShape(t *testing.T) {
	parentOf := func(v int) int {
		bit := 1
		for v&bit == 0 {
			bit <<= 1
		}
		return v - bit
	}
	for n := 1; n <= 33; n++ {
		kids := make([][]int, n)
		for v := 1; v < n; v++ {
			p := parentOf(v)
			if got := treeParent(v); got != p {
				t.Fatalf("n=%d: treeParent(%d) = %d, want %d", n, v, got, p)
			}
			kids[p] = append(kids[p], v)
		}
		depthLimit := bits.Len(uint(n - 1))
		for v := range n {
			node := newTreeNode(v, 0, n)
			if got := slices.Collect(node.children()); !slices.Equal(got, kids[v]) {
				t.Errorf("n=%d: children of %d = %v, want %v", n, v, got, kids[v])
			}
			want := slices.Clone(kids[v])
			slices.Reverse(want)
			if got := slices.Collect(node.childrenLargestFirst()); !slices.Equal(got, want) {
				t.Errorf("n=%d: children of %d largest first = %v, want %v", n, v, got, want)
			}
			var inSubtree []int
			for u := v; u < n; u++ {
				a, depth := u, 0
				for a > v {
					a, depth = parentOf(a), depth+1
				}
				if a == v {
					inSubtree = append(inSubtree, u)
				}
				if v == 0 && depth > depthLimit {
					t.Errorf("n=%d: rank %d at depth %d, over %d", n, u, depth, depthLimit)
				}
			}
			if size := node.size(); len(inSubtree) != size || inSubtree[size-1] != v+size-1 {
				t.Errorf("n=%d: subtree of %d is %v, size says %d", n, v, inSubtree, size)
			}
		}
	}
}

func TestRotateBlocks(t *testing.T) {
	src := []byte("aabbccdd")
	for _, tc := range []struct {
		shift int
		want  string
	}{
		{0, "aabbccdd"},
		{1, "bbccddaa"},
		{3, "ddaabbcc"},
	} {
		dst := make([]byte, len(src))
		(&Comm{}).rotateBlocks(dst, src, tc.shift, 2)
		if !bytes.Equal(dst, []byte(tc.want)) {
			t.Errorf("shift %d: got %q, want %q", tc.shift, dst, tc.want)
		}
	}
}
