package sim_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/hccl-test/hccl-test/backends"
	"github.com/hccl-test/hccl-test/coll"
	"github.com/hccl-test/hccl-test/dtype"
	"github.com/hccl-test/hccl-test/internal/vmem"
)

// untouchable backs the buffers of calls without payload: a touch crashes.
var untouchable vmem.Region

// TestNoPayloadSameTime: an allreduce without payload, over buffers that
// no memory backs, leaves every rank's clock where the same allreduce with
// payload does, since clocks depend on the messages' lengths only.
func TestNoPayloadSameTime(t *testing.T) {
	const n, count = 8, 1 << 18 // 1 MiB of fp32
	for _, algo := range []string{"ring", "rhd", "hier"} {
		t.Run(algo, func(t *testing.T) {
			run := func(noPayload bool) []time.Duration {
				return runWorld(t, n, links, func(ctx context.Context, tr backends.Transport) error {
					c := coll.NewComm(tr)
					c.SetNoPayload(noPayload)
					if err := c.SetTopology(links.PerServer); err != nil {
						return err
					}
					send, recv := make([]byte, 4*count), make([]byte, 4*count)
					if noPayload {
						mem, err := untouchable.Get(8 * count)
						if err != nil {
							return err
						}
						send, recv = mem[:4*count], mem[4*count:]
					}
					for range 2 {
						if _, err := c.Run(ctx, algo, &coll.Args{Op: coll.AllReduce, DType: dtype.FP32, RedOp: dtype.Avg,
							Count: count, Send: send, Recv: recv}); err != nil {
							return err
						}
					}
					return c.Barrier(ctx)
				})
			}
			with, without := run(false), run(true)
			if !slices.Equal(with, without) {
				t.Fatalf("clocks differ:\nwith payload:    %v\nwithout payload: %v", with, without)
			}
			if with[0] == 0 {
				t.Fatal("clocks did not move")
			}
		})
	}
}

// TestNoPayloadTransport: a message of a call without payload completes
// without touching either buffer, and costs what its length costs.
func TestNoPayloadTransport(t *testing.T) {
	const s = 1_000_000
	clocks := runWorld(t, 2, links, func(ctx context.Context, tr backends.Transport) error {
		tr.(backends.CallTagger).BeginCall(backends.Call{Seq: 1, Op: 1, Root: -1, NoPayload: true})
		buf, err := untouchable.Get(s)
		if err != nil {
			return err
		}
		if tr.Rank() == 0 {
			return tr.Send(1, buf).Wait(ctx)
		}
		return tr.RecvReduce(0, buf, buf, dtype.Reducer(dtype.FP32, dtype.Sum)).Wait(ctx)
	})
	want := links.IntraAlpha + at(s, links.IntraGBps) + at(s, links.ReduceGBps)
	if clocks[1] != want {
		t.Fatalf("receiver's clock %v, want %v", clocks[1], want)
	}
}
