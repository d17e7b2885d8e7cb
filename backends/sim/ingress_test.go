package sim_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/hccl-test/hccl-test/backends"
	"github.com/hccl-test/hccl-test/backends/sim"
)

// TestIngress: a rank's ingress ports take its messages one after another,
// so k senders into one receiver at once take k messages' time on the
// receiver's port of their level (each level has its own), whatever order
// the receiver waits in; one sender per receiver takes one message's time.
// Without ingress ports every row reads one message's time.
func TestIngress(t *testing.T) {
	const s = 1_000_000 // a whole number of nanoseconds at every rate below
	base := sim.LinkModel{
		IntraAlpha: 2 * time.Microsecond, InterAlpha: 10 * time.Microsecond,
		IntraGBps: 50, InterGBps: 20, ReduceGBps: 10, Gap: time.Microsecond,
	}
	on := func(perServer int) sim.LinkModel { m := base; m.PerServer = perServer; return m }
	xi, xe := at(s, base.IntraGBps), at(s, base.InterGBps)
	ai, ae := base.IntraAlpha, base.InterAlpha
	tests := []struct {
		name    string
		ranks   int
		links   sim.LinkModel
		senders []int // into rank 0, each one message of size bytes at time 0
		size    int
		reverse bool // rank 0 waits from the last sender to the first
		want    time.Duration
	}{
		{"one sender inside a server", 2, on(8), []int{1}, s, false, xi + ai},
		{"7 senders inside a server", 8, on(8), []int{1, 2, 3, 4, 5, 6, 7}, s, false, 7*xi + ai},
		{"7 senders, waited in reverse", 8, on(8), []int{1, 2, 3, 4, 5, 6, 7}, s, true, 7*xi + ai},
		{"7 senders between servers", 8, on(1), []int{1, 2, 3, 4, 5, 6, 7}, s, false, 7*xe + ae},
		{"3 inside and 4 between, side by side", 8, on(4), []int{1, 2, 3, 4, 5, 6, 7}, s, false, max(3*xi+ai, 4*xe+ae)},
		{"3 inside only, 4 ranks between idle", 8, on(4), []int{1, 2, 3}, s, false, 3*xi + ai},
		{"15 senders between servers", 16, on(4), []int{4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}, s, true, 12*xe + ae},
		{"7 empty messages", 8, on(8), []int{1, 2, 3, 4, 5, 6, 7}, 0, false, ai},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			clocks := runWorld(t, tc.ranks, tc.links, func(ctx context.Context, tr backends.Transport) error {
				buf := make([]byte, tc.size)
				if tr.Rank() != 0 {
					if slices.Contains(tc.senders, tr.Rank()) {
						return tr.Send(0, buf).Wait(ctx)
					}
					return nil
				}
				order := slices.Clone(tc.senders)
				if tc.reverse {
					slices.Reverse(order)
				}
				reqs := make([]backends.Request, len(order))
				for i, p := range order {
					reqs[i] = tr.Recv(p, make([]byte, tc.size))
				}
				return waitAll(ctx, reqs...)
			})
			if clocks[0] != tc.want {
				t.Errorf("receiver's clock %v, want %v", clocks[0], tc.want)
			}
		})
	}
}

// TestIngressPermutation: where every rank sends to one rank and receives
// from one (a shift, on one level and across servers), no ingress port is
// shared and every receiver's clock is one message's time, as before
// ingress ports were modelled.
func TestIngressPermutation(t *testing.T) {
	const s = 1_000_000
	for _, tc := range []struct {
		name      string
		perServer int
		shift     int
		want      time.Duration
	}{
		{"shift 1 inside a server", 8, 1, at(s, 50) + 2*time.Microsecond},
		{"shift 4 between servers", 4, 4, at(s, 20) + 10*time.Microsecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := sim.LinkModel{PerServer: tc.perServer, IntraAlpha: 2 * time.Microsecond, InterAlpha: 10 * time.Microsecond,
				IntraGBps: 50, InterGBps: 20, ReduceGBps: 10, Gap: time.Microsecond}
			const n = 8
			clocks := runWorld(t, n, m, func(ctx context.Context, tr backends.Transport) error {
				r := tr.Rank()
				recv := tr.Recv((r-tc.shift+n)%n, make([]byte, s))
				send := tr.Send((r+tc.shift)%n, make([]byte, s))
				return waitAll(ctx, recv, send)
			})
			for r, c := range clocks {
				if c != tc.want {
					t.Errorf("rank %d: clock %v, want %v", r, c, tc.want)
				}
			}
		})
	}
}
