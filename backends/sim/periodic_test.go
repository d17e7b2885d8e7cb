package sim_test

import (
	"testing"
	"time"

	"github.com/hccl-test/hccl-test/backends/sim"
	"github.com/hccl-test/hccl-test/coll"
)

// TestPeriodicReplayMatchesFullSimulation: a world whose multiring calls
// are replayed for one server's ranks (the world's period) ends with
// every rank's clock and waited time bit for bit where the same calls,
// run message by message on every rank, leave them: 4 and 8 servers of
// 4 ranks, 6 servers of 3 (a world that is not a power of two), Avg,
// reducescatter and allgather, a Comm whose channels follow servers of
// half the links' (still periodic); and the period was taken exactly
// where it applies: not where parts are uneven (each server's ranks move
// other lengths), where a rank starts apart from the others, where the
// channels follow servers larger than the links' (not periodic, found
// when the programs are compared), nor for halving and doubling.
func TestPeriodicReplayMatchesFullSimulation(t *testing.T) {
	mr := func(op coll.Op, count, p int) symCall { return symCall{op, "multiring", count, false, p} }
	avg := func(c symCall) symCall { c.avg = true; return c }
	cases := []struct {
		name  string
		n     int
		links sim.LinkModel
		calls []symCall
		hold  time.Duration
		// replayed and periodic are how many calls RunWorld should
		// replay, and of them for one period.
		replayed, periodic int
		// budget, where set, bounds the requests a replay records.
		budget int
	}{
		{"4 servers of 4", 16, onServers(oddLinks, 4), []symCall{
			mr(coll.AllReduce, 64*37, 4), mr(coll.ReduceScatter, 4*77, 4), mr(coll.AllGather, 4*111, 4), mr(coll.AllReduce, 64*37, 4),
		}, 0, 4, 4, 0},
		{"8 servers of 4, even then uneven", 32, onServers(oddLinks, 4), []symCall{
			mr(coll.AllReduce, 128*29, 4), mr(coll.AllReduce, 128*29+3, 4),
		}, 0, 2, 1, 0},
		{"6 servers of 3, avg", 18, onServers(oddLinks, 3), []symCall{
			avg(mr(coll.AllReduce, 54*41, 3)), mr(coll.ReduceScatter, 3*50, 3), mr(coll.AllGather, 3*7, 3),
		}, 0, 3, 3, 0},
		{"ranks apart, 4 servers of 4", 16, onServers(oddLinks, 4), []symCall{
			mr(coll.AllReduce, 64*37, 4), mr(coll.AllGather, 4*111, 4),
		}, 3 * time.Microsecond, 2, 0, 0},
		{"channels of 4 on servers of 8", 32, onServers(oddLinks, 8), []symCall{
			mr(coll.AllReduce, 128*29, 4), mr(coll.ReduceScatter, 4*77, 4),
		}, 0, 2, 2, 0},
		{"channels of 8 on servers of 4", 32, onServers(oddLinks, 4), []symCall{
			mr(coll.AllReduce, 256*29, 8),
		}, 0, 1, 0, 0},
		{"halving and doubling on servers of 8", 32, onServers(sim.DefaultLinkModel, 8), []symCall{
			{coll.AllReduce, "rhd", 37*32 + 3, false, 8}, mr(coll.AllReduce, 256*29, 8),
		}, 0, 2, 0, 0}, // the uneven rhd leaves the servers' ranks apart
		{"one server's records beyond the budget", 16, onServers(oddLinks, 4), []symCall{
			mr(coll.AllReduce, 64*37, 4), mr(coll.AllReduce, 64*37, 4),
		}, 0, 0, 0, 4*2*15*4*2 - 1}, // 4 ranks, 2 x 15 steps of 4 sends and 4 receives: one over
		{"one server's records within the budget", 16, onServers(oddLinks, 4), []symCall{
			mr(coll.AllReduce, 64*37, 4), mr(coll.AllReduce, 64*37, 4),
		}, 0, 2, 2, 4 * 2 * 15 * 4 * 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.budget > 0 {
				defer sim.SetReplayBudget(tc.budget)()
			}
			before := sim.PeriodicRuns()
			got := matchesFull(t, "periodic", tc.n, tc.links, tc.calls, tc.hold, false, sim.ReplayRuns)
			if got != int64(tc.replayed) {
				t.Errorf("%d calls replayed, want %d", got, tc.replayed)
			}
			// matchesFull's full run replays nothing: the periodic ones
			// are those of its first run.
			if p := sim.PeriodicRuns() - before; p != int64(tc.periodic) {
				t.Errorf("%d calls replayed for one period, want %d", p, tc.periodic)
			}
		})
	}
}
