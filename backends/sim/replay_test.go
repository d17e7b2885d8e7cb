package sim_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/hccl-test/hccl-test/backends/sim"
	"github.com/hccl-test/hccl-test/coll"
)

// TestReplayMatchesFullSimulation: a world whose calls without payload
// are replayed for all ranks at once (RunWorld) ends with every rank's
// clock and waited time bit for bit where the same calls, run message by
// message on every rank, leave them: halving and doubling with uneven
// parts, worlds that are not a power of two (folded), one level or two,
// ranks whose clocks disagree, in place or not, back to back with calls
// the symmetric evaluation takes and calls nothing replays; and the
// replay ran exactly where it applies (not on links where receivers move
// the data, nor for algorithms not replayed).
func TestReplayMatchesFullSimulation(t *testing.T) {
	rhdUneven := func(n int) symCall { return symCall{coll.AllReduce, "rhd", 37*n + 3, false, 0} }
	rhdSmall := func(n int) symCall { return symCall{coll.AllReduce, "rhd", n/2 + 1, true, 0} } // some parts empty, Avg
	rhdEven := func(n int) symCall { return symCall{coll.AllReduce, "rhd", 37 * n, false, 0} }
	rd := symCall{coll.AllReduce, "rd", 1000, false, 0}
	rs := symCall{coll.ReduceScatter, "rhd", 333, false, 0}
	ag := symCall{coll.AllGather, "rd", 777, false, 0}
	bruck := symCall{coll.AllGather, "bruck", 555, false, 0}
	bcast := symCall{coll.Broadcast, "tree", 4099, false, 0}
	reduce := symCall{coll.Reduce, "tree", 2049, false, 0}
	ring := symCall{coll.AllReduce, "ring", 4096, false, 0}
	pull := sim.DefaultLinkModel
	pull.Pull = true
	cases := []struct {
		name  string
		n     int
		links sim.LinkModel
		calls func(n int) []symCall
		// hold is held by rank 1 before the calls: the ranks' clocks
		// disagree.
		hold    time.Duration
		inPlace bool
		// replayed is how many calls RunWorld should replay.
		replayed int
	}{
		{"uneven rhd x3, 16 ranks", 16, oddLinks, func(n int) []symCall { return []symCall{rhdUneven(n), rhdUneven(n), rhdUneven(n)} }, 0, false, 3},
		{"uneven rhd, empty parts, avg, 64 ranks, 8 per server", 64, onServers(oddLinks, 8), func(n int) []symCall {
			return []symCall{rhdSmall(n), rhdUneven(n), rhdSmall(n)}
		}, 0, false, 3},
		{"12 ranks folded, 4 per server", 12, onServers(oddLinks, 4), func(n int) []symCall {
			return []symCall{rhdEven(n), rd, rs, ag, bruck, bcast, reduce}
		}, 0, false, 7},
		{"ranks apart, 32 ranks, 8 per server", 32, onServers(oddLinks, 8), func(n int) []symCall {
			return []symCall{rhdEven(n), rd, rhdUneven(n)}
		}, 5 * time.Microsecond, false, 3},
		{"symmetric then replayed then neither, 16 ranks", 16, onServers(sim.DefaultLinkModel, 4), func(n int) []symCall {
			return []symCall{rd, rhdUneven(n), ring, rhdEven(n), bruck}
		}, 0, false, 3}, // the ring leaves the ranks apart: the even rhd too
		{"in place, 24 ranks, servers of 6", 24, onServers(oddLinks, 6), func(n int) []symCall {
			return []symCall{rhdUneven(n), rs, ag, bcast}
		}, 0, true, 3}, // not the allgather in place
		{"receivers move the data, 16 ranks", 16, pull, func(n int) []symCall { return []symCall{rhdUneven(n), rs} }, 0, false, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := matchesFull(t, "replayed", tc.n, tc.links, tc.calls(tc.n), tc.hold, tc.inPlace, sim.ReplayRuns)
			if got != int64(tc.replayed) {
				t.Errorf("%d calls replayed, want %d", got, tc.replayed)
			}
		})
	}
}

// TestCancelEndsReplayedWorld: a world whose ranks call replayed calls
// back to back ends soon after its context does: within a few times what
// a world of three such calls takes from start to end, measured here
// first, not at the end of its 20000 calls.
func TestCancelEndsReplayedWorld(t *testing.T) {
	const n = 512
	call := symCall{coll.AllReduce, "rhd", 37*n + 3, false, 0}
	world := func(ctx context.Context, list []symCall) (time.Duration, error) {
		w, err := sim.NewWorld(n, sim.DefaultLinkModel)
		if err != nil {
			t.Fatal(err)
		}
		errs := make(chan error, n)
		start := time.Now()
		for r := range n {
			go func() { errs <- runCalls(ctx, w.Endpoint(r), list, false) }()
		}
		var first error
		for range n {
			if err := <-errs; err != nil && first == nil {
				first = err
			}
		}
		return time.Since(start), first
	}
	base, err := world(context.Background(), []symCall{call, call, call})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var ended time.Duration
	done := make(chan error, 1)
	many := slices.Repeat([]symCall{call}, 20000)
	go func() {
		_, err := world(ctx, many)
		done <- err
	}()
	time.Sleep(2 * base) // some calls in
	cancelled := time.Now()
	cancel()
	select {
	case err = <-done:
		ended = time.Since(cancelled)
	case <-time.After(time.Minute + 20*base):
		t.Fatalf("world still running %v after its context ended (three calls took %v)", time.Minute+20*base, base)
	}
	if err == nil {
		t.Fatal("20000 calls ended without an error")
	}
	if bound := 5 * base; ended > bound {
		t.Errorf("world ended %v after its context did, want within %v (5 x the %v three calls took)", ended, bound, base)
	}
	t.Logf("three calls: %v; ended %v after the context", base, ended)
}
