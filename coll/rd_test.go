package coll

import (
	"bytes"
	"context"
	"math"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/hccl-test/hccl-test/backends/shm"
	"github.com/hccl-test/hccl-test/dtype"
)

// TestRDFold checks the fold against MPICH's mapping written out by hand.
func TestRDFold(t *testing.T) {
	for _, tc := range []struct {
		n         int
		survivors []int // survivor index of each rank, -1 for folded
	}{
		{1, []int{0}},
		{2, []int{0, 1}},
		{3, []int{-1, 0, 1}},
		{5, []int{-1, 0, 1, 2, 3}},
		{6, []int{-1, 0, -1, 1, 2, 3}},
		{7, []int{-1, 0, -1, 1, -1, 2, 3}},
		{8, []int{0, 1, 2, 3, 4, 5, 6, 7}},
		{12, []int{-1, 0, -1, 1, -1, 2, -1, 3, 4, 5, 6, 7}},
	} {
		f := newRDFold(tc.n)
		for r, want := range tc.survivors {
			if got := f.survivor(r); got != want {
				t.Errorf("n=%d: survivor(%d) = %d, want %d", tc.n, r, got, want)
			}
			if want >= 0 && f.rank(want) != r {
				t.Errorf("n=%d: rank(%d) = %d, want %d", tc.n, want, f.rank(want), r)
			}
			if folded, absorbs := want < 0, f.absorbs(r); absorbs != (!folded && r < 2*f.rem) {
				t.Errorf("n=%d: absorbs(%d) = %v", tc.n, r, absorbs)
			}
		}
	}
}

// TestRDBitwiseAgreement sums inexact floats, where the order of additions
// shows in the result, and requires every rank to end with the same bits.
func TestRDBitwiseAgreement(t *testing.T) {
	const count = 257
	for _, n := range []int{2, 3, 5, 6, 7, 8} {
		rng := rand.New(rand.NewPCG(uint64(n), 1))
		w := shm.NewWorld(n)
		ctx, cancel := context.WithTimeout(context.Background(), callHang)
		recvs := make([][]byte, n)
		errs := make([]error, n)
		var wg sync.WaitGroup
		for r := range n {
			send := make([]byte, 8*count)
			for i := range count {
				dtype.Encode(dtype.FP64, send, i, math.Ldexp(rng.Float64(), rng.IntN(60)-30))
			}
			recvs[r] = make([]byte, len(send))
			wg.Go(func() {
				_, errs[r] = NewComm(w.Endpoint(r)).Run(ctx, "rd", &Args{
					Op: AllReduce, DType: dtype.FP64, RedOp: dtype.Sum, Count: count, Send: send, Recv: recvs[r],
				})
			})
		}
		wg.Wait()
		cancel()
		for r := range n {
			if errs[r] != nil {
				t.Fatalf("n=%d rank %d: %v", n, r, errs[r])
			}
			if !bytes.Equal(recvs[r], recvs[0]) {
				t.Errorf("n=%d: rank %d's result differs from rank 0's", n, r)
			}
		}
	}
}
