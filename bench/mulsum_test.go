package bench

import (
	"context"
	"testing"

	"github.com/hccl-test/hccl-test/coll"
	"github.com/hccl-test/hccl-test/dtype"
)

// TestRunFP8AndMulSum sweeps every collective with the fp8 types and every
// reduction, mulsum included, on shm and sim, and every row is checked
// right, with the bus factor of the collective whatever the reduction.
func TestRunFP8AndMulSum(t *testing.T) {
	for _, backend := range []string{"shm", "sim"} {
		t.Run(backend, func(t *testing.T) {
			p := smallPlan()
			p.Backend, p.Ranks = backend, 4
			p.DTypes = []dtype.DType{dtype.F8E4M3, dtype.F8E5M2, dtype.Int8}
			p.RedOps = dtype.AllOps()
			var c capture
			sum, err := Run(context.Background(), p, &c)
			if err != nil {
				t.Fatal(err)
			}
			if len(c.records) != len(p.Rows()) {
				t.Fatalf("%d records, want %d", len(c.records), len(p.Rows()))
			}
			mulsum := 0
			for _, r := range c.records {
				if r.Wrong != 0 {
					t.Errorf("%s %s %s %d B: %d wrong", r.Op, r.DType, r.RedOp, r.Bytes, r.Wrong)
				}
				if r.RedOp == "mulsum" {
					mulsum++
					op, _ := coll.ParseOp(r.Op)
					if want := r.AlgBW * op.BusFactor(4); r.BusBW != want {
						t.Errorf("%s mulsum: busbw %v, want %v", r.Op, r.BusBW, want)
					}
				}
			}
			if mulsum == 0 || sum.Wrong != 0 {
				t.Errorf("%d mulsum rows, %d wrong in all", mulsum, sum.Wrong)
			}
		})
	}
}

// TestMemoryCountsMulSum: a sweep with mulsum counts the multiplied
// inputs, one buffer a rank; without it, or without a reducing
// collective, nothing.
func TestMemoryCountsMulSum(t *testing.T) {
	part := func(p Plan) int64 {
		for _, m := range p.Memory().Parts {
			if m.Name == "mulsum's multiplied inputs" {
				return m.Bytes
			}
		}
		return -1
	}
	p := smallPlan()
	p.Backend = "shm"
	p.RedOps = []dtype.ReduceOp{dtype.Sum}
	if got := part(p); got != 0 {
		t.Errorf("without mulsum: %d bytes", got)
	}
	p.RedOps = []dtype.ReduceOp{dtype.Sum, dtype.MulSum}
	if got, want := part(p), int64(p.Ranks)*p.bufferNeed(p.Ranks); got != want || want <= 0 {
		t.Errorf("with mulsum: %d bytes, want %d", got, want)
	}
	p.Ops = []coll.Op{coll.AllGather}
	if got := part(p); got != 0 {
		t.Errorf("mulsum without a reducing collective: %d bytes", got)
	}
}
