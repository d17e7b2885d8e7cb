package bench

import (
	"testing"

	"github.com/hccl-test/hccl-test/coll"
	"github.com/hccl-test/hccl-test/dtype"
)

// TestCombineInjectedCorruption: messages corrupted by --inject count as
// wrong elements, one each, wherever the check could not see them: in
// calls it does not check, and in the checked call when it found nothing.
func TestCombineInjectedCorruption(t *testing.T) {
	// Two ranks, one iteration: time, wrong, waited, corrupted outside
	// the checked call, corrupted in it, CPU time, time to the last receive.
	tests := []struct {
		name               string
		r0, r1             [7]float64
		wantWrong, wantInj int64
	}{
		{"no fault", [7]float64{1, 0, 0, 0, 0, 0, 0}, [7]float64{1, 0, 0, 0, 0, 0, 0}, 0, 0},
		{"in a timed call", [7]float64{1, 0, 0, 2, 0, 0, 0}, [7]float64{1, 0, 0, 1, 0, 0, 0}, 3, 3},
		{"in the checked call, seen", [7]float64{1, 5, 0, 0, 1, 0, 0}, [7]float64{1, 0, 0, 0, 0, 0, 0}, 5, 0},
		{"in the checked call, hidden", [7]float64{1, 0, 0, 0, 1, 0, 0}, [7]float64{1, 0, 0, 0, 0, 0, 0}, 1, 1},
		{"seen and unseen", [7]float64{1, 4, 0, 1, 1, 0, 0}, [7]float64{1, 0, 0, 0, 0, 0, 0}, 5, 1},
		{"not checked", [7]float64{1, -1, 0, 0, 0, 0, 0}, [7]float64{1, -1, 0, 0, 0, 0, 0}, -1, 0},
	}
	row := Row{Op: coll.AllReduce, DType: dtype.FP32, RedOp: dtype.Max, Count: 4, Bytes: 16}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec := combine(row, append(tc.r0[:], tc.r1[:]...), 2, 1, 0, AverageMax)
			if rec.Wrong != tc.wantWrong || rec.Injected != tc.wantInj {
				t.Errorf("wrong %d (%d injected), want %d (%d)", rec.Wrong, rec.Injected, tc.wantWrong, tc.wantInj)
			}
		})
	}
}
