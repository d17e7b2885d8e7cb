package coll

import (
	"bytes"
	"context"
	"sync"
	"testing"
	"time"

	"github.com/hccl-test/hccl-test/backends"
	"github.com/hccl-test/hccl-test/backends/sim"
	"github.com/hccl-test/hccl-test/dtype"
)

// TestMulSum runs every algorithm of every reducing collective with the
// mulsum reduction (each rank's input times 1 on even ranks, 2 on odd
// ones, then summed) on world sizes odd and even, in place and out of
// place, on shm and over tcp. The expectation is dtype.Pattern's, which
// weighs the inputs without the coll code.
func TestMulSum(t *testing.T) {
	for _, op := range AllOps() {
		if !op.Reduces() {
			continue
		}
		for _, algo := range append(Names(op), Auto) {
			t.Run(op.String()+"/"+algo, func(t *testing.T) {
				t.Parallel()
				for _, n := range []int{1, 2, 3, 4, 7} {
					for _, dt := range []dtype.DType{dtype.Int32, dtype.F8E4M3, dtype.BF16} {
						for _, inPlace := range []bool{false, true} {
							call{op: op, algo: algo, ranks: n, count: 37, dt: dt, redop: dtype.MulSum,
								root: n / 2, inPlace: inPlace}.run(t)
						}
					}
				}
				if algo != Auto {
					call{op: op, algo: algo, ranks: 3, count: 1001, dt: dtype.F8E5M2, redop: dtype.MulSum,
						root: 1, backend: "tcp"}.run(t)
				}
			})
		}
	}
}

// TestMulSumKeepsInput checks that an out-of-place mulsum leaves every
// rank's input as it was: the multiplication goes to memory of its own.
func TestMulSumKeepsInput(t *testing.T) {
	c := call{op: AllReduce, algo: "ring", ranks: 4, count: 100, dt: dtype.FP32, redop: dtype.MulSum}
	p := dtype.Pattern{DType: c.dt, Op: c.redop, Ranks: c.ranks}
	ctx, cancel := context.WithTimeout(context.Background(), callHang)
	defer cancel()
	endpoints := c.world(t, ctx)
	sends, orig := make([][]byte, c.ranks), make([][]byte, c.ranks)
	var wg sync.WaitGroup
	errs := make([]error, c.ranks)
	for r := range c.ranks {
		send, recv := c.buffers(p, r)
		sends[r], orig[r] = send, bytes.Clone(send)
		wg.Go(func() {
			_, errs[r] = NewComm(endpoints[r]).Run(ctx, c.algo, &Args{
				Op: c.op, DType: c.dt, RedOp: c.redop, Count: c.count, Send: send, Recv: recv})
		})
	}
	wg.Wait()
	for r := range c.ranks {
		if errs[r] != nil {
			t.Fatalf("rank %d: %v", r, errs[r])
		}
		if !bytes.Equal(sends[r], orig[r]) {
			t.Errorf("rank %d: mulsum wrote its input", r)
		}
	}
}

// TestMulSumChargesWork checks that on a virtual clock a mulsum call costs
// what a sum does plus the multiplication, and that without payload it
// costs the same as with.
func TestMulSumChargesWork(t *testing.T) {
	const n, count = 4, 1 << 16
	elapsed := func(redop dtype.ReduceOp, payload bool) time.Duration {
		w, err := sim.NewWorld(n, sim.LinkModel{})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), callHang)
		defer cancel()
		var wg sync.WaitGroup
		times := make([]time.Duration, n)
		errs := make([]error, n)
		for r := range n {
			wg.Go(func() {
				ep := w.Endpoint(r)
				c := NewComm(ep)
				c.SetNoPayload(!payload)
				var send, recv []byte
				if payload {
					send, recv = make([]byte, count*4), make([]byte, count*4)
				} else {
					send, recv = standIn(&noPayloadScratch, count*4), standIn(&noPayloadScratch, count*4)
				}
				_, errs[r] = c.Run(ctx, "ring", &Args{Op: AllReduce, DType: dtype.FP32, RedOp: redop, Count: count, Send: send, Recv: recv})
				clk, _ := backends.ClockOf(ep)
				times[r] = clk.Now()
			})
		}
		wg.Wait()
		for r, err := range errs {
			if err != nil {
				t.Fatalf("rank %d: %v", r, err)
			}
		}
		return times[1]
	}
	sum, mulsum := elapsed(dtype.Sum, true), elapsed(dtype.MulSum, true)
	if mulsum <= sum {
		t.Errorf("mulsum took %v on the virtual clock, sum %v: the multiplication is not charged", mulsum, sum)
	}
	if np := elapsed(dtype.MulSum, false); np != mulsum {
		t.Errorf("mulsum took %v without payload, %v with", np, mulsum)
	}
}
