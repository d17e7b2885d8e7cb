package bench

import (
	"context"
	"testing"
	"time"

	"github.com/hccl-test/hccl-test/coll"
	"github.com/hccl-test/hccl-test/dtype"
	"github.com/hccl-test/hccl-test/internal/wallbound"
)

// TestOverlapInterruptedKeepsPlainTiming: a run stopped while a row is in
// its overlap phase still writes that row's plain timing, measured before
// (with no overlap figures, and unchecked), and returns the error.
func TestOverlapInterruptedKeepsPlainTiming(t *testing.T) {
	for _, tc := range []struct {
		name   string
		fusion []int
	}{
		{name: "one collective"},
		{name: "buckets", fusion: []int{2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := smallPlan()
			p.Ranks, p.Ops, p.Algo = 2, []coll.Op{coll.AllReduce}, "ring"
			p.DTypes, p.RedOps = []dtype.DType{dtype.FP32}, []dtype.ReduceOp{dtype.Sum}
			p.Placements = []Placement{OutOfPlace}
			p.MinBytes, p.MaxBytes, p.Iters, p.Warmup = 1024, 1024, 2, 0
			p.Fusion = tc.fusion
			// A minute of compute per overlapped iteration: the run is
			// in the overlap phase of its first row when it is stopped.
			p.Timeout = 5 * time.Minute
			// The stop ends the run within slack over the same row run
			// with a millisecond of overlap, measured now (wallbound).
			quick := p
			quick.Overlap = time.Millisecond
			base := wallbound.Baseline(func() {
				if _, err := Run(context.Background(), quick, &capture{}); err != nil {
					t.Fatalf("the row with 1ms of overlap: %v", err)
				}
			})
			p.Overlap = time.Minute
			const stopAfter = 2 * time.Second
			ctx, cancel := context.WithTimeout(context.Background(), stopAfter)
			defer cancel()
			var c capture
			start := time.Now()
			_, err := Run(ctx, p, &c)
			if err == nil {
				t.Fatal("Run: no error, want the interruption")
			}
			if took, bound := time.Since(start), wallbound.Bound(stopAfter, base); took > bound {
				t.Errorf("Run took %v, the stop came at %v (the row with 1ms of overlap takes %v)", took, stopAfter, base)
			}
			if len(c.records) != 1 {
				t.Fatalf("%d records, want the first row's plain timing (error %v)", len(c.records), err)
			}
			r := c.records[0]
			// The check comes after the overlap phase: the row says it was
			// not checked (-1), rather than correct.
			if r.Op != "allreduce" || r.Bytes != 1024 || !(r.TimeUS > 0) || r.Wrong != -1 {
				t.Errorf("record %+v: want allreduce 1024 B, timed, unchecked", r)
			}
			if r.ComputeUS != 0 || r.TotalUS != 0 {
				t.Errorf("record has overlap figures %v %v from a phase that did not finish", r.ComputeUS, r.TotalUS)
			}
		})
	}
}
