package coll

import (
	"fmt"
	"math"
	"slices"
	"testing"
)

// levelModel is a two-level model in the proportions of HCCS inside a
// server and RoCE between servers, with 8 ranks per server.
var levelModel = Model{Alpha: 2e-6, Beta: 1 / 56e9, Gamma: 1 / 10e9, PerServer: 8, InterAlpha: 10e-6, InterBeta: 1 / 25e9}

// uniform returns m with both levels' links set to one of them: the
// faster (slow false) or the slower. It keeps two levels, so a step-aware
// cost still applies.
func uniform(m Model, slow bool) Model {
	if slow {
		m.Alpha, m.Beta = m.InterAlpha, m.InterBeta
	} else {
		m.InterAlpha, m.InterBeta = m.Alpha, m.Beta
	}
	return m
}

// TestLevelCosts: on two levels, every step-aware cost charges each
// message its own link, so it lies between the same cost with both links
// the faster one and with both the slower one (on either bound when one
// link, or the reductions, set the pace of a direct step), and below the
// flat bound, its algorithm's one-level formula on the slower link. On 64
// ranks of 8 it also lies above that formula on the faster link. (Not on
// every layout: there a one-level formula reduces after moving, and on
// fewer or smaller servers the step-aware costs of the direct algorithms
// and of the chain's reduce hide reductions behind the slower link's
// transfers.) The one-level formulas leave out some of the copies a rank
// makes on its own buffers (a tree gather's rotation of n blocks at the
// root, for one), which the step-aware costs count and which do not
// depend on the links, so copies are free here.
func TestLevelCosts(t *testing.T) {
	shapes := []struct{ n, perServer int }{{64, 8}, {8, 4}, {16, 4}, {32, 16}, {48, 8}, {9, 3}}
	for _, sh := range shapes {
		m := levelModel
		m.Copy, m.PerServer = 1e-30, sh.perServer
		for op, algs := range algorithms {
			for _, alg := range algs {
				// hier has no flat bound to compare with (TestHierCost).
				if alg.flat == nil || !alg.levelsApply(sh.n, m) {
					continue
				}
				for _, b := range []float64{1 << 10, 1 << 16, 1 << 20} {
					what := fmt.Sprintf("%v %s on %d servers of %d, %g B", op, alg.name, sh.n/sh.perServer, sh.perServer, b)
					got := alg.predict(sh.n, b, m)
					if fast, slow := alg.levels(sh.n, b, uniform(m, false)), alg.levels(sh.n, b, uniform(m, true)); !(got >= fast && got <= slow) {
						t.Errorf("%s: %g, want between %g (both links the faster) and %g (both the slower)", what, got, fast, slow)
					}
					if flat := alg.flat(sh.n, b, m.flat(sh.n)); !(got < flat) {
						t.Errorf("%s: %g, want below the flat bound %g", what, got, flat)
					}
					if fast := alg.flat(sh.n, b, m.intraLevel()); sh.n == 64 && !(got > fast) {
						t.Errorf("%s: %g, want above %g (the faster link only)", what, got, fast)
					}
				}
			}
		}
	}
	if got, _ := Choose(AllReduce, Auto, 16<<10, 64, levelModel); got != "rd" && got != "rhd" {
		t.Errorf("auto picked %s for 16 KiB on 64 ranks, want rd or rhd", got)
	}
}

// TestLevelCostsApply: which layouts each kind of step-aware cost takes;
// elsewhere the algorithm is costed on the flat bound, as before.
func TestLevelCostsApply(t *testing.T) {
	tests := []struct {
		op           Op
		name         string
		n, perServer int
		wantLevels   bool
		why          string
	}{
		{AllReduce, "rd", 64, 8, true, "powers of two"},
		{AllReduce, "rd", 48, 8, false, "48 is not a power of two"},
		{Broadcast, "tree", 64, 8, true, "powers of two"},
		{Broadcast, "tree", 48, 8, false, "48 is not a power of two"},
		{Gather, "tree", 18, 6, false, "6 is not a power of two"},
		{Broadcast, "ring", 48, 8, true, "whole servers"},
		{Scatter, "ring", 9, 3, true, "whole servers"},
		{AllGather, "bruck", 12, 4, true, "whole servers"},
		{AllToAll, "pairwise", 9, 3, true, "whole servers"},
		{AllToAll, "bruck", 10, 4, false, "4 does not divide 10"},
		{AllToAll, "pairwise", 8, 8, false, "one server"},
		{AllReduce, "dbtree", 48, 8, true, "whole servers"},
		{Broadcast, "dbtree", 10, 4, false, "4 does not divide 10"},
	}
	for _, tc := range tests {
		m := levelModel
		m.PerServer = tc.perServer
		alg, ok := lookup(tc.op, tc.name)
		if !ok {
			t.Fatalf("%v %s is not registered", tc.op, tc.name)
		}
		if got := alg.levelsApply(tc.n, m); got != tc.wantLevels {
			t.Errorf("%v %s on %d ranks, %d per server: step-aware %v, want %v (%s)", tc.op, tc.name, tc.n, tc.perServer, got, tc.wantLevels, tc.why)
		}
		if !tc.wantLevels {
			if got, want := alg.predict(tc.n, 1024, m), alg.flat(tc.n, 1024, m.flat(tc.n)); got != want {
				t.Errorf("%v %s on %d ranks, %d per server: %g, want the flat bound %g", tc.op, tc.name, tc.n, tc.perServer, got, want)
			}
		}
	}
}

// TestRootedLevelCosts: the rooted costs on 2 servers of 4 (root 0),
// written out from the messages: the binomial tree's round at distance 4
// crosses servers and those at 2 and 1 do not; the chain's hop from rank 3
// to rank 4 crosses.
func TestRootedLevelCosts(t *testing.T) {
	const (
		ai, bi = 1e-6, 1e-9 // inside a server
		ae, be = 1e-5, 4e-9 // between servers
		g, cp  = 2e-9, 3e-9 // reduction, copy
		b      = 1 << 20    // the vector; a block for gather and scatter
		sigma  = b / 8.0    // a chain's segment: 8 of them
	)
	m := Model{Alpha: ai, Beta: bi, Gamma: g, Copy: cp, PerServer: 4, InterAlpha: ae, InterBeta: be}
	hopI, hopE := ai+b*bi, ae+b*be // one block or vector over each link
	segI, segE := ai+sigma*bi, ae+sigma*be
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
		// One hop across, six inside, seven segments queued behind the
		// first at rank 3, which sends across.
		{Broadcast, "ring", max(segE+6*segI+7*sigma*be, b*bi+b*cp)},
		{Reduce, "ring", ae + sigma*(be+g) + 6*(ai+sigma*(bi+g)) + 7*sigma*max(be, g)},
		// Every block hops all the way, or rank 4 sends its own and the
		// three from beyond it across back to back and the last hops on.
		{Gather, "ring", max(hopE+6*hopI, hopE+3*hopI+3*b*be, b*cp)},
		{Scatter, "ring", b*cp + max(hopE+6*hopI, hopE+3*hopI+3*b*be)},
	}
	for _, tc := range tests {
		if got := Predict(tc.op, tc.name, 8, b, m); math.Abs(got-tc.want) > 1e-9*tc.want {
			t.Errorf("%v %s: %g, want %g", tc.op, tc.name, got, tc.want)
		}
	}
}

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
