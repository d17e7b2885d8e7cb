package bench

import (
	"context"
	"math"
	"testing"

	"github.com/hccl-test/hccl-test/coll"
	"github.com/hccl-test/hccl-test/dtype"
	"github.com/hccl-test/hccl-test/world"
)

// TestRunGroups sweeps every collective inside the tp groups and then the
// dp groups of an 8-rank world, all groups of a kind at once: every row
// checked correct, and its bus factor the group's.
func TestRunGroups(t *testing.T) {
	p := smallPlan()
	p.Ranks = 8
	p.DTypes, p.RedOps = []dtype.DType{dtype.Int32}, []dtype.ReduceOp{dtype.Sum}
	p.Placements = []Placement{OutOfPlace, InPlace}
	var err error
	if p.Layout, err = world.ParseLayout("tp=4,dp=2", 8); err != nil {
		t.Fatal(err)
	}
	p.Groups = []string{"tp", "dp"}
	var c capture
	if _, err := Run(context.Background(), p, &c); err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for _, r := range c.records {
		seen[r.Group]++
		want := map[string]int{"tp": 4, "dp": 2}[r.Group]
		if r.GroupSize != want {
			t.Errorf("%s %s: group size %d, want %d", r.Group, r.Op, r.GroupSize, want)
		}
		if r.Wrong != 0 {
			t.Errorf("%s %s root %d %d B in-place %v: %d wrong", r.Group, r.Op, r.Root, r.Bytes, r.InPlace, r.Wrong)
		}
		op, _ := coll.ParseOp(r.Op)
		if w := r.AlgBW * op.BusFactor(want); math.Abs(r.BusBW-w) > 1e-12 {
			t.Errorf("%s %s: busbw %v, want %v", r.Group, r.Op, r.BusBW, w)
		}
		if r.Root >= want {
			t.Errorf("%s %s: root %d outside the group", r.Group, r.Op, r.Root)
		}
	}
	if seen["tp"] == 0 || seen["dp"] == 0 || len(seen) != 2 {
		t.Errorf("rows by group: %v", seen)
	}
	if c.header.Group != "tp,dp" || c.header.Groups == "" {
		t.Errorf("header: group %q, groups %q", c.header.Group, c.header.Groups)
	}
}

// TestRunFusion measures each size whole and in 4 and 16 buckets: every
// row checked, the bucket rows with a speedup against the whole one.
func TestRunFusion(t *testing.T) {
	p := smallPlan()
	p.Ops = []coll.Op{coll.AllReduce, coll.AllGather, coll.ReduceScatter, coll.AllToAll}
	p.DTypes, p.RedOps = []dtype.DType{dtype.FP32}, []dtype.ReduceOp{dtype.Sum}
	p.MinBytes, p.MaxBytes = 4096, 65536
	p.Fusion = []int{4, 16}
	var c capture
	if _, err := Run(context.Background(), p, &c); err != nil {
		t.Fatal(err)
	}
	buckets := map[int]int{}
	for _, r := range c.records {
		buckets[r.Buckets]++
		if r.Wrong != 0 {
			t.Errorf("%s %d B in %d buckets: %d wrong", r.Op, r.Bytes, r.Buckets, r.Wrong)
		}
		if (r.Buckets > 1) != (r.FusionSpeedup > 0) {
			t.Errorf("%s %d B in %d buckets: speedup %v", r.Op, r.Bytes, r.Buckets, r.FusionSpeedup)
		}
	}
	if buckets[1] == 0 || buckets[4] != buckets[1] || buckets[16] == 0 {
		t.Errorf("rows by bucket count: %v", buckets)
	}
	if !c.header.Fusion {
		t.Error("header does not say fusion")
	}
}
