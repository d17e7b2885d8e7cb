package payload

import (
	"context"
	"testing"

	"github.com/hccl-test/hccl-test/backends/shm"
	"github.com/hccl-test/hccl-test/coll"
	"github.com/hccl-test/hccl-test/dtype"
)

// TestFillShifted runs every collective on inputs shifted by 5 elements,
// as the sixth checked run of -c N fills them: checked with the same
// shift nothing is wrong, and checked as the first run (no shift) the
// output differs, so each run checks other values.
func TestFillShifted(t *testing.T) {
	const n, shift = 3, 5
	for _, op := range coll.AllOps() {
		t.Run(op.String(), func(t *testing.T) {
			row := Row{Op: op, DType: dtype.FP32, Root: 1, Place: OutOfPlace, Count: 600}
			if op.Reduces() {
				row.RedOp = dtype.Sum
			}
			row.Bytes = int64(row.Count * op.Blocks(n) * 4)
			pat := PatternFor(row, n)
			w := shm.NewWorld(n)
			done := make(chan [2]int64, n)
			for r := range n {
				go func() {
					bp := &BufferPool{A: make([]byte, 2*row.Bytes), B: make([]byte, 2*row.Bytes)}
					a := bp.Args(row, r, n)
					Poison(a.Recv)
					FillShifted(a, pat, r, shift)
					if _, err := coll.NewComm(w.Endpoint(r)).Run(context.Background(), coll.Auto, a); err != nil {
						t.Error(err)
					}
					done <- [2]int64{CountWrongShifted(a, row, pat, r, n, shift), CountWrong(a, row, pat, r, n)}
				}()
			}
			var unshifted int64
			for range n {
				res := <-done
				if res[0] != 0 {
					t.Errorf("shifted inputs checked with their shift: %d wrong", res[0])
				}
				unshifted += res[1]
			}
			if unshifted == 0 {
				t.Errorf("shifted inputs checked without the shift: nothing wrong, so the shift changed no value")
			}
		})
	}
}
