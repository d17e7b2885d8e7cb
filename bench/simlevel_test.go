package bench

import (
	"context"
	"fmt"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/hccl-test/hccl-test/backends"
	"github.com/hccl-test/hccl-test/backends/sim"
	"github.com/hccl-test/hccl-test/coll"
	"github.com/hccl-test/hccl-test/dtype"
	"github.com/hccl-test/hccl-test/traffic"
	"github.com/hccl-test/hccl-test/world"
)

// TestSimTwoLevelCosts: on 2 simulated servers of 4 ranks, with a link
// between servers five times slower than inside one, the model's time for
// each algorithm with a step-aware two-level cost (model_us, what auto
// compares) is close to the simulated row; where transfers dominate
// (4 MiB), closer than the flat bound (every message on the slower link)
// would be. A rooted collective is timed as one call instead (oneCallUS),
// from root 0; another is compared with its row's mean or its slowest
// iteration, one call from idle links, whichever is nearer.
func TestSimTwoLevelCosts(t *testing.T) {
	const (
		intraGBps, interGBps = 50, 10
		intraAlpha           = 3 * time.Microsecond
		interAlpha           = 10 * time.Microsecond
		// The model is within tol of the simulated time, give or take
		// one latency inside a server.
		tol   = 0.1
		slack = 3.0 // us
	)
	tests := []struct {
		op   coll.Op
		algo string
	}{
		{coll.AllReduce, "ring"},
		{coll.AllGather, "ring"},
		{coll.ReduceScatter, "ring"},
		{coll.AllReduce, "rd"},
		{coll.AllReduce, "rhd"},
		{coll.AllReduce, "oneshot"},
		{coll.AllReduce, "twoshot"},
		{coll.AllGather, "rd"},
		{coll.ReduceScatter, "rhd"},
		{coll.ReduceScatter, "direct"},
		{coll.AllToAll, "direct"},
		{coll.AllGather, "bruck"},
		{coll.AllToAll, "bruck"},
		{coll.AllToAll, "pairwise"},
		{coll.Broadcast, "tree"},
		{coll.Reduce, "tree"},
		{coll.Gather, "tree"},
		{coll.Scatter, "tree"},
		{coll.Broadcast, "ring"},
		{coll.Reduce, "ring"},
		{coll.Gather, "ring"},
		{coll.Scatter, "ring"},
		{coll.AllReduce, "dbtree"},
		{coll.Broadcast, "dbtree"},
		{coll.Reduce, "dbtree"},
		// Even counts (spread 0), which is what the model prices.
		{coll.AllToAllV, "direct"},
		{coll.AllToAllV, "pairwise"},
		{coll.AllToAllV, "hier"},
	}
	for _, tc := range tests {
		for _, bytes := range []int64{64 << 10, 4 << 20} {
			t.Run(fmt.Sprintf("%v/%s/%d", tc.op, tc.algo, bytes), func(t *testing.T) {
				p := simPlan(bytes)
				p.Ranks, p.Topology = 8, Topology{Servers: 2, PerServer: 4}
				p.LinkGBps, p.LinkInterGBps = intraGBps, interGBps
				withSim(&p, func(o *sim.Own) { o.Alpha, o.InterAlpha = intraAlpha, interAlpha })
				p.Ops, p.Algo, p.Stats = []coll.Op{tc.op}, tc.algo, true
				if tc.op.Desc().Variable() {
					p.Traffic = traffic.DefaultSpec(traffic.Spread)
					p.Traffic.Spread, p.Traffic.Tokens = 0, 0
				}
				_, rec := runOneRow(t, p)
				if rec.Wrong != 0 || rec.Algo != tc.algo {
					t.Fatalf("wrong %d, algo %q; want 0 and %s", rec.Wrong, rec.Algo, tc.algo)
				}
				b := int(bytes) / tc.op.Blocks(p.Ranks)
				simUS := rec.TimeUS
				if tc.op.Rooted() {
					simUS = oneCallUS(t, p, tc.op, tc.algo, b)
				} else if math.Abs(rec.ModelUS-rec.MaxUS) < math.Abs(rec.ModelUS-simUS) {
					// The model prices one call. A row's calls run back
					// to back and may pipeline, each starting as its
					// ranks finish the one before, but its first starts
					// with every rank at one instant on idle links, as a
					// lone call does, and is the slowest: the model may
					// be near either.
					simUS = rec.MaxUS
				}
				// The flat bound: one level, every link the slower one.
				flat := coll.Model{Alpha: interAlpha.Seconds(), Beta: 1 / (interGBps * 1e9),
					Gamma: 1 / (simOwn(p).ReduceGBps * 1e9), Copy: 1 / (simOwn(p).CopyGBps * 1e9)}
				flatUS := 1e6 * coll.Predict(tc.op, tc.algo, p.Ranks, b, flat)
				t.Logf("sim %.1f us (mean %.1f, max %.1f), model %.1f us, flat bound %.1f us", simUS, rec.TimeUS, rec.MaxUS, rec.ModelUS, flatUS)
				if d := rec.ModelUS - simUS; math.Abs(d) > tol*simUS+slack {
					t.Errorf("model %.1f us, sim %.1f us: want them within %.0f%% and %v us", rec.ModelUS, simUS, 100*tol, slack)
				}
				// hier has no cost on one level, so no flat bound.
				if bytes >= 4<<20 && !math.IsNaN(flatUS) && !(math.Abs(rec.ModelUS-simUS) < math.Abs(flatUS-simUS)) {
					t.Errorf("model %.1f us is no closer to sim %.1f us than the flat bound %.1f us", rec.ModelUS, simUS, flatUS)
				}
			})
		}
	}
}

// oneCallUS runs one call of a rooted collective op with algo, root 0 and
// blocks of b bytes (Args.Bytes()), on a fresh world simulated on p's
// links, every rank's clock from 0, and returns the latest clock in us:
// the time of one call, which is what the cost model predicts. A row does
// not time that for a rooted collective. It times calls back to back, and
// the root of a broadcast or scatter (the leaves of a reduce or gather)
// waits for no one, so consecutive calls overlap and the row's mean tends
// to the pipeline's period; a row of one call would count in full how far
// apart the barrier before it leaves the ranks (more than a latency
// between servers here).
func oneCallUS(t *testing.T, p Plan, op coll.Op, algo string, b int) float64 {
	t.Helper()
	w, err := sim.NewWorld(p.Ranks, simLinks(p))
	if err != nil {
		t.Fatal(err)
	}
	sendBlocks, recvBlocks := 1, 1
	switch op {
	case coll.Gather:
		recvBlocks = p.Ranks
	case coll.Scatter:
		sendBlocks = p.Ranks
	}
	// A simulated call's wall time is the host's, not the model's: bound
	// the wait by the test binary's own deadline (go test -timeout), not
	// by p.Timeout, which a loaded host overran (a 4 MiB broadcast on 8
	// ranks under -race waited past 20 s with every rank making progress).
	ctx := t.Context()
	if end, ok := t.Deadline(); ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, end)
		defer cancel()
	}
	var wg sync.WaitGroup
	errs := make([]error, p.Ranks)
	ends := make([]time.Duration, p.Ranks)
	for r := range p.Ranks {
		wg.Go(func() {
			ep := w.Endpoint(r)
			a := &coll.Args{Op: op, DType: dtype.FP32, RedOp: dtype.Sum, Count: b / 4,
				Send: make([]byte, sendBlocks*b), Recv: make([]byte, recvBlocks*b)}
			_, errs[r] = coll.NewComm(ep).Run(ctx, algo, a)
			ends[r] = ep.(backends.Clock).Now()
		})
	}
	wg.Wait()
	var last time.Duration
	for r := range p.Ranks {
		if errs[r] != nil {
			t.Fatalf("rank %d: %v", r, errs[r])
		}
		last = max(last, ends[r])
	}
	return float64(last) / 1e3
}

// TestSimDomainModel: on 2 simulated servers of 4, a dp group (one rank on
// each server) moves everything over the link between servers, a tp group
// (a whole server) over the link inside one. A group's Comm has no
// topology, so auto costs dp on the slower link and tp on the faster:
// model_us is near the simulated row for both. (Costed on the world's
// faster link, dp's model would be several times too fast.)
func TestSimDomainModel(t *testing.T) {
	p := simPlan(4 << 20)
	p.Ranks, p.Topology = 8, Topology{Servers: 2, PerServer: 4}
	p.LinkGBps, p.LinkInterGBps = 50, 10
	withSim(&p, func(o *sim.Own) { o.InterAlpha = 10 * time.Microsecond })
	p.Algo, p.Stats = coll.Auto, true
	var err error
	if p.Layout, err = world.ParseLayout("tp=4,dp=2", p.Ranks); err != nil {
		t.Fatal(err)
	}
	p.Groups = []string{"tp", "dp"}
	var c capture
	if _, err := Run(context.Background(), p, &c); err != nil {
		t.Fatal(err)
	}
	if len(c.records) != 2 {
		t.Fatalf("got %d records, want 2 (tp and dp)", len(c.records))
	}
	for _, rec := range c.records {
		t.Logf("%s: %s, sim %.1f us, model %.1f us", rec.Group, rec.Algo, rec.TimeUS, rec.ModelUS)
		if math.Abs(rec.ModelUS-rec.TimeUS) > 0.1*rec.TimeUS {
			t.Errorf("%s: model %.1f us, sim %.1f us: more than 10%% apart", rec.Group, rec.ModelUS, rec.TimeUS)
		}
	}
}

// TestSimDBTreeCost: the double binary tree's cost follows every rank
// through its steps (coll's dbtree_cost.go), so on sim it is near the
// simulated row at any size, on one level and on two, whole powers of two
// or not. (A sum of full steps put a 1 KiB allreduce on 8 ranks at four
// times the simulated row.)
func TestSimDBTreeCost(t *testing.T) {
	const tol, slack = 0.1, 3.0 // as TestSimTwoLevelCosts
	tests := []struct {
		ranks int
		topo  Topology
	}{
		{8, Topology{}},
		{7, Topology{}},
		{12, Topology{Servers: 3, PerServer: 4}},
	}
	for _, tc := range tests {
		for _, bytes := range []int64{1 << 10, 4 << 20} {
			t.Run(fmt.Sprintf("%d/%dx%d/%d", tc.ranks, tc.topo.Servers, tc.topo.PerServer, bytes), func(t *testing.T) {
				p := simPlan(bytes)
				p.Ranks, p.Topology = tc.ranks, tc.topo
				if tc.topo.Servers > 0 {
					p.LinkInterGBps = 10
					withSim(&p, func(o *sim.Own) { o.InterAlpha = 10 * time.Microsecond })
				}
				p.Algo, p.Stats = "dbtree", true
				_, rec := runOneRow(t, p)
				if rec.Wrong != 0 {
					t.Fatalf("%d wrong elements", rec.Wrong)
				}
				t.Logf("sim %.1f us, model %.1f us", rec.TimeUS, rec.ModelUS)
				if d := rec.ModelUS - rec.TimeUS; math.Abs(d) > tol*rec.TimeUS+slack {
					t.Errorf("model %.1f us, sim %.1f us: want them within %.0f%% and %v us", rec.ModelUS, rec.TimeUS, 100*tol, slack)
				}
			})
		}
	}
}
