package bench

import (
	"context"
	"fmt"
	"testing"

	"github.com/hccl-test/hccl-test/backends/shm"
	"github.com/hccl-test/hccl-test/coll"
	"github.com/hccl-test/hccl-test/dtype"
)

// BenchmarkRowIteration is what the harness adds to a small op: a row of
// b.N timed iterations of a 1 KiB fp32 allreduce over shm, run as the
// command runs it, reporting the row's own time per iteration
// (row-ns/iter: the slowest rank's mean, as the row prints it). On one rank
// the op sends nothing, so that figure is the op's local work and the
// harness's per-iteration cost (its clock readings and bookkeeping); on
// two, each rank's readings are also part of what its peer waits for.
// ns/op adds the row's setup and gathering, spread over its iterations.
func BenchmarkRowIteration(b *testing.B) {
	for _, ranks := range []int{1, 2} {
		b.Run(fmt.Sprintf("ranks=%d", ranks), func(b *testing.B) {
			p := DefaultPlan()
			p.Backend, p.Ranks = shm.Name, ranks
			p.Ops, p.DTypes, p.RedOps = []coll.Op{coll.AllReduce}, []dtype.DType{dtype.FP32}, []dtype.ReduceOp{dtype.Sum}
			p.MinBytes, p.MaxBytes = 1<<10, 1<<10
			p.Warmup = 5
			p.Algo = "oneshot" // no calibration before the row
			p.LinkGBps, p.LinkSource = 1, "given"
			// Rows of at most maxIters iterations (the plan's bound).
			var sum float64
			b.ResetTimer()
			for left := b.N; left > 0; left -= p.Iters {
				p.Iters = min(left, maxIters)
				var c capture
				if _, err := Run(context.Background(), p, &c); err != nil {
					b.Fatal(err)
				}
				if len(c.records) != 1 || c.records[0].Wrong != 0 {
					b.Fatalf("records %+v, want one correct row", c.records)
				}
				sum += c.records[0].TimeUS * 1e3 * float64(p.Iters)
			}
			b.StopTimer()
			b.ReportMetric(sum/float64(b.N), "row-ns/iter")
		})
	}
}
