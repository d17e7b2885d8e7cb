package sim_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/hccl-test/hccl-test/backends"
	"github.com/hccl-test/hccl-test/backends/sim"
	"github.com/hccl-test/hccl-test/coll"
	"github.com/hccl-test/hccl-test/dtype"
)

// hidden wraps a rank's endpoint so that coll does not see its
// RunSymmetric: every call runs on every rank, message by message. The
// clock and the rank's own work are still found through Unwrap.
type hidden struct{ backends.Transport }

// oddLinks are link figures that share no factor with the sizes the
// tests call, so that a rounding a shortcut makes shows.
var oddLinks = sim.LinkModel{IntraAlpha: 1700 * time.Nanosecond, InterAlpha: 9100 * time.Nanosecond,
	IntraGBps: 23, InterGBps: 7, ReduceGBps: 9, CopyGBps: 13, Gap: 900 * time.Nanosecond}

// onServers returns m on servers of p ranks.
func onServers(m sim.LinkModel, p int) sim.LinkModel { m.PerServer = p; return m }

// BeginCall implements backends.CallTagger: shm must know that calls carry
// no payload.
func (h hidden) BeginCall(c backends.Call) { h.Transport.(backends.CallTagger).BeginCall(c) }

// Unwrap implements backends.Unwrapper.
func (h hidden) Unwrap() backends.Transport { return h.Transport }

// symCall is one collective call of a symmetric case.
type symCall struct {
	op    coll.Op
	algo  string
	count int // elements of fp32: a rank's block for allgather and reducescatter
	avg   bool
	// perServer is the Comm's topology for the call (coll.SetTopology),
	// which multiring's channels follow; 0 for none.
	perServer int
}

// TestSymmetricMatchesFullSimulation: a world whose symmetric calls are
// run once for all ranks (RunSymmetric) ends with every rank's clock and
// waited time bit for bit where the same calls, run message by message on
// every rank, leave them, on 8 to 256 ranks, one level or two, in place or
// not, after back-to-back calls and calls that are not symmetric; and the
// symmetric path was taken exactly where it applies.
func TestSymmetricMatchesFullSimulation(t *testing.T) {
	rd := symCall{coll.AllReduce, "rd", 1000, false, 0}                                    // 4000 B, whole vectors
	rhd := func(n int) symCall { return symCall{coll.AllReduce, "rhd", 37 * n, false, 0} } // equal parts
	rhdUneven := func(n int) symCall { return symCall{coll.AllReduce, "rhd", 37*n + 3, false, 0} }
	ag := symCall{coll.AllGather, "rd", 777, false, 0}
	rs := symCall{coll.ReduceScatter, "rhd", 333, false, 0}
	ring := symCall{coll.AllReduce, "ring", 4096, false, 0}
	cases := []struct {
		name  string
		n     int
		links sim.LinkModel
		calls func(n int) []symCall
		// hold is held by rank 1 before the calls: the ranks' clocks
		// disagree, so that no call is symmetric.
		hold    time.Duration
		inPlace bool
		// symmetric is how many calls RunSymmetric should run.
		symmetric func(calls int) int
	}{
		{"rd x3, 8 ranks", 8, sim.DefaultLinkModel, func(int) []symCall { return []symCall{rd, rd, rd} }, 0, false, all},
		{"rhd x3, 64 ranks, odd figures", 64, oddLinks, func(n int) []symCall { return []symCall{rhd(n), rhd(n), rhd(n)} }, 0, false, all},
		{"mixed, 256 ranks, 16 per server", 256, onServers(oddLinks, 16), func(n int) []symCall {
			return []symCall{rd, rhd(n), ag}
		}, 0, false, all},
		{"mixed in place, 32 ranks, 4 per server", 32, onServers(oddLinks, 4), func(n int) []symCall {
			return []symCall{rhd(n), rd, ag, rs, rhd(n)}
		}, 0, true, func(int) int { return 4 }}, // not the allgather in place
		{"then an uneven rhd and a ring, 16 ranks", 16, onServers(oddLinks, 8), func(n int) []symCall {
			return []symCall{rd, rhd(n), rhdUneven(n), rd, ring, rhd(n)}
		}, 0, false, func(int) int { return 2 }}, // the uneven rhd leaves the ranks apart
		{"ranks apart, 16 ranks", 16, oddLinks, func(n int) []symCall { return []symCall{rd, rhd(n)} }, 3 * time.Microsecond, false, none},
		{"servers of 6, 64 ranks", 64, onServers(oddLinks, 6), func(n int) []symCall { return []symCall{rd, rhd(n)} }, 0, false, none},
		{"128 ranks, 2 per server", 128, onServers(sim.DefaultLinkModel, 2), func(n int) []symCall { return []symCall{rhd(n), rd, ag} }, 0, false, all},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			calls := tc.calls(tc.n)
			got := matchesFull(t, "symmetric", tc.n, tc.links, calls, tc.hold, tc.inPlace, sim.SymmetricRuns)
			if want := int64(tc.symmetric(len(calls))); got != want {
				t.Errorf("%d calls ran symmetric, want %d", got, want)
			}
		})
	}
}

// matchesFull runs calls on n ranks (rank 1 holding hold first, so that
// the clocks disagree) twice: where a fast path (named path, counted by
// runs) may take them, and hidden from it, message by message. It checks
// that every rank's clock and waited time come out bit for bit alike and
// moved, and returns how many calls the fast path took.
func matchesFull(t *testing.T, path string, n int, links sim.LinkModel, calls []symCall, hold time.Duration, inPlace bool, runs func() int64) int64 {
	t.Helper()
	run := func(hide bool) ([]time.Duration, []time.Duration) {
		waited := make([]time.Duration, n)
		// Hundreds of ranks under the race detector on a loaded
		// machine are slow, not wrong.
		clocks := runWorldFor(t, n, links, 5*time.Minute, func(ctx context.Context, tr backends.Transport) error {
			w := tr.(backends.WaitClock)
			if hide {
				tr = hidden{tr}
			}
			if hold > 0 && tr.Rank() == 1 {
				w.(backends.Holder).Hold(hold)
			}
			err := runCalls(ctx, tr, calls, inPlace)
			waited[tr.Rank()] = w.Waited()
			return err
		})
		return clocks, waited
	}
	before := runs()
	clocks, waited := run(false)
	got := runs() - before
	fullClocks, fullWaited := run(true)
	if !slices.Equal(clocks, fullClocks) {
		t.Errorf("clocks differ:\n%s: %v\nfull: %v", path, clocks, fullClocks)
	}
	if !slices.Equal(waited, fullWaited) {
		t.Errorf("waited differs:\n%s: %v\nfull: %v", path, waited, fullWaited)
	}
	if clocks[0] == 0 {
		t.Error("clocks did not move")
	}
	return got
}

// all and none say how many of a case's calls run symmetric.
func all(calls int) int { return calls }
func none(int) int      { return 0 }

// runCalls runs calls on tr without payload, over buffers that no memory
// backs.
func runCalls(ctx context.Context, tr backends.Transport, calls []symCall, inPlace bool) error {
	c := coll.NewComm(tr)
	c.SetNoPayload(true)
	n := tr.Size()
	most := 0
	for _, k := range calls {
		most = max(most, 4*k.count*n)
	}
	if err := c.Reserve(ctx, most); err != nil {
		return err
	}
	mem, err := untouchable.Get(2 * most)
	if err != nil {
		return err
	}
	for i, k := range calls {
		if err := c.SetTopology(k.perServer); err != nil {
			return err
		}
		a := &coll.Args{Op: k.op, DType: dtype.FP32, RedOp: dtype.Sum, Count: k.count}
		if k.avg {
			a.RedOp = dtype.Avg
		}
		in, out := 4*k.count, 4*k.count
		switch k.op {
		case coll.AllGather:
			out *= n
		case coll.ReduceScatter:
			in *= n
		}
		a.Send, a.Recv = mem[:in], mem[most:most+out]
		if inPlace {
			a.Recv = mem[:max(in, out)]
			a.Send = a.Recv[:in]
			if k.op == coll.AllGather {
				a.Send = a.Recv[tr.Rank()*in : (tr.Rank()+1)*in]
			}
		}
		if _, err := c.Run(ctx, k.algo, a); err != nil {
			return fmt.Errorf("call %d: %w", i, err)
		}
	}
	return nil
}
