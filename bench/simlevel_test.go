package bench

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/hccl-test/hccl-test/coll"
)

// TestSimTwoLevelCosts: on 2 simulated servers of 4 ranks, with a link
// between servers five times slower than inside one, the model's time for
// each algorithm with a step-aware two-level cost (model_us, what auto
// compares) is close to the simulated row; where transfers dominate
// (4 MiB), closer than the flat bound (every message on the slower link)
// would be.
func TestSimTwoLevelCosts(t *testing.T) {
	const (
		intraGBps, interGBps = 50, 10
		intraAlpha           = 3 * time.Microsecond
		interAlpha           = 10 * time.Microsecond
		// The model is within tol of the simulated time, give or take
		// one latency inside a server: how far apart the ranks leave
		// the barrier before the row.
		tol   = 0.1
		slack = 3.0 // us
	)
	tests := []struct {
		op   coll.Op
		algo string
		// direct is how many steps post a message to every other rank
		// at once: the model charges such a step (n-2)/2 latencies
		// inside a server for handling its messages (9 us here), which
		// the sim's ports do not.
		direct float64
	}{
		{coll.AllReduce, "ring", 0},
		{coll.AllGather, "ring", 0},
		{coll.ReduceScatter, "ring", 0},
		{coll.AllReduce, "rd", 0},
		{coll.AllReduce, "rhd", 0},
		{coll.AllReduce, "oneshot", 1},
		{coll.AllReduce, "twoshot", 2},
		{coll.AllGather, "rd", 0},
		{coll.ReduceScatter, "rhd", 0},
		{coll.ReduceScatter, "direct", 1},
		{coll.AllToAll, "direct", 1},
	}
	for _, tc := range tests {
		for _, bytes := range []int64{64 << 10, 4 << 20} {
			t.Run(fmt.Sprintf("%v/%s/%d", tc.op, tc.algo, bytes), func(t *testing.T) {
				p := simPlan(bytes)
				p.Ranks, p.Topology = 8, Topology{Servers: 2, PerServer: 4}
				p.LinkGBps, p.LinkInterGBps = intraGBps, interGBps
				p.SimAlpha, p.SimInterAlpha = intraAlpha, interAlpha
				p.Ops, p.Algo, p.Stats = []coll.Op{tc.op}, tc.algo, true
				_, rec := runOneRow(t, p)
				if rec.Wrong != 0 || rec.Algo != tc.algo {
					t.Fatalf("wrong %d, algo %q; want 0 and %s", rec.Wrong, rec.Algo, tc.algo)
				}
				// The flat bound: one level, every link the slower one.
				flat := coll.Model{Alpha: interAlpha.Seconds(), Beta: 1 / (interGBps * 1e9),
					Gamma: 1 / (p.SimReduceGBps * 1e9), Copy: 1 / (p.SimCopyGBps * 1e9)}
				b := int(bytes)
				if tc.op != coll.AllReduce {
					b /= p.Ranks
				}
				flatUS := 1e6 * coll.Predict(tc.op, tc.algo, p.Ranks, b, flat)
				t.Logf("sim %.1f us, model %.1f us, flat bound %.1f us", rec.TimeUS, rec.ModelUS, flatUS)
				handling := tc.direct * 3 * slack // us: (8-2)/2 latencies of 3 us
				if d := rec.ModelUS - rec.TimeUS; d > tol*rec.TimeUS+slack+handling || -d > tol*rec.TimeUS+slack {
					t.Errorf("model %.1f us, sim %.1f us: want them within %.0f%% and %v us (plus %v us of handling above)",
						rec.ModelUS, rec.TimeUS, 100*tol, slack, handling)
				}
				if bytes >= 4<<20 && !(math.Abs(rec.ModelUS-rec.TimeUS) < math.Abs(flatUS-rec.TimeUS)) {
					t.Errorf("model %.1f us is no closer to sim %.1f us than the flat bound %.1f us", rec.ModelUS, rec.TimeUS, flatUS)
				}
			})
		}
	}
}
