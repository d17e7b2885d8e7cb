package tcp

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/hccl-test/hccl-test/backends"
	"github.com/hccl-test/hccl-test/dtype"
)

// TestSmallMessagesAllocateNothing exchanges small messages between two
// ranks over loopback, each rank releasing its requests once waited on as
// coll's waitAll does: once warm, a round allocates nothing, neither in
// the posting ranks nor in the links' reader and writer goroutines.
func TestSmallMessagesAllocateNothing(t *testing.T) {
	sum := dtype.Reducer(dtype.FP32, dtype.Sum)
	for _, tc := range []struct {
		name   string
		size   int
		reduce bool
	}{
		{"receive 8 B", 8, false},
		{"receive 1 KiB", 1 << 10, false},
		{"receive-and-reduce 1 KiB", 1 << 10, true},
		{"receive-and-reduce 16 KiB", 16 << 10, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			eps, mem := localPair(ctx, t, tc.size)
			round := func(me int) error {
				ep := eps[me]
				s := ep.Send(1-me, mem[me].src)
				var r backends.Request
				if tc.reduce {
					r = ep.RecvReduce(1-me, mem[me].dst, mem[me].acc, sum)
				} else {
					r = ep.Recv(1-me, mem[me].dst)
				}
				err := errors.Join(r.Wait(ctx), s.Wait(ctx))
				rel := ep.(backends.Releaser)
				rel.Release(r)
				rel.Release(s)
				return err
			}
			const warm, runs = 50, 200
			peer := make(chan error, 1)
			go func() {
				for range warm + runs + 1 { // AllocsPerRun runs once more to warm up
					if err := round(1); err != nil {
						peer <- err
						return
					}
				}
				peer <- nil
			}()
			for range warm {
				if err := round(0); err != nil {
					t.Fatal(err)
				}
			}
			var failed error
			allocs := testing.AllocsPerRun(runs, func() {
				if err := round(0); err != nil && failed == nil {
					failed = err
				}
			})
			if err := errors.Join(failed, <-peer); err != nil {
				t.Fatal(err)
			}
			if allocs != 0 {
				t.Fatalf("%v allocations a round, want 0", allocs)
			}
		})
	}
}
