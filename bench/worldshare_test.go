package bench

import (
	"context"
	"fmt"
	"testing"

	"github.com/hccl-test/hccl-test/coll"
)

// TestWorldShareOncePerRow: the cost model auto chooses a row's algorithm
// by, the same on every rank, is worked out once per row for the world,
// not once per rank and row; and the rows come out as when every rank
// works it out (the same algorithm and time as a world without the
// share, which the full sweep comparisons pin byte for byte).
func TestWorldShareOncePerRow(t *testing.T) {
	tests := []struct {
		ranks, perServer int
		runs             int
	}{
		{ranks: 64},
		{ranks: 48, perServer: 8},
		{ranks: 16, runs: 2},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("ranks=%d/per-server=%d/runs=%d", tc.ranks, tc.perServer, tc.runs), func(t *testing.T) {
			p := simScalePlan(coll.AllReduce, tc.ranks)
			p.MinBytes, p.MaxBytes = 1<<10, 1<<16
			p.Topology = Topology{PerServer: tc.perServer}
			if tc.runs > 0 {
				p.Runs = tc.runs
			}
			rows := len(p.Rows()) * max(p.runCount(), 1)
			before := rowModelsMade.Load()
			var c capture
			if _, err := Run(context.Background(), p, &c); err != nil {
				t.Fatal(err)
			}
			if len(c.records) != rows {
				t.Fatalf("%d rows, want %d", len(c.records), rows)
			}
			if got := rowModelsMade.Load() - before; got != int64(rows) {
				t.Errorf("row models worked out %d times for %d rows of %d ranks, want once per row", got, rows, tc.ranks)
			}
		})
	}
}
