package bench

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/hccl-test/hccl-test/coll"
	"github.com/hccl-test/hccl-test/dtype"
	"github.com/hccl-test/hccl-test/payload"
	"github.com/hccl-test/hccl-test/results"
	"github.com/hccl-test/hccl-test/world"
)

// TestRunOverlap sweeps a few collectives on shm with a fixed compute
// amount, with auto (also in buckets), and inside groups: every row
// overlapped and checked correct; a plan without --overlap fills nothing.
func TestRunOverlap(t *testing.T) {
	for _, tc := range []struct {
		name    string
		overlap time.Duration
		auto    bool
		fusion  []int
		layout  string
	}{
		{name: "2ms", overlap: 2 * time.Millisecond},
		{name: "auto", auto: true, fusion: []int{4}},
		{name: "groups", overlap: 500 * time.Microsecond, layout: "tp=2,dp=2"},
		{name: "off"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := smallPlan()
			p.Ops = []coll.Op{coll.AllReduce, coll.AllGather, coll.Broadcast}
			p.DTypes, p.RedOps = []dtype.DType{dtype.FP32}, []dtype.ReduceOp{dtype.Sum}
			p.Root, p.Placements = 0, []Placement{OutOfPlace, InPlace}
			p.MinBytes, p.MaxBytes, p.StepFactor = 256, 64<<10, 16
			p.Overlap, p.OverlapAuto, p.Fusion = tc.overlap, tc.auto, tc.fusion
			if tc.layout != "" {
				p.Ranks = 4
				var err error
				if p.Layout, err = world.ParseLayout(tc.layout, p.Ranks); err != nil {
					t.Fatal(err)
				}
				p.Groups = []string{"tp", "dp"}
			}
			var c capture
			if _, err := Run(context.Background(), p, &c); err != nil {
				t.Fatal(err)
			}
			if len(c.records) != len(p.Rows()) {
				t.Fatalf("%d records, want %d", len(c.records), len(p.Rows()))
			}
			on := tc.overlap > 0 || tc.auto
			if (c.header.Overlap != "") != on {
				t.Errorf("header overlap %q with --overlap %v", c.header.Overlap, on)
			}
			for _, r := range c.records {
				name := r.Op + " " + r.Group
				if r.Wrong != 0 {
					t.Errorf("%s %d B in %d buckets: %d wrong", name, r.Bytes, r.Buckets, r.Wrong)
				}
				if !on {
					if r.ComputeUS != 0 || r.TotalUS != 0 || r.OverlapEff != 0 {
						t.Errorf("%s %d B: overlap fields without --overlap: %v %v %v", name, r.Bytes, r.ComputeUS, r.TotalUS, r.OverlapEff)
					}
					continue
				}
				shared := payload.ComputeShared(p.HostedRanksOrAll())
				if !(r.ComputeUS > 0) || !(r.TotalUS > 0) || math.IsNaN(r.OverlapEff) != shared || math.IsInf(r.OverlapEff, 0) {
					t.Errorf("%s %d B in %d buckets: compute %v total %v eff %v (cores shared: %v)", name, r.Bytes, r.Buckets, r.ComputeUS, r.TotalUS, r.OverlapEff, shared)
				}
				if shared {
					continue
				}
				if want := overlapEfficiency(r.TimeUS, r.ComputeUS, r.TotalUS); r.OverlapEff != want {
					t.Errorf("%s %d B: eff %v, want %v", name, r.Bytes, r.OverlapEff, want)
				}
			}
		})
	}
}

// TestOverlapEfficiency checks the formula on hand-made times.
func TestOverlapEfficiency(t *testing.T) {
	for _, tc := range []struct {
		name                 string
		comm, compute, total float64
		want                 float64
	}{
		{"shorter hidden entirely", 100, 300, 300, 1},
		{"nothing hidden", 100, 300, 400, 0},
		{"half hidden", 200, 100, 250, 0.5},
		{"equal, fully overlapped", 50, 50, 50, 1},
		{"slowed each other: nothing hidden", 100, 100, 300, 0},
		{"total below the longer part: all hidden", 2, 500, 450, 1},
		{"no comm time", 0, 100, 100, math.NaN()},
		{"no compute time", 100, 0, 100, math.NaN()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := overlapEfficiency(tc.comm, tc.compute, tc.total)
			if math.IsNaN(tc.want) != math.IsNaN(got) || (!math.IsNaN(got) && math.Abs(got-tc.want) > 1e-12) {
				t.Errorf("overlapEfficiency(%v, %v, %v) = %v, want %v", tc.comm, tc.compute, tc.total, got, tc.want)
			}
		})
	}
}

// TestOverlapEfficiencyRange feeds the formula adversarial times (a short
// collective beside long compute, totals below the longer part or far above
// the sum, zeros, negatives, infinities, NaN): the result is NaN or within
// [0, 1], and NaN exactly when a time is not positive and finite.
func TestOverlapEfficiencyRange(t *testing.T) {
	vals := []float64{math.Inf(-1), -1e9, -1, 0, 1e-12, 1e-3, 1.9, 2, 28, 450, 500, 829, 1e9, math.MaxFloat64, math.Inf(1), math.NaN()}
	ok := func(v float64) bool { return v > 0 && !math.IsInf(v, 0) }
	for _, comm := range vals {
		for _, compute := range vals {
			for _, total := range vals {
				got := overlapEfficiency(comm, compute, total)
				valid := ok(comm) && ok(compute) && ok(total) && !math.IsInf(comm+compute+total, 0)
				if math.IsNaN(got) == valid || (!math.IsNaN(got) && (got < 0 || got > 1)) {
					t.Errorf("overlapEfficiency(%v, %v, %v) = %v", comm, compute, total, got)
				}
			}
		}
	}
	// the measurements of issue 21 at -p 2, whose eff read 4.9 and 12.2
	for _, c := range [][3]float64{{1.92, 837.67, 830.05}, {1.88, 846.26, 822.80}, {2.67, 811.03, 886.57}} {
		if got := overlapEfficiency(c[0], c[1], c[2]); got < 0 || got > 1 {
			t.Errorf("overlapEfficiency%v = %v", c, got)
		}
	}
}

// TestOverlapSharedCores checks that a row whose ranks outnumber the cores
// gets no efficiency (NaN, shown as -), its times kept.
func TestOverlapSharedCores(t *testing.T) {
	rec := results.Record{TimeUS: 4}
	overlapResult{totalUS: 10, computeUS: 8, shared: true}.fill(&rec)
	if !math.IsNaN(rec.OverlapEff) || rec.ComputeUS != 8 || rec.TotalUS != 10 {
		t.Errorf("record %v %v %v, want 8 10 NaN", rec.ComputeUS, rec.TotalUS, rec.OverlapEff)
	}
}

// TestCombineOverlap checks rank 0's reduction of every rank's samples:
// the slowest rank's mean overlapped time and its compute time, and the
// record fields filled from them.
func TestCombineOverlap(t *testing.T) {
	for _, tc := range []struct {
		name                string
		all                 []float64
		n, iters            int
		total, compute, eff float64
	}{
		{
			name: "one rank", all: []float64{3e-6, 5e-6, 4e-6}, n: 1, iters: 2,
			total: 4, compute: 4, eff: (4 + 4 - 4) / 4.0,
		},
		{
			// rank 1 has the largest mean total, rank 0 the longest compute
			name: "slowest ranks differ", n: 2, iters: 3,
			all: []float64{1e-6, 2e-6, 3e-6, 8e-6 /* rank 1: */, 3e-6, 3e-6, 6e-6, 2e-6},
			// total below compute: inconsistent, held to 1
			total: 4, compute: 8, eff: 1,
		},
		{
			name: "compute too short to time", all: []float64{4e-6, 0}, n: 1, iters: 1,
			total: 4, compute: 1e-3, eff: (4 + 1e-3 - 4) / 1e-3,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := combineOverlap(tc.all, tc.n, tc.iters)
			if math.Abs(o.totalUS-tc.total) > 1e-9 || math.Abs(o.computeUS-tc.compute) > 1e-9 {
				t.Errorf("total %v compute %v, want %v %v", o.totalUS, o.computeUS, tc.total, tc.compute)
			}
			rec := results.Record{TimeUS: 4}
			o.fill(&rec)
			if rec.ComputeUS != o.computeUS || rec.TotalUS != o.totalUS || math.Abs(rec.OverlapEff-tc.eff) > 1e-6 {
				t.Errorf("record %v %v %v, want %v %v %v", rec.ComputeUS, rec.TotalUS, rec.OverlapEff, o.computeUS, o.totalUS, tc.eff)
			}
		})
	}
	var rec results.Record
	overlapResult{}.fill(&rec)
	if rec.ComputeUS != 0 || rec.TotalUS != 0 || rec.OverlapEff != 0 {
		t.Errorf("no measurement filled %+v", rec)
	}
}
