package bench

import (
	"context"
	"math"
	"testing"

	"github.com/hccl-test/hccl-test/coll"
	"github.com/hccl-test/hccl-test/dtype"
	"github.com/hccl-test/hccl-test/results"
)

// checkOneSeries fails t when r's statistics are not of one series: the
// quantiles out of order, the mean outside them, or the bandwidths not
// derived from the mean.
func checkOneSeries(t *testing.T, r results.Record, ranks int) {
	t.Helper()
	name := r.Op + "/" + r.DType + "/" + r.RedOp
	if !(r.MinUS <= r.P50US && r.P50US <= r.P99US && r.P99US <= r.MaxUS) {
		t.Errorf("%s %d B root %d in-place %v: min %v p50 %v p99 %v max %v out of order",
			name, r.Bytes, r.Root, r.InPlace, r.MinUS, r.P50US, r.P99US, r.MaxUS)
	}
	if !(r.MinUS <= r.TimeUS && r.TimeUS <= r.MaxUS) {
		t.Errorf("%s %d B root %d in-place %v: time %v outside min %v .. max %v",
			name, r.Bytes, r.Root, r.InPlace, r.TimeUS, r.MinUS, r.MaxUS)
	}
	if r.StdDevUS < 0 || r.StdDevUS > r.MaxUS-r.MinUS {
		t.Errorf("%s %d B: stddev %v outside 0 .. max-min %v", name, r.Bytes, r.StdDevUS, r.MaxUS-r.MinUS)
	}
	op, err := coll.ParseOp(r.Op)
	if err != nil {
		t.Fatal(err)
	}
	// A variable-size row's algbw is its traffic's (TestTrafficRecord).
	if want := float64(r.Bytes) / r.TimeUS / 1e3; !op.Desc().Variable() && math.Abs(r.AlgBW-want) > 1e-9*want {
		t.Errorf("%s %d B: algbw %v, want size/time %v", name, r.Bytes, r.AlgBW, want)
	}
	if want := r.AlgBW * op.BusFactor(ranks); math.Abs(r.BusBW-want) > 1e-9*want {
		t.Errorf("%s %d B: busbw %v, want algbw x factor %v", name, r.Bytes, r.BusBW, want)
	}
}

// TestCombineOneSeries: every statistic of a row is of one rank's
// iterations, the slowest rank's (its loop took longest; the lowest rank
// on a tie), so min <= time <= max. Not of each iteration's maximum over
// the ranks: with stragglers that alternate, those add up to more than
// either rank's whole loop (10 us an op where each loop took 5.5 an op).
func TestCombineOneSeries(t *testing.T) {
	row := Row{Op: coll.AllReduce, DType: dtype.FP32, RedOp: dtype.Sum, Root: -1, Place: OutOfPlace, Bytes: 4096, Count: 1024, GroupSize: 2}
	for _, tc := range []struct {
		name     string
		r0, r1   []float64 // times in µs, one per iteration
		wantMean float64
	}{
		{"alternating stragglers", []float64{10, 1, 10, 1}, []float64{1, 10, 1, 10}, 5.5},
		{"one steady, one bursty", []float64{6, 6, 6, 6}, []float64{1, 1, 1, 15}, 6},
		{"the bursty one slower", []float64{6, 6, 6, 6}, []float64{1, 1, 1, 25}, 7},
		{"equal", []float64{3, 3, 3}, []float64{3, 3, 3}, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			iters := len(tc.r0)
			var all []float64
			for _, rk := range [][]float64{tc.r0, tc.r1} {
				for _, us := range rk {
					all = append(all, us*1e-6)
				}
				all = append(all, make([]float64, sampleExtras)...)
			}
			rec := combine(row, all, 2, iters, 0, AverageMax)
			checkOneSeries(t, rec, 2)
			if math.Abs(rec.TimeUS-tc.wantMean) > 1e-9 {
				t.Errorf("time %v, want the slowest rank's mean %v", rec.TimeUS, tc.wantMean)
			}
		})
	}
}

// TestRunStatsOneSeries runs many ops, every root, both placements and
// several sizes on shm and checks every row's statistics.
func TestRunStatsOneSeries(t *testing.T) {
	p := smallPlan()
	p.Ranks = 4
	p.Ops = coll.AllOps()
	p.DTypes = []dtype.DType{dtype.FP32}
	p.RedOps = []dtype.ReduceOp{dtype.Sum}
	p.MinBytes, p.MaxBytes, p.StepFactor = 256, 64<<10, 16
	p.Iters, p.Warmup = 5, 1
	var c capture
	if _, err := Run(context.Background(), p, &c); err != nil {
		t.Fatal(err)
	}
	if len(c.records) == 0 {
		t.Fatal("no rows")
	}
	roots := map[int]bool{}
	for _, r := range c.records {
		checkOneSeries(t, r, p.Ranks)
		roots[r.Root] = true
	}
	if len(roots) < p.Ranks {
		t.Errorf("rows ran roots %v, want every one of %d", roots, p.Ranks)
	}
}

// TestStragglerReadable: skew is a ratio of busy times only where the
// slowest rank was busy for a tenth of the row's time or more; below that
// the ranks spent the op in waits and skew is 0 (not known).
func TestStragglerReadable(t *testing.T) {
	for _, tc := range []struct {
		name     string
		busy     []float64
		total    float64
		wantRank int
		wantSkew float64
	}{
		{"straggler", []float64{1e-3, 1e-3, 50e-3, 1e-3}, 100e-3, 2, 50},
		{"balanced", []float64{40e-3, 40e-3, 40e-3}, 100e-3, 0, 1},
		{"all in waits", []float64{1e-6, 5e-3, 1e-6}, 100e-3, 1, 0},
		{"one rank", []float64{1e-3}, 100e-3, 0, 1},
		{"nothing measured", []float64{0, 0, 0}, 100e-3, -1, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rank, skew := straggler(tc.busy, tc.total)
			if rank != tc.wantRank || math.Abs(skew-tc.wantSkew) > 1e-9 {
				t.Errorf("straggler = rank %d skew %v, want %d %v", rank, skew, tc.wantRank, tc.wantSkew)
			}
		})
	}
}
