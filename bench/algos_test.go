package bench

import (
	"context"
	"testing"

	"github.com/hccl-test/hccl-test/coll"
	"github.com/hccl-test/hccl-test/dtype"
)

// TestRunSeveralAlgos: with --algo auto,ring,rd every row is measured with
// each algorithm in turn, at both placements, checked correct, and says
// which it asked for; the forced ones ran as asked.
func TestRunSeveralAlgos(t *testing.T) {
	p := smallPlan()
	p.Ops, p.DTypes, p.RedOps = []coll.Op{coll.AllReduce}, []dtype.DType{dtype.FP32}, []dtype.ReduceOp{dtype.Sum}
	p.Algo = "auto,ring,rd"
	if !p.Compares() {
		t.Fatal("Compares() = false for three algorithms")
	}
	var c capture
	if _, err := Run(context.Background(), p, &c); err != nil {
		t.Fatal(err)
	}
	algos := []string{"auto", "ring", "rd"}
	if want := len(p.Sizes()) * len(algos) * 2; len(c.records) != want {
		t.Fatalf("%d records, want %d", len(c.records), want)
	}
	for i, r := range c.records {
		want := algos[i/2%3]
		if r.AlgoRequested != want || r.InPlace != (i%2 == 1) {
			t.Errorf("record %d (%d B): asked for %q in place %v, want %q in place %v", i, r.Bytes, r.AlgoRequested, r.InPlace, want, i%2 == 1)
		}
		if want != coll.Auto && r.Algo != want {
			t.Errorf("record %d: %s ran, %s asked for", i, r.Algo, want)
		}
		if r.Wrong != 0 {
			t.Errorf("record %d (%s %d B): %d wrong", i, r.Algo, r.Bytes, r.Wrong)
		}
	}
	if c.header.Algo != "auto,ring,rd" {
		t.Errorf("header algo %q", c.header.Algo)
	}

	p.Algo = "ring"
	if p.Compares() {
		t.Error("Compares() = true for one algorithm")
	}
}
