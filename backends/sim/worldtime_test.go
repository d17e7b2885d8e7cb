package sim_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/hccl-test/hccl-test/backends"
	"github.com/hccl-test/hccl-test/backends/sim"
	"github.com/hccl-test/hccl-test/coll"
)

// TestTwoshotTimedMatchesFullSimulation: twoshot's calls timed for the
// whole world in closed form (backends.WorldTimer) leave every rank's
// clock and waited time bit for bit where the same calls, run message by
// message on every rank, leave them: from aligned ranks and from ranks
// apart (back to back, after another algorithm), in place or not, with
// Avg, on 2 to 256 ranks, with latency-bound and bandwidth-bound parts;
// and the closed form was used exactly where it applies (one server,
// parts of equal length). Clocks staggered by a part's time a rank send
// the top ranks every part at once, which their ingress ports then take
// one after another: the closed form's ingress terms decide those cases.
func TestTwoshotTimedMatchesFullSimulation(t *testing.T) {
	two := func(count int) symCall { return symCall{coll.AllReduce, "twoshot", count, false, 0} }
	twoAvg := func(count int) symCall { return symCall{coll.AllReduce, "twoshot", count, true, 0} }
	ring := symCall{coll.AllReduce, "ring", 4096, false, 0}
	odd := sim.LinkModel{IntraAlpha: 1700 * time.Nanosecond, InterAlpha: 9100 * time.Nanosecond,
		IntraGBps: 23, InterGBps: 7, ReduceGBps: 9, CopyGBps: 13, Gap: 900 * time.Nanosecond}
	slowGap := odd
	slowGap.Gap = 40 * time.Microsecond // the gap, not the link, spaces the messages
	fastReduce := odd
	fastReduce.ReduceGBps, fastReduce.CopyGBps = 400, 600 // the receiving, not the reductions, bind
	reduce := symCall{coll.Reduce, "ring", 1 << 18, false, 0}
	twoServers := odd
	twoServers.PerServer = 4
	cases := []struct {
		name    string
		n       int
		links   sim.LinkModel
		calls   func(n int) []symCall
		hold    time.Duration // held by rank 1 before the calls
		stagger time.Duration // held by every rank r, r times, before the calls
		incast  int           // bytes every other rank sends rank 0 before the calls
		inPlace bool
		timed   int // calls TimeWorld should time
	}{
		{"2 ranks x3", 2, sim.DefaultLinkModel, func(n int) []symCall { return []symCall{two(8 * n), two(8 * n), two(8 * n)} }, 0, 0, 0, false, 3},
		{"3 ranks, small then large", 3, odd, func(n int) []symCall { return []symCall{two(n), two(100000 * n)} }, 0, 0, 0, false, 2},
		{"8 ranks, in place, avg", 8, odd, func(n int) []symCall { return []symCall{two(1000 * n), twoAvg(333 * n), two(n)} }, 0, 0, 0, true, 3},
		{"13 ranks, after a ring, rank 1 late", 13, odd, func(n int) []symCall { return []symCall{ring, two(4096 * n), two(7 * n)} }, 5 * time.Microsecond, 0, 0, false, 2},
		{"64 ranks, gap-bound", 64, slowGap, func(n int) []symCall { return []symCall{two(1024 * n), two(3 * n)} }, 0, 0, 0, false, 2},
		{"256 ranks x3", 256, sim.DefaultLinkModel, func(n int) []symCall { return []symCall{two(65536 * n), two(16 * n), two(4096 * n)} }, 0, 0, 0, false, 3},
		{"uneven parts", 16, odd, func(n int) []symCall { return []symCall{two(100*n + 5), two(100 * n)} }, 0, 0, 0, false, 1}, // the uneven call runs message by message
		{"two servers", 8, twoServers, func(n int) []symCall { return []symCall{two(100 * n)} }, 0, 0, 0, false, 0},
		// After an incast into rank 0 its ingress port has been busy until
		// its clock, far behind which the others start: its ingress terms
		// decide its time.
		{"8 ranks after an incast", 8, fastReduce, func(n int) []symCall { return []symCall{two(4096 * n), two(4096 * n)} }, 0, 0, 1 << 20, false, 2},
		{"8 ranks after an incast, in place", 8, fastReduce, func(n int) []symCall { return []symCall{two(65536 * n)} }, 0, 0, 1 << 20, true, 1},
		{"32 ranks after an incast", 32, fastReduce, func(n int) []symCall { return []symCall{two(65536 * n), two(16 * n)} }, 0, 0, 1 << 20, false, 2},
		{"8 ranks after an incast and a reduce", 8, odd, func(n int) []symCall { return []symCall{reduce, two(4096 * n)} }, 0, 0, 1 << 20, false, 1},
		{"8 ranks staggered by a step", 8, odd, func(n int) []symCall { return []symCall{two(4096 * n), two(4096 * n)} }, 0, 900 * time.Nanosecond, 0, false, 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			calls := tc.calls(tc.n)
			run := func(hide bool) ([]time.Duration, []time.Duration) {
				waited := make([]time.Duration, tc.n)
				clocks := runWorldFor(t, tc.n, tc.links, 5*time.Minute, func(ctx context.Context, tr backends.Transport) error {
					w := tr.(backends.WaitClock)
					if hide {
						tr = hidden{tr}
					}
					if tc.hold > 0 && tr.Rank() == 1 {
						w.(backends.Holder).Hold(tc.hold)
					}
					if tc.stagger > 0 {
						w.(backends.Holder).Hold(time.Duration(tr.Rank()) * tc.stagger)
					}
					if err := incast(ctx, tr, tc.incast); err != nil {
						return err
					}
					err := runCalls(ctx, tr, calls, tc.inPlace)
					waited[tr.Rank()] = w.Waited()
					return err
				})
				return clocks, waited
			}
			before := sim.WorldTimings()
			clocks, waited := run(false)
			got := sim.WorldTimings() - before
			fullClocks, fullWaited := run(true)
			if !slices.Equal(clocks, fullClocks) {
				t.Errorf("clocks differ:\ntimed: %v\nfull:  %v", clocks, fullClocks)
			}
			if !slices.Equal(waited, fullWaited) {
				t.Errorf("waited differs:\ntimed: %v\nfull:  %v", waited, fullWaited)
			}
			if got != int64(tc.timed) {
				t.Errorf("%d calls timed for the world, want %d", got, tc.timed)
			}
		})
	}
}

// incast sends rank 0 n bytes from every other rank at once, which rank 0
// receives; nothing for n = 0.
func incast(ctx context.Context, tr backends.Transport, n int) error {
	if n == 0 {
		return nil
	}
	if tr.Rank() != 0 {
		return tr.Send(0, make([]byte, n)).Wait(ctx)
	}
	reqs := make([]backends.Request, 0, tr.Size()-1)
	for p := 1; p < tr.Size(); p++ {
		reqs = append(reqs, tr.Recv(p, make([]byte, n)))
	}
	return waitAll(ctx, reqs...)
}
