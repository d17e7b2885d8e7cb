package coll

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"github.com/hccl-test/hccl-test/backends"
	"github.com/hccl-test/hccl-test/dtype"
)

// TestStartWait starts an allreduce on every rank, keeps each rank busy
// while it runs, then waits: the result is the same as Run's, on both
// backends.
func TestStartWait(t *testing.T) {
	for _, backend := range []string{"shm", "tcp", "proc"} {
		t.Run(backend, func(t *testing.T) {
			c := call{op: AllReduce, algo: "ring", ranks: 4, count: 5000, dt: dtype.FP32, redop: dtype.Sum, backend: backend}
			ctx, cancel := context.WithTimeout(context.Background(), callHang)
			defer cancel()
			p := dtype.Pattern{DType: c.dt, Op: c.redop, Ranks: c.ranks}
			errs, _ := retryRun(ctx, c.world(t, ctx), Retry{}, func(r int, comm *Comm) error {
				send, recv := c.buffers(p, r)
				pending := comm.Start(ctx, c.algo, &Args{Op: c.op, DType: c.dt, RedOp: c.redop, Count: c.count, Send: send, Recv: recv})
				busy := time.Now().Add(time.Millisecond)
				for time.Now().Before(busy) {
				}
				used, err := pending.Wait(ctx)
				if err != nil {
					return err
				}
				if again, err2 := pending.Wait(ctx); again != used || err2 != nil {
					return errors.New("a second Wait differs")
				}
				if used != "ring" || !bytes.Equal(recv, c.expected(p, r)) {
					return errors.New("wrong result")
				}
				return nil
			})
			for r, err := range errs {
				if err != nil {
					t.Errorf("rank %d: %v", r, err)
				}
			}
		})
	}
}

// TestWaitDeadline: a Wait whose context ends before the collective
// returns the deadline, and the collective still ends under its own.
func TestWaitDeadline(t *testing.T) {
	c := call{op: AllReduce, ranks: 2, count: 16, dt: dtype.FP32, redop: dtype.Sum}
	ts := c.world(t, context.Background())
	comm := NewComm(ts[0]) // rank 1 never joins
	runCtx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	pending := comm.Start(runCtx, "ring", &Args{Op: AllReduce, DType: dtype.FP32, RedOp: dtype.Sum, Count: 16,
		Send: make([]byte, 64), Recv: make([]byte, 64)})
	waitCtx, cancelWait := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancelWait()
	if _, err := pending.Wait(waitCtx); !errors.Is(err, backends.ErrTimeout) {
		t.Fatalf("Wait: %v, want a timeout", err)
	}
	<-pending.Done()
	if _, err := pending.Wait(context.Background()); !errors.Is(err, backends.ErrTimeout) {
		t.Fatalf("the collective ended with %v, want its own timeout", err)
	}
}
