package bench

import (
	"context"
	"strings"
	"testing"

	"github.com/hccl-test/hccl-test/coll"
	"github.com/hccl-test/hccl-test/dtype"
	"github.com/hccl-test/hccl-test/units"
)

// TestRunCalibratesMemory: a sweep with rows of at least calMemMin bytes
// measures beta and gamma again on its own buffers, and the header says
// at what size; one without such rows does not.
func TestRunCalibratesMemory(t *testing.T) {
	for _, maxBytes := range []int64{calMemMin, calMemMin / 4} {
		p := smallPlan()
		p.Ranks, p.Ops, p.DTypes, p.RedOps = 2, []coll.Op{coll.AllReduce}, []dtype.DType{dtype.FP32}, []dtype.ReduceOp{dtype.Sum}
		p.MinBytes, p.MaxBytes, p.Placements, p.Stats = maxBytes, maxBytes, []Placement{OutOfPlace}, true
		p.Iters, p.Warmup = 1, 0
		var c capture
		if _, err := Run(context.Background(), p, &c); err != nil {
			t.Fatal(err)
		}
		want := "from " + units.FormatSize(calMemMin) + ": beta"
		if got := strings.Contains(c.header.Model, want); got != (maxBytes >= calMemMin) {
			t.Errorf("rows of %s: header model %q; has %q: %v", units.FormatSize(maxBytes), c.header.Model, want, got)
		}
		if len(c.records) != 1 || !(c.records[0].ModelUS > 0) {
			t.Errorf("rows of %s: %d records, want one with a prediction", units.FormatSize(maxBytes), len(c.records))
		}
	}
}
