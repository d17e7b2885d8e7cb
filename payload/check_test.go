package payload

import (
	"context"
	"fmt"
	"sync"
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
			if op.Desc().Variable() {
				row.Counts = testCounts(t, n)
			}
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

// testCounts are uneven counts of n ranks with an empty pair in each row
// (rank s sends nothing to rank s+1) and odd lengths.
func testCounts(t *testing.T, n int) *coll.Counts {
	t.Helper()
	cells := make([]int, n*n)
	for s := range n {
		for d := range n {
			if d != (s+1)%n {
				cells[s*n+d] = 37*(s+1) + 11*d
			}
		}
	}
	c, err := coll.NewCounts(n, cells)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestCheckVariable runs each variable-size collective in and out of place
// and checks it, then puts one element of one rank's output where the
// counts say it does not belong (the first element of the last block,
// swapped with the last of the one before): the check must find exactly
// those two, which a check that read the blocks at offsets of the nominal
// count would not.
func TestCheckVariable(t *testing.T) {
	const n = 4
	for _, op := range coll.AllOps() {
		if !op.Desc().Variable() {
			continue
		}
		for _, place := range []Placement{OutOfPlace, InPlace} {
			t.Run(fmt.Sprintf("%v/%d", op, place), func(t *testing.T) {
				row := Row{Op: op, DType: dtype.FP32, Root: -1, Place: place, Count: 50, Counts: testCounts(t, n)}
				if op.Reduces() {
					row.RedOp = dtype.Sum
				}
				pat := PatternFor(row, n)
				w := shm.NewWorld(n)
				var wg sync.WaitGroup
				args := make([]*coll.Args, n)
				for r := range n {
					bp := &BufferPool{A: make([]byte, 1<<16), B: make([]byte, 1<<16)}
					args[r] = bp.Args(row, r, n)
					Poison(args[r].Recv)
					FillInputs(args[r], pat, r)
					wg.Go(func() {
						if _, err := coll.NewComm(w.Endpoint(r)).Run(context.Background(), coll.Auto, args[r]); err != nil {
							t.Error(err)
						}
					})
				}
				wg.Wait()
				for r := range n {
					if got := CountWrong(args[r], row, pat, r, n); got != 0 {
						t.Fatalf("rank %d: %d wrong in a correct result", r, got)
					}
				}
				recv := args[n-1].Recv
				if len(recv) < 8 {
					t.Fatalf("rank %d: %d bytes received, too few to swap", n-1, len(recv))
				}
				// Swap two elements that differ.
				i, j := 0, len(recv)-4
				tmp := append([]byte(nil), recv[i:i+4]...)
				copy(recv[i:i+4], recv[j:j+4])
				copy(recv[j:j+4], tmp)
				if got := CountWrong(args[n-1], row, pat, n-1, n); got != 2 {
					t.Errorf("two elements swapped: %d wrong, want 2", got)
				}
			})
		}
	}
}
