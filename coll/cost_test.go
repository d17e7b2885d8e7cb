package coll

import (
	"fmt"
	"math"
	"testing"
)

// Properties that the cost formulas of rhd, rd allgather, dbtree, oneshot,
// twoshot and bruck all-to-all must have for `auto` to choose sensibly.

const (
	kib = 1 << 10
	mib = 1 << 20
)

// newCosts lists the cost of every algorithm added with this file's tests.
var newCosts = []struct {
	op   Op
	name string
	cost CostFunc
}{
	{AllReduce, "rhd", rhdAllReduceCost},
	{ReduceScatter, "rhd", rhdReduceScatterCost},
	{AllGather, "rd", rdAllGatherCost},
	{AllReduce, "dbtree", dbtreeAllReduceCost},
	{Broadcast, "dbtree", dbtreeBroadcastCost},
	{Reduce, "dbtree", dbtreeReduceCost},
	{AllReduce, "oneshot", oneshotAllReduceCost},
	{AllReduce, "twoshot", twoshotAllReduceCost},
	{AllToAll, "bruck", bruckAllToAllCost},
}

// TestNewCostsWellFormed: every cost is registered, positive and finite,
// grows with the size, and at size 0 is pure latency.
func TestNewCostsWellFormed(t *testing.T) {
	for _, tc := range newCosts {
		if _, ok := lookup(tc.op, tc.name); !ok {
			t.Errorf("%v %s is not registered", tc.op, tc.name)
		}
		for _, n := range []int{2, 3, 8, 1024} {
			prev := 0.0
			for _, b := range []float64{0, kib, 64 * mib} {
				c := tc.cost(n, b, DefaultModel)
				if !(c > 0) || math.IsInf(c, 0) {
					t.Errorf("%v %s n=%d b=%v: cost %v", tc.op, tc.name, n, b, c)
				}
				if c < prev {
					t.Errorf("%v %s n=%d b=%v: cost %v below %v for a smaller size", tc.op, tc.name, n, b, c, prev)
				}
				prev = c
			}
			slow := Model{Alpha: DefaultModel.Alpha, Beta: 2 * DefaultModel.Beta, Gamma: 2 * DefaultModel.Gamma}
			if a, b := tc.cost(n, 0, DefaultModel), tc.cost(n, 0, slow); a != b {
				t.Errorf("%v %s n=%d: moving no bytes costs %v or %v depending on beta and gamma", tc.op, tc.name, n, a, b)
			}
		}
	}
}

// cheapMessages and dearMessages are models where latency does not count
// and where it dominates.
var (
	cheapMessages = Model{Alpha: 1e-9, Beta: 1e-9, Gamma: 1e-9}
	dearMessages  = Model{Alpha: 1e-3, Beta: 1e-9, Gamma: 1e-9}
)

// TestCostProperties states, for each new formula, how it must compare with
// the algorithms it competes with.
func TestCostProperties(t *testing.T) {
	cost := func(op Op, name string, n int, b float64, m Model) float64 {
		t.Helper()
		c := Predict(op, name, n, int(b), m)
		if math.IsNaN(c) {
			t.Fatalf("%v %s has no cost", op, name)
		}
		return c
	}
	below := func(what string, x, y float64) {
		t.Helper()
		if !(x < y) {
			t.Errorf("%s: %v is not below %v", what, x, y)
		}
	}
	near := func(what string, x, y float64) {
		t.Helper()
		if math.Abs(x-y) > 0.1*y {
			t.Errorf("%s: %v is not within 10%% of %v", what, x, y)
		}
	}
	for _, n := range []int{8, 1024} {
		// Recursive halving-doubling: ring's bandwidth in log steps.
		below("rhd allreduce below ring at 1 KiB", cost(AllReduce, "rhd", n, kib, DefaultModel), cost(AllReduce, "ring", n, kib, DefaultModel))
		near("rhd allreduce as ring at 64 MiB", cost(AllReduce, "rhd", n, 64*mib, cheapMessages), cost(AllReduce, "ring", n, 64*mib, cheapMessages))
		below("rhd reducescatter below ring at 1 KiB", cost(ReduceScatter, "rhd", n, kib, DefaultModel), cost(ReduceScatter, "ring", n, kib, DefaultModel))
		near("rhd reducescatter as ring at 64 MiB", cost(ReduceScatter, "rhd", n, 64*mib, cheapMessages), cost(ReduceScatter, "ring", n, 64*mib, cheapMessages))
		// Recursive doubling allgather: ring's bandwidth in log steps.
		below("rd allgather below ring at 1 KiB", cost(AllGather, "rd", n, kib, DefaultModel), cost(AllGather, "ring", n, kib, DefaultModel))
		near("rd allgather as ring at 64 MiB", cost(AllGather, "rd", n, 64*mib, cheapMessages), cost(AllGather, "ring", n, 64*mib, cheapMessages))
		// One-shot: one step, n-1 vectors; two-shot: two steps, ring's data.
		below("oneshot below ring at 1 KiB, dear messages", cost(AllReduce, "oneshot", n, kib, dearMessages), cost(AllReduce, "ring", n, kib, dearMessages))
		below("oneshot below twoshot at 1 KiB, dear messages", cost(AllReduce, "oneshot", n, kib, dearMessages), cost(AllReduce, "twoshot", n, kib, dearMessages))
		below("ring below oneshot at 64 MiB", cost(AllReduce, "ring", n, 64*mib, DefaultModel), cost(AllReduce, "oneshot", n, 64*mib, DefaultModel))
		below("twoshot below oneshot at 64 MiB", cost(AllReduce, "twoshot", n, 64*mib, DefaultModel), cost(AllReduce, "oneshot", n, 64*mib, DefaultModel))
		near("twoshot as ring at 64 MiB", cost(AllReduce, "twoshot", n, 64*mib, cheapMessages), cost(AllReduce, "ring", n, 64*mib, cheapMessages))
		// Bruck all-to-all: log steps, each block sent up to log times.
		below("bruck below pairwise at 1 KiB", cost(AllToAll, "bruck", n, kib, DefaultModel), cost(AllToAll, "pairwise", n, kib, DefaultModel))
		below("pairwise below bruck at 64 MiB", cost(AllToAll, "pairwise", n, 64*mib, DefaultModel), cost(AllToAll, "bruck", n, 64*mib, DefaultModel))
		// Double binary tree: pipelined, so the whole buffer crosses each
		// rank about once whatever the depth.
		below("dbtree broadcast below binomial tree at 64 MiB", cost(Broadcast, "dbtree", n, 64*mib, DefaultModel), cost(Broadcast, "tree", n, 64*mib, DefaultModel))
		below("dbtree reduce below binomial tree at 64 MiB", cost(Reduce, "dbtree", n, 64*mib, DefaultModel), cost(Reduce, "tree", n, 64*mib, DefaultModel))
	}
	// On a shallow tree the pipeline's fill and drain are small: the buffer
	// crosses a rank once for broadcast, twice for allreduce, where the
	// busiest rank's port sends it while the rank reduces what came in
	// (the 32 segments a half take 7 steps more to fill and drain).
	near("dbtree broadcast moves the buffer once", cost(Broadcast, "dbtree", 8, 64*mib, cheapMessages), 64*mib*cheapMessages.Beta)
	near("dbtree allreduce moves twice the vector", cost(AllReduce, "dbtree", 8, 64*mib, cheapMessages), 2*64*mib*cheapMessages.Beta*(32+7)/32)
	// A small call is one segment a half, up the trees and back down:
	// about two latencies a level for allreduce, one for reduce, where
	// the ranks of each level wait only for theirs.
	for _, n := range []int{8, 64, 1024} {
		_, _, l := dbtreeShape(n, 0, true, true)
		a := dearMessages.Alpha
		if c := cost(AllReduce, "dbtree", n, 0, dearMessages); c < 2*l*a || c > 2.5*l*a {
			t.Errorf("dbtree allreduce of nothing on %d ranks: %.1f latencies, want %v to %v", n, c/a, 2*l, 2.5*l)
		}
		near(fmt.Sprintf("dbtree reduce of nothing on %d ranks", n), cost(Reduce, "dbtree", n, 0, dearMessages), l*a)
	}
	// Latency grows with the log of the world for the tree and halving
	// algorithms, linearly for the ring and the chain.
	below("dbtree allreduce below ring at 1 MiB on 1024 ranks", cost(AllReduce, "dbtree", 1024, mib, DefaultModel), cost(AllReduce, "ring", 1024, mib, DefaultModel))
	below("dbtree broadcast below chain at 1 MiB on 1024 ranks", cost(Broadcast, "dbtree", 1024, mib, DefaultModel), cost(Broadcast, "ring", 1024, mib, DefaultModel))
	below("dbtree reduce below chain at 1 MiB on 1024 ranks", cost(Reduce, "dbtree", 1024, mib, DefaultModel), cost(Reduce, "ring", 1024, mib, DefaultModel))
	// The ring reduces a block before it can send it on; the tree's ports
	// send some segments while the rank reduces others.
	below("dbtree allreduce below ring at 64 MiB on 8 ranks", cost(AllReduce, "dbtree", 8, 64*mib, DefaultModel), cost(AllReduce, "ring", 8, 64*mib, DefaultModel))
	// The fold costs a non-power of two an extra round trip of the whole
	// vector, so there ring wins at large sizes.
	below("ring allreduce below rhd at 64 MiB on 7 ranks", cost(AllReduce, "ring", 7, 64*mib, DefaultModel), cost(AllReduce, "rhd", 7, 64*mib, DefaultModel))
	// Halving moves less than doubling the whole vector every step.
	below("rhd allreduce below rd at 1 MiB on 8 ranks", cost(AllReduce, "rhd", 8, mib, DefaultModel), cost(AllReduce, "rd", 8, mib, DefaultModel))
	below("rd allreduce below rhd at 0 bytes", cost(AllReduce, "rd", 8, 0, DefaultModel), cost(AllReduce, "rhd", 8, 0, DefaultModel))
}

// TestFusedReceiveReduce checks the one rule Model.Fused changes: a byte
// received and reduced costs β+γ, or max(β, γ) when the backend reduces
// straight out of the sender's memory; and that the fused model predicts
// less for an algorithm that reduces what it receives.
func TestFusedReceiveReduce(t *testing.T) {
	m := Model{Alpha: 1e-6, Beta: 2e-9, Gamma: 1e-9}
	f := m
	f.Fused = true
	near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Abs(b) }
	if got, want := m.moveReduce(1000), 3e-6; !near(got, want) {
		t.Errorf("separate: %v, want %v", got, want)
	}
	if got, want := f.moveReduce(1000), 2e-6; !near(got, want) {
		t.Errorf("fused: %v, want %v", got, want)
	}
	for _, name := range Names(AllReduce) {
		if Predict(AllReduce, name, 8, 1<<20, f) >= Predict(AllReduce, name, 8, 1<<20, m) {
			t.Errorf("%s: fused prediction not below the separate one", name)
		}
	}
}

// TestSharedCores: on ranks that share Cores CPUs, a tree's rounds in
// which few ranks move data cost less per byte than the calibrated Beta
// (measured with all of them busy), round by round as share says; and
// algorithms in which every rank moves data in every step do not change.
func TestSharedCores(t *testing.T) {
	const n, b = 8, 1 << 20
	m := Model{Alpha: 1e-6, Beta: 1e-9, Gamma: 1e-9}
	s := m
	s.Cores = 2
	near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Abs(b) }
	tests := []struct {
		op   Op
		want float64 // seconds, with 2 cores: rounds of 1, 2 and 4 transfers
	}{
		{Broadcast, 3*m.Alpha + b*m.Beta*(2+2+4)/8},
		{Reduce, 3*m.Alpha + b*(m.Beta+m.Gamma)*(2+2+4)/8},
		// Gather: 4 subtrees send 1 block, 2 send 2, 1 sends 4.
		{Gather, 3*m.Alpha + b*m.Beta*(1*4+2*2+4*2)/8},
	}
	for _, tc := range tests {
		if got := Predict(tc.op, "tree", n, b, s); !near(got, tc.want) {
			t.Errorf("%v tree on 2 cores: %v, want %v", tc.op, got, tc.want)
		}
		if one, shared := Predict(tc.op, "tree", n, b, m), Predict(tc.op, "tree", n, b, s); !(shared < one) {
			t.Errorf("%v tree: %v on 2 shared cores, not below %v", tc.op, shared, one)
		}
	}
	for _, name := range []string{"ring", "rhd", "rd"} {
		if got, want := Predict(AllReduce, name, n, b, s), Predict(AllReduce, name, n, b, m); !near(got, want) {
			t.Errorf("%s allreduce: %v with shared cores, want %v", name, got, want)
		}
	}
	// With as many cores as ranks, nothing is shared.
	s.Cores = n
	for _, op := range []Op{Broadcast, Reduce, Gather} {
		if got, want := Predict(op, "tree", n, b, s), Predict(op, "tree", n, b, m); !near(got, want) {
			t.Errorf("%v tree on %d cores: %v, want %v as unshared", op, n, got, want)
		}
	}
}

// TestDirectStep: a step that posts k messages hands them out a gap apart
// or back to back, whichever is slower, so large messages hide the gaps;
// where the sender's CPU moves every message (SenderMoves) the two add up.
// Folded in rank order (oneshot, twoshot), every reduction follows the
// last transfer; fused, every pass follows the gaps.
func TestDirectStep(t *testing.T) {
	const a, g, k = 10.0, 4.0, 5
	m := Model{Alpha: a, Gap: g, Beta: 1, Gamma: 0.5}
	tests := []struct {
		name string
		got  float64
		want float64
	}{
		{"small: every gap", directStep(k, 1, m), a + 1 + 4*g},
		{"large: the gaps hide", directStep(k, 10, m), a + 10 + 4*10},
		{"sender moves: both", directStep(k, 10, Model{Alpha: a, Gap: g, SenderMoves: true}), a + 10 + 4*(g+10)},
		{"gap 0: half of alpha", directStep(k, 1, Model{Alpha: a}), a + 1 + 4*a/2},
		{"rank order: reductions last", rankOrderStep(k, 2, m), a + 2 + 4*g + k*2*0.5},
		{"rank order, fused: passes after the gaps", rankOrderStep(k, 2, Model{Alpha: a, Gap: g, Beta: 1, Gamma: 0.5, Fused: true}), a + 4*g + k*2},
	}
	for _, tc := range tests {
		if math.Abs(tc.got-tc.want) > 1e-9 {
			t.Errorf("%s: %g, want %g", tc.name, tc.got, tc.want)
		}
	}
}

// TestDBTreeCostFused: where the receiver reads the sender's buffer
// (Model.Fused, shm), it moves and reduces every segment with its own CPU,
// one after another. On 2 ranks the root takes the other rank's whole
// vector in both trees, so the call costs at least the root's pass over it,
// m·max(β, γ), and not much more (one step of fill and drain in 33).
func TestDBTreeCostFused(t *testing.T) {
	for _, m := range []Model{
		{Alpha: 1e-6, Beta: 1 / 8e9, Gamma: 1 / 4e9, Fused: true},
		{Alpha: 1e-6, Beta: 1 / 4e9, Gamma: 1 / 8e9, Fused: true},
	} {
		const b = 64 * mib
		pass := b * max(m.Beta, m.Gamma)
		if c := dbtreeAllReduceCost(2, b, m); c < pass || c > 1.1*pass {
			t.Errorf("beta %.3g, gamma %.3g: %.3g s, want %.3g s to 10%% more", m.Beta, m.Gamma, c, pass)
		}
	}
}

// TestCommChooseFollowsModel: a Comm's remembered pick is auto's pick for
// the call's size and the Comm's model, whichever changed since.
func TestCommChooseFollowsModel(t *testing.T) {
	fast := Model{Alpha: 1e-6, Beta: 1e-10, Gamma: 1e-10}
	slowLinks := Model{Alpha: 1e-3, Beta: 1e-10, Gamma: 1e-10}
	c := &Comm{size: 8}
	picks := map[string]bool{}
	for _, tc := range []struct {
		m Model
		b int
	}{{fast, 1 << 20}, {fast, 1 << 20}, {fast, 1 << 10}, {slowLinks, 1 << 10}, {fast, 1 << 20}} {
		c.model = tc.m
		got, err := c.choose(AllReduce, Auto, tc.b)
		want, _ := Choose(AllReduce, Auto, tc.b, 8, tc.m)
		if err != nil || got != want {
			t.Errorf("alpha %v, %d B: Comm picks %q (%v), Choose %q", tc.m.Alpha, tc.b, got, err, want)
		}
		picks[want] = true
	}
	if len(picks) < 2 {
		t.Errorf("auto picks %v for every case: the cases test no change of pick", picks)
	}
	if got, err := c.choose(AllReduce, "ring", 1<<10); got != "ring" || err != nil {
		t.Errorf("forced ring: %q, %v", got, err)
	}
}

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
