package bench

import (
	"context"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/hccl-test/hccl-test/backends"
	"github.com/hccl-test/hccl-test/backends/group"
	"github.com/hccl-test/hccl-test/backends/inject"
	"github.com/hccl-test/hccl-test/backends/shm"
	"github.com/hccl-test/hccl-test/backends/sim"
	"github.com/hccl-test/hccl-test/coll"
	"github.com/hccl-test/hccl-test/dtype"
	"github.com/hccl-test/hccl-test/estimate"
	"github.com/hccl-test/hccl-test/results"
)

// simPlan is a sweep of ring allreduce on 4 simulated ranks of one server.
func simPlan(bytes int64) Plan {
	p := DefaultPlan()
	p.Backend, p.Ranks = sim.Name, 4
	p.Ops, p.DTypes, p.RedOps = []coll.Op{coll.AllReduce}, []dtype.DType{dtype.FP32}, []dtype.ReduceOp{dtype.Sum}
	p.MinBytes, p.MaxBytes = bytes, bytes
	p.Iters, p.Warmup = 5, 1
	p.Algo = "ring"
	p.LinkGBps, p.LinkSource = 50, "given"
	p.Own = sim.Own{Alpha: 3 * time.Microsecond, ReduceGBps: 20, CopyGBps: 30}
	p.Timeout = 20 * time.Second
	return p
}

// simOwn returns p's own options of the sim backend (World.Own; the zero
// sim.Own for none).
func simOwn(p Plan) sim.Own {
	o, _ := p.Own.(sim.Own)
	return o
}

// withSim sets p's own options of the sim backend to what edit makes of
// them.
func withSim(p *Plan, edit func(o *sim.Own)) {
	o := simOwn(*p)
	edit(&o)
	p.Own = o
}

// simLinks returns the link model the sim backend makes of p's settings.
func simLinks(p Plan) sim.LinkModel {
	return sim.Backend{}.Options(p.settings()).(sim.Options).Links
}

// TestSimFormulas: on sim, a row's time is its algorithm's alpha-beta
// formula on the simulated links, 4 ranks of one server with latency
// alpha = 3 us, links at bw = 50 GB/s, reductions at 20 GB/s and copies at
// 30 GB/s. S is the row's size; rows are out of place.
func TestSimFormulas(t *testing.T) {
	const alpha, bw, red, cp = 3e-6, 50e9, 20e9, 30e9
	tests := []struct {
		name  string
		op    coll.Op
		algo  string
		bytes int64
		want  func(n, s float64) float64 // seconds
	}{
		// Nothing contends in a ring, and no block is copied.
		{"ring allreduce 64 KiB", coll.AllReduce, "ring", 64 << 10, func(n, s float64) float64 {
			return 2*(n-1)*(alpha+s/n/bw) + (n-1)*s/n/red
		}},
		{"ring allreduce 4 MiB", coll.AllReduce, "ring", 4 << 20, func(n, s float64) float64 {
			return 2*(n-1)*(alpha+s/n/bw) + (n-1)*s/n/red
		}},
		// Halving then doubling: log2 n steps each way, the same bytes.
		{"rhd allreduce 4 MiB", coll.AllReduce, "rhd", 4 << 20, func(n, s float64) float64 {
			return 2*math.Log2(n)*alpha + 2*(n-1)/n*s/bw + (n-1)/n*s/red
		}},
		// Bruck: ceil(log2 n) exchanges of 1, 2, ... blocks (n-1 in all),
		// its own block copied in and all n rotated out.
		{"bruck allgather 4 MiB", coll.AllGather, "bruck", 4 << 20, func(n, s float64) float64 {
			return math.Log2(n)*alpha + (n-1)*s/n/bw + (n+1)*s/n/cp
		}},
		// Ring allgather: its own block copied into place, then n-1 steps.
		{"ring allgather 4 MiB", coll.AllGather, "ring", 4 << 20, func(n, s float64) float64 {
			return s/n/cp + (n-1)*(alpha+s/n/bw)
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := simPlan(tc.bytes)
			p.Ops, p.Algo = []coll.Op{tc.op}, tc.algo
			c, rec := runOneRow(t, p)
			want := tc.want(float64(p.Ranks), float64(tc.bytes))
			t.Logf("time %.4f us, formula %.4f us, min %.4f max %.4f", rec.TimeUS, want*1e6, rec.MinUS, rec.MaxUS)
			if got := rec.TimeUS * 1e-6; math.Abs(got-want) > 0.01*want {
				t.Errorf("time %.3f us, want %.3f us (the formula) within 1%%", got*1e6, want*1e6)
			}
			if rec.Wrong != 0 || rec.Algo != tc.algo {
				t.Errorf("wrong %d, algo %q; want 0 and %s", rec.Wrong, rec.Algo, tc.algo)
			}
			if !strings.Contains(c.header.Simulated, "1 server x 4 ranks, links 50 GB/s + 3 us, gap 1.5 us, reduce 20 GB/s, copy 30 GB/s; times are virtual") {
				t.Errorf("header: simulated %q", c.header.Simulated)
			}
		})
	}
}

// runOneRow runs p, a sweep of one row, and returns what it wrote and the
// row.
func runOneRow(t *testing.T, p Plan) (*capture, results.Record) {
	t.Helper()
	var c capture
	if _, err := Run(context.Background(), p, &c); err != nil {
		t.Fatal(err)
	}
	if len(c.records) != 1 {
		t.Fatalf("got %d records, want 1", len(c.records))
	}
	return &c, c.records[0]
}

// TestSimChargesLocalCopies: on sim, a ring allgather out of place first
// copies its own block into place, which in place it need not; the rows
// differ by that copy's time at the copy rate, give or take one message's
// latency (how far apart the ranks leave the barrier before the row,
// which the copy partly hides).
func TestSimChargesLocalCopies(t *testing.T) {
	const bytes = 4 << 20
	p := simPlan(bytes)
	p.Ops = []coll.Op{coll.AllGather}
	withSim(&p, func(o *sim.Own) { o.CopyGBps = 8 })
	p.Placements = []Placement{OutOfPlace, InPlace}
	var c capture
	if _, err := Run(context.Background(), p, &c); err != nil {
		t.Fatal(err)
	}
	if len(c.records) != 2 {
		t.Fatalf("got %d records, want 2", len(c.records))
	}
	out, in := c.records[0], c.records[1]
	if out.InPlace || !in.InPlace {
		t.Fatalf("in place: %v, %v; want false, true", out.InPlace, in.InPlace)
	}
	block := float64(bytes) / 4
	want := block / 8e9 * 1e6 // us
	if got := out.TimeUS - in.TimeUS; math.Abs(got-want) > simOwn(p).Alpha.Seconds()*1e6 {
		t.Errorf("out of place %.3f us, in place %.3f us: differ by %.3f us, want %.3f us (a %g-byte copy at 8 GB/s)",
			out.TimeUS, in.TimeUS, got, want, block)
	}
}

// TestClockOf: the virtual clock, and what charges a rank's own work, are
// found through --inject's wrapper and a group's renumbering, and
// backends without them have neither.
func TestClockOf(t *testing.T) {
	simW, err := sim.NewWorld(2, sim.LinkModel{})
	if err != nil {
		t.Fatal(err)
	}
	shmW := shm.NewWorld(2)
	spec, err := inject.Parse("corrupt=p:0.5")
	if err != nil {
		t.Fatal(err)
	}
	member, err := group.New(simW.Endpoint(0), []int{0})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		t    backends.Transport
		want bool
	}{
		{"sim", simW.Endpoint(0), true},
		{"sim with --inject", inject.Wrap(simW.Endpoint(1), spec, 1), true},
		{"sim in a group", member, true},
		{"shm", shmW.Endpoint(0), false},
		{"shm with --inject", inject.Wrap(shmW.Endpoint(1), spec, 1), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, got := backends.ClockOf(tc.t); got != tc.want {
				t.Fatalf("ClockOf: %v, want %v", got, tc.want)
			}
			if _, got := backends.LocalWorkerOf(tc.t); got != tc.want {
				t.Fatalf("LocalWorkerOf: %v, want %v", got, tc.want)
			}
		})
	}
}

// TestWallClockRow: on a backend without a virtual clock a row is timed
// by the wall clock (read as the CPU's counter where it can be): a 2-rank
// allreduce whose every message --inject holds for 5 ms takes at least
// that an iteration, and not twice that.
func TestWallClockRow(t *testing.T) {
	const hold = 5 * time.Millisecond
	p := DefaultPlan()
	p.Backend, p.Ranks = shm.Name, 2
	p.Ops, p.DTypes, p.RedOps = []coll.Op{coll.AllReduce}, []dtype.DType{dtype.FP32}, []dtype.ReduceOp{dtype.Sum}
	p.MinBytes, p.MaxBytes = 64, 64
	p.Iters, p.Warmup = 10, 1
	p.Algo = "oneshot" // one message each way an iteration
	p.LinkGBps, p.LinkSource = 1, "given"
	p.Timeout = 20 * time.Second
	spec, err := inject.Parse("delay=5ms")
	if err != nil {
		t.Fatal(err)
	}
	p.Inject = spec
	start := time.Now()
	_, rec := runOneRow(t, p)
	elapsed := time.Since(start)
	got := time.Duration(rec.TimeUS * float64(time.Microsecond))
	min := time.Duration(rec.MinUS * float64(time.Microsecond))
	// Below the hold: a clock read short. Above: no bound of the wall
	// clock's (a loaded host's scheduling stretches iterations: 18 ms
	// against a 10 ms bound once), but the timed iterations cannot have
	// taken longer than the whole row took to run, as a clock that counted
	// ticks as nanoseconds (2.6 GHz counters here) would say.
	if min < hold || got*time.Duration(p.Iters) > elapsed {
		t.Errorf("iterations took %v (min %v) with every message held %v; %d of them in a row that took %v", got, min, hold, p.Iters, elapsed)
	}
}

// TestValidateSim: settings that only sim takes, and what sim cannot time.
func TestValidateSim(t *testing.T) {
	tests := []struct {
		name string
		edit func(p *Plan)
		err  string // "" for a valid plan
	}{
		{"sim", func(p *Plan) {}, ""},
		{"alpha on shm", func(p *Plan) { p.Backend = "shm" }, "Alpha: only Backend sim"},
		{"reduce on shm", func(p *Plan) { p.Backend, p.Own = "shm", sim.Own{ReduceGBps: 20, CopyGBps: 30} }, "ReduceGBps: only Backend sim"},
		{"copy on shm", func(p *Plan) { p.Backend, p.Own = "shm", sim.Own{CopyGBps: 5} }, "CopyGBps: only Backend sim"},
		{"negative copy", func(p *Plan) { withSim(p, func(o *sim.Own) { o.CopyGBps = -1 }) }, "CopyGBps -1: must be a positive bandwidth"},
		{"gap on shm", func(p *Plan) { p.Backend, p.Own = "shm", sim.Own{Gap: 1} }, "Gap: only Backend sim"},
		{"negative gap", func(p *Plan) { withSim(p, func(o *sim.Own) { o.Gap = -1 }) }, "Gap -1ns: must not be negative"},
		{"pull on shm", func(p *Plan) { p.Backend, p.Own = "shm", sim.Own{Pull: true} }, "Pull: only Backend sim"},
		{"no payload on shm", func(p *Plan) { p.Backend, p.Own = "shm", sim.Own{NoPayload: true} }, "NoPayload: only Backend sim"},
		{"pull", func(p *Plan) { withSim(p, func(o *sim.Own) { o.Pull = true }) }, ""},
		{"negative alpha", func(p *Plan) { withSim(p, func(o *sim.Own) { o.Alpha = -1 }) }, "must not be negative"},
		{"inter alpha on one server", func(p *Plan) { withSim(p, func(o *sim.Own) { o.InterAlpha = time.Microsecond }) }, "needs Topology"},
		{"inter alpha on two servers", func(p *Plan) {
			withSim(p, func(o *sim.Own) { o.InterAlpha = time.Microsecond })
			p.Topology = Topology{Servers: 2, PerServer: 2}
		}, ""},
		{"overlap", func(p *Plan) { p.OverlapAuto = true }, ""},
		{"delay", func(p *Plan) {
			p.InjectText = "delay=1ms"
			p.Inject, _ = inject.Parse(p.InjectText)
		}, ""},
		{"corrupt", func(p *Plan) {
			p.InjectText = "corrupt=op:3"
			p.Inject, _ = inject.Parse(p.InjectText)
		}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := simPlan(1024)
			tc.edit(&p)
			err := p.validateSim()
			switch {
			case tc.err == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
				t.Fatalf("got %v, want an error with %q", err, tc.err)
			}
		})
	}
}

// TestSimLinks: the plan's links, latencies and servers reach the model.
func TestSimLinks(t *testing.T) {
	p := simPlan(1024)
	p.Ranks, p.Topology = 8, Topology{Servers: 2, PerServer: 4}
	p.LinkGBps, p.LinkInterGBps = 56, 25
	withSim(&p, func(o *sim.Own) { o.InterAlpha, o.CopyGBps, o.Gap = 10*time.Microsecond, 40, 2*time.Microsecond })
	want := sim.LinkModel{PerServer: 4, IntraAlpha: 3 * time.Microsecond, InterAlpha: 10 * time.Microsecond,
		IntraGBps: 56, InterGBps: 25, ReduceGBps: 20, CopyGBps: 40, Gap: 2 * time.Microsecond}
	if got := simLinks(p); got != want {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	if p.modeled() == nil {
		t.Fatal("a plan on sim has no modeled links")
	}
	if got, want := p.simDescription(), "2 servers x 4 ranks, intra 56 GB/s + 3 us, inter 25 GB/s + 10 us, gap 2 us, reduce 20 GB/s, copy 40 GB/s; times are virtual"; got != want {
		t.Errorf("description %q, want %q", got, want)
	}
	if m := estimate.SimCalibration(p.modeled().LinkFigures(p.settings()), p.DTypes).Base; m.Fused {
		t.Error("ports that move the data: auto's model fuses receive and reduction")
	}
	withSim(&p, func(o *sim.Own) { o.Pull = true })
	if got := p.simDescription(); !strings.Contains(got, ", receivers pull;") {
		t.Errorf("description %q does not say that receivers pull", got)
	}
	if m := estimate.SimCalibration(p.modeled().LinkFigures(p.settings()), p.DTypes).Base; !m.Fused {
		t.Error("receivers that pull: auto's model does not fuse receive and reduction")
	}
	p.Backend = "shm"
	if p.modeled() != nil || p.simDescription() != "" {
		t.Error("a plan on shm has simulated links")
	}
}

// TestSimGap: a rank that posts a message to each of the others at once
// (oneshot allreduce, 4 ranks of one server) hands them to its port a gap
// apart, so a call ends about (n-2) gaps after its first message arrives;
// auto's model (model_us) charges a gap for each further message, so it
// moves by exactly (n-2) times the change, and stays near the sim. (The
// sim moves by a little more: calls run back to back, and a call's first
// message waits for the gaps of the one before.)
func TestSimGap(t *testing.T) {
	rows := map[time.Duration]results.Record{}
	for _, gap := range []time.Duration{time.Microsecond, 4 * time.Microsecond} {
		p := simPlan(1024)
		p.Algo, p.Stats, p.Iters = "oneshot", true, 20
		withSim(&p, func(o *sim.Own) { o.Gap = gap })
		_, rec := runOneRow(t, p)
		t.Logf("gap %v: sim %.3f us, model %.3f us", gap, rec.TimeUS, rec.ModelUS)
		if math.Abs(rec.ModelUS-rec.TimeUS) > 0.1*rec.TimeUS+0.5 {
			t.Errorf("gap %v: model %.3f us, sim %.3f us: more than 10%% and 0.5 us apart", gap, rec.ModelUS, rec.TimeUS)
		}
		rows[gap] = rec
	}
	small, large := rows[time.Microsecond], rows[4*time.Microsecond]
	const want = 2 * 3.0 // (n-2) gaps, 3 us longer each
	if got := large.TimeUS - small.TimeUS; got < want || got > want+1 {
		t.Errorf("sim: %.3f us apart, want %.1f to %.1f", got, want, want+1)
	}
	if got := large.ModelUS - small.ModelUS; math.Abs(got-want) > 1e-6 {
		t.Errorf("model: %.3f us apart, want %.1f", got, want)
	}
}
