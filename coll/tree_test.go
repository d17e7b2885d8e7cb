package coll

import (
	"bytes"
	"math"
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

// TestTreeLevelCosts: the binomial tree's two-level costs on 2 servers of
// 4 (root 0), written out from the messages: its round at distance 4
// crosses servers and those at 2 and 1 do not.
func TestTreeLevelCosts(t *testing.T) {
	const (
		ai, bi = 1e-6, 1e-9 // inside a server
		ae, be = 1e-5, 4e-9 // between servers
		g, cp  = 2e-9, 3e-9 // reduction, copy
		b      = 1 << 20    // the vector; a block for gather and scatter
	)
	m := Model{Alpha: ai, Beta: bi, Gamma: g, Copy: cp, PerServer: 4, InterAlpha: ae, InterBeta: be}
	hopI, hopE := ai+b*bi, ae+b*be // one block or vector over each link
	tests := []struct {
		op   Op
		name string
		want float64
	}{
		// The last leaf's path (4, 6, 7) or the root's three sends and its copy.
		{Broadcast, "tree", max(hopE+2*hopI, b*(be+2*bi)+b*cp)},
		{Reduce, "tree", ae + b*(be+g) + 2*(ai+b*(bi+g))},
		// Rank 2 copies its block while rank 3's comes; rank 4's run of 4
		// blocks last; then the root rotates 8.
		{Gather, "tree", max(hopI, b*cp) + (ai + 2*b*bi) + (ae + 4*b*be) + 8*b*cp},
		// The root rotates 8 blocks, sends 4 across and 2 inside; rank 6
		// sends rank 7 its block, then copies its own.
		{Scatter, "tree", 8*b*cp + (ae + 4*b*be) + (ai + 2*b*bi) + b*bi + max(ai, b*cp)},
	}
	for _, tc := range tests {
		if got := Predict(tc.op, tc.name, 8, b, m); math.Abs(got-tc.want) > 1e-9*tc.want {
			t.Errorf("%v %s: %g, want %g", tc.op, tc.name, got, tc.want)
		}
	}
}
