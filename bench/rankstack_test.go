package bench

import (
	"context"
	"runtime"
	"testing"

	"github.com/hccl-test/hccl-test/coll"
	"github.com/hccl-test/hccl-test/results"
)

// stackSink records the goroutine stacks in use each time rank 0 writes a
// row, when every other rank has been through the row's deepest frames and
// waits for the next row.
type stackSink struct {
	capture
	most uint64 // the most stack bytes in use at a row's write
}

func (s *stackSink) Write(r results.Record) error {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	s.most = max(s.most, ms.StackInuse)
	return s.capture.Write(r)
}

// TestRankStackStaysSmall runs simulated worlds through the harness and
// checks that a rank's goroutine stack stays within 8 KiB, the size a
// stack reaches before its frames outgrow it (stacks double: 2, 4, 8, 16
// KiB). The harness's frames on a rank's path (Run's closure, sweep,
// measureRow) once took 11 KiB, the plan and a row's record copied on
// them, and every rank of a 16384-rank world grew to 16 KiB: 134 MB more
// and a copy of every stack. Both a replayed world (16 KiB and more on one
// server: the replay's frames below the algorithm) and the symmetric
// evaluation (smaller rows) are run.
func TestRankStackStaysSmall(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector's instrumentation deepens every frame")
	}
	const n = 1024
	tests := []struct {
		name     string
		op       coll.Op
		min, max int64
	}{
		{"allreduce small rows", coll.AllReduce, 1 << 10, 4 << 10},
		{"allreduce replayed rows", coll.AllReduce, 16 << 10, 1 << 20},
		{"allgather", coll.AllGather, 1 << 10, 1 << 20},
		{"broadcast", coll.Broadcast, 1 << 10, 1 << 20},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := simScalePlan(tc.op, n)
			p.Topology = Topology{}
			p.MinBytes, p.MaxBytes = tc.min, tc.max
			var s stackSink
			if _, err := Run(context.Background(), p, &s); err != nil {
				t.Fatal(err)
			}
			if len(s.records) == 0 {
				t.Fatal("no row written")
			}
			// Half-way between 8 and 16 KiB a rank: the goroutines outside
			// the world (the test's, the runtime's) are a few.
			if limit := uint64(n) * 12 << 10; s.most > limit {
				t.Errorf("%d KiB of stacks in use for %d ranks (%.1f KiB a rank), want at most %d KiB: a rank's frames outgrew 8 KiB",
					s.most>>10, n, float64(s.most)/n/1024, limit>>10)
			}
		})
	}
}
