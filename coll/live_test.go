package coll

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hccl-test/hccl-test/backends/shm"
	"github.com/hccl-test/hccl-test/dtype"
)

// TestStatusWaiting: a rank stuck on a peer that never calls reports how
// long it has waited, and on whom.
func TestStatusWaiting(t *testing.T) {
	const stuck = 200 * time.Millisecond
	tests := []struct {
		name string
		op   Op
		want string
	}{
		{"allreduce waits to receive from the silent rank", AllReduce, "receive from rank 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := NewComm(shm.NewWorld(2).Endpoint(0))
			ctx, cancel := context.WithTimeout(context.Background(), callHang)
			defer cancel()
			a := &Args{Op: tt.op, DType: dtype.FP32, RedOp: dtype.Sum, Count: 256,
				Send: make([]byte, 1024), Recv: make([]byte, 1024)}
			done := make(chan error, 1)
			begun := time.Now()
			go func() { _, err := c.Run(ctx, Auto, a); done <- err }()
			time.Sleep(stuck)
			s := c.Status()
			// The wait began after the call did: it cannot be longer.
			sinceCall := time.Since(begun)
			cancel()
			<-done
			_, after, ok := strings.Cut(s, ", waiting ")
			if !ok || !strings.Contains(after, tt.want) {
				t.Fatalf("status %q: want waiting ... %s", s, tt.want)
			}
			waited, err := time.ParseDuration(strings.Fields(after)[0])
			if err != nil {
				t.Fatalf("status %q: %v", s, err)
			}
			// The status rounds to the millisecond, and reads ticks, not
			// time.Now: a millisecond of leeway for both.
			if waited < stuck/2 || waited > sinceCall+time.Millisecond {
				t.Fatalf("status %q: waited %v, want about %v and at most the %v since the call began", s, waited, stuck, sinceCall)
			}
		})
	}
}

// TestStatusBetweenCalls: the call number and whether the rank is inside
// a call, kept in one word, read back as they were written.
func TestStatusBetweenCalls(t *testing.T) {
	c := NewComm(shm.NewWorld(1).Endpoint(0))
	if s, want := c.Status(), "rank 0: no collective yet"; s != want {
		t.Fatalf("before any call: %q, want %q", s, want)
	}
	a := &Args{Op: AllReduce, DType: dtype.FP32, RedOp: dtype.Sum, Count: 4, Send: make([]byte, 16), Recv: make([]byte, 16)}
	for call := 1; call <= 3; call++ {
		if _, err := c.Run(context.Background(), Auto, a); err != nil {
			t.Fatal(err)
		}
		if s, want := c.Status(), fmt.Sprintf("rank 0: between calls, op #%d done", call); s != want {
			t.Fatalf("after call %d: %q, want %q", call, s, want)
		}
	}
}
