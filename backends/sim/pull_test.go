package sim_test

import (
	"context"
	"testing"
	"time"

	"github.com/hccl-test/hccl-test/backends"
	"github.com/hccl-test/hccl-test/backends/backendtest"
	"github.com/hccl-test/hccl-test/backends/sim"
	"github.com/hccl-test/hccl-test/dtype"
)

// pullLinks is links with receivers moving the data, as on shared memory.
var pullLinks = func() sim.LinkModel { m := links; m.Pull = true; return m }()

// TestPullConformance: with receivers moving the data, sim is still a
// transport like any other.
func TestPullConformance(t *testing.T) { backendtest.Run(t, worldOn(pullLinks)) }

// TestPullTime checks the time model where receivers move the data
// (LinkModel.Pull) on exchanges whose times are known exactly: a message
// costs its receiver its bytes, reduced on the way at the slower of the
// two rates, one message after another, and its sender waits until it
// has been taken.
func TestPullTime(t *testing.T) {
	const s = 1_000_000
	alpha, bw, red := links.IntraAlpha, at(s, links.IntraGBps), at(s, links.ReduceGBps)
	sum := dtype.Reducer(dtype.FP32, dtype.Sum)
	checkClocks(t, pullLinks, []clockCase{
		{"the receiver moves it, the sender waits", 2, func(ctx context.Context, tr backends.Transport) error {
			buf := make([]byte, s)
			if tr.Rank() == 0 {
				return tr.Send(1, buf).Wait(ctx)
			}
			return tr.Recv(0, buf).Wait(ctx)
		}, map[int]time.Duration{0: alpha + bw, 1: alpha + bw}},
		{"a reduction is one pass at the slower rate", 2, func(ctx context.Context, tr backends.Transport) error {
			buf := make([]byte, s)
			if tr.Rank() == 0 {
				return tr.Send(1, buf).Wait(ctx)
			}
			return tr.RecvReduce(0, buf, buf, sum).Wait(ctx)
		}, map[int]time.Duration{0: alpha + max(bw, red), 1: alpha + max(bw, red)}},
		{"three senders into one receiver take turns", 4, func(ctx context.Context, tr backends.Transport) error {
			// Ranks 0 and 1 share a server; 2 and 3 are on the other,
			// whose messages come at the slower link's rate, once the
			// receiver is done with the one before.
			buf := make([]byte, s)
			if tr.Rank() == 0 {
				bufs := [][]byte{make([]byte, s), make([]byte, s), make([]byte, s)}
				return waitAll(ctx, tr.Recv(1, bufs[0]), tr.Recv(2, bufs[1]), tr.Recv(3, bufs[2]))
			}
			return tr.Send(0, buf).Wait(ctx)
		}, map[int]time.Duration{
			1: alpha + bw, // taken first, from the same server
			2: alpha + bw + at(s, links.InterGBps),
			3: alpha + bw + 2*at(s, links.InterGBps),
			0: alpha + bw + 2*at(s, links.InterGBps),
		}},
		{"messages posted at once leave a gap apart", 2, func(ctx context.Context, tr backends.Transport) error {
			if tr.Rank() == 0 {
				return waitAll(ctx, tr.Send(1, nil), tr.Send(1, nil), tr.Send(1, nil))
			}
			return waitAll(ctx, tr.Recv(0, nil), tr.Recv(0, nil), tr.Recv(0, nil))
		}, map[int]time.Duration{0: 2*links.Gap + alpha, 1: 2*links.Gap + alpha}},
	})
}
