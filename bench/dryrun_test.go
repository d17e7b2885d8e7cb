package bench

import (
	"math"
	"strings"
	"testing"

	"github.com/hccl-test/hccl-test/coll"
	"github.com/hccl-test/hccl-test/dtype"
	"github.com/hccl-test/hccl-test/units"
	"github.com/hccl-test/hccl-test/world"
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

// TestDryRunDomains: the dry run names the groups the sweep runs in and
// the bucket counts of --fusion.
func TestDryRunDomains(t *testing.T) {
	p := DefaultPlan()
	p.MinBytes, p.MaxBytes = 1024, 4096
	var err error
	if p.Layout, err = world.ParseLayout("tp=4,dp=2", 8); err != nil {
		t.Fatal(err)
	}
	p.Groups, p.Fusion = []string{"tp", "dp"}, []int{4, 16}
	var b strings.Builder
	if err := p.DryRun(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"the sweep runs in: tp (2 groups of 4, all at once), dp (4 groups of 2, all at once)",
		"fusion: each size also as [4 16] collectives back to back",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("dry run lacks %q:\n%s", want, b.String())
		}
	}
}

// TestDryRunEstimateAtLimits: a plan at every limit at once has an estimate
// past what a time.Duration holds; it is said so, not wrapped to a negative
// time.
func TestDryRunEstimateAtLimits(t *testing.T) {
	p := DefaultPlan()
	p.Backend, p.NoPayload, p.Check = "shm", true, false
	p.MinBytes, p.MaxBytes, p.Ranks = 1<<40, 1<<40, 4096
	p.Iters, p.Warmup, p.Runs = maxIters, maxIters, maxIters
	var b strings.Builder
	if err := p.DryRun(&b); err != nil {
		t.Fatal(err)
	}
	if out := b.String(); !strings.Contains(out, "# estimated time: more than 100 years") {
		t.Errorf("dry run:\n%s", out)
	}
}

// TestMemoryNeededSaturates: -e at its limit on 4096 ranks needs more bytes
// than an int64 counts; the estimate saturates and the plan is refused,
// where the product wrapped negative and passed the memory check.
func TestMemoryNeededSaturates(t *testing.T) {
	p := DefaultPlan()
	p.Ops = []coll.Op{coll.Broadcast}
	p.MaxBytes, p.Ranks, p.MemLimit = units.MaxSize, 4096, 1<<34
	if got := p.MemoryNeeded(); got != math.MaxInt64 {
		t.Errorf("MemoryNeeded = %d, want %d", got, int64(math.MaxInt64))
	}
	if err := p.Validate(); err == nil || !strings.Contains(err.Error(), "of memory for 4096 ranks") {
		t.Errorf("Validate: %v, want the memory check's refusal", err)
	}
}
