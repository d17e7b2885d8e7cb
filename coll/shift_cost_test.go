package coll

import (
	"math"
	"slices"
	"testing"
)

// TestShiftLevels checks shiftLevels, which keeps the clocks of one
// server's ranks only, against the same exchanges run over every rank of
// the world: turning the world by a server must change nothing.
func TestShiftLevels(t *testing.T) {
	// world is shiftLevels over all n ranks, written out.
	world := func(n int, start float64, steps []shiftStep, end float64, m Model) float64 {
		link := func(from, to int) Model {
			if from/m.PerServer == to/m.PerServer {
				return m.intraLevel()
			}
			return m.interLevel()
		}
		clock := slices.Repeat([]float64{start}, n)
		for _, st := range steps {
			next := make([]float64, n)
			for r := range n {
				to, from := mod(r+st.shift, n), mod(r-st.shift, n)
				sent := clock[r] + st.pre + st.bytes*link(r, to).Beta
				arrived := clock[from] + st.pre + link(from, r).Alpha + st.bytes*link(from, r).Beta
				next[r] = max(sent, arrived) + st.post
			}
			clock = next
		}
		return slices.Max(clock) + end
	}
	const b = 1 << 16
	for _, sh := range []struct{ n, perServer int }{{8, 4}, {12, 4}, {9, 3}, {16, 8}, {24, 4}} {
		m := levelModel
		m.PerServer = sh.perServer
		n := sh.n
		var pairwise, gather, toAll []shiftStep
		for s := 1; s < n; s++ {
			pairwise = append(pairwise, shiftStep{shift: s, bytes: b})
		}
		for d := 1; d < n; d *= 2 {
			gather = append(gather, shiftStep{shift: -d, bytes: float64(min(d, n-d)) * b})
			blocks := float64(bruckStepBlocks(n, d)) * b
			toAll = append(toAll, shiftStep{shift: d, bytes: blocks, pre: m.copy(blocks), post: m.copy(blocks)})
		}
		tests := []struct {
			name  string
			cost  CostFunc
			start float64
			steps []shiftStep
			end   float64
		}{
			{"pairwise", pairwiseAllToAllLevelCost, m.copy(b), pairwise, 0},
			{"bruck allgather", bruckAllGatherLevelCost, m.copy(b), gather, m.copy(float64(n) * b)},
			{"bruck alltoall", bruckAllToAllLevelCost, m.copy(float64(n) * b), toAll, m.copy(float64(n) * b)},
		}
		for _, tc := range tests {
			got, want := tc.cost(n, b, m), world(n, tc.start, tc.steps, tc.end, m)
			if math.Abs(got-want) > 1e-12*want {
				t.Errorf("%s on %d ranks of %d: %g, want %g (every rank's clock)", tc.name, n/sh.perServer, sh.perServer, got, want)
			}
		}
	}
}
