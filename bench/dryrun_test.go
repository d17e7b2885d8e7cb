package bench

import (
	"strings"
	"testing"

	"github.com/hccl-test/hccl-test/coll"
	"github.com/hccl-test/hccl-test/dtype"
)

func TestDryRun(t *testing.T) {
	p := DefaultPlan()
	p.Ops = []coll.Op{coll.AllReduce, coll.Broadcast}
	p.DTypes = []dtype.DType{dtype.FP16, dtype.FP32}
	p.RedOps = []dtype.ReduceOp{dtype.Sum, dtype.Max}
	p.MinBytes, p.MaxBytes, p.Ranks, p.Runs = 1024, 4096, 4, 3
	var b strings.Builder
	if err := p.DryRun(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	// allreduce: 2 dtypes x 2 redops x 3 sizes; broadcast: 2 dtypes x 3 sizes.
	for _, want := range []string{
		"allreduce (12 rows)", "broadcast (6 rows)", "rows: 18 per run, 54 in all",
		"sizes: 1KiB 2KiB 4KiB", "memory: about", "per rank", "estimated time: about",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("dry run lacks %q:\n%s", want, out)
		}
	}
}
