package bench

import (
	"context"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/hccl-test/hccl-test/backends"
	"github.com/hccl-test/hccl-test/backends/inject"
	"github.com/hccl-test/hccl-test/backends/shm"
	"github.com/hccl-test/hccl-test/backends/sim"
	"github.com/hccl-test/hccl-test/coll"
	"github.com/hccl-test/hccl-test/dtype"
)

// simPlan is a sweep of ring allreduce on 4 simulated ranks of one server.
func simPlan(bytes int64) Plan {
	p := DefaultPlan()
	p.Backend, p.Ranks = simBackend, 4
	p.Ops, p.DTypes, p.RedOps = []coll.Op{coll.AllReduce}, []dtype.DType{dtype.FP32}, []dtype.ReduceOp{dtype.Sum}
	p.MinBytes, p.MaxBytes = bytes, bytes
	p.Iters, p.Warmup = 5, 1
	p.Algo = "ring"
	p.LinkGBps, p.LinkSource = 50, "given"
	p.SimAlpha, p.SimReduceGBps = 3*time.Microsecond, 20
	p.Timeout = 20 * time.Second
	return p
}

// TestSimRingAllReduce: on sim, a ring allreduce's row time is the ring
// formula 2(n-1)(alpha + (b/n)/bw) + (n-1)(b/n)/reduce: nothing contends
// in a ring, and local work takes no virtual time.
func TestSimRingAllReduce(t *testing.T) {
	tests := []struct {
		name  string
		bytes int64
	}{
		{"64 KiB", 64 << 10},
		{"4 MiB", 4 << 20},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := simPlan(tc.bytes)
			var c capture
			if _, err := Run(context.Background(), p, &c); err != nil {
				t.Fatal(err)
			}
			if len(c.records) != 1 {
				t.Fatalf("got %d records, want 1", len(c.records))
			}
			rec := c.records[0]
			n, part := 4.0, float64(tc.bytes)/4
			alpha := p.SimAlpha.Seconds()
			want := 2*(n-1)*(alpha+part/50e9) + (n-1)*part/20e9
			t.Logf("time %.4f us, formula %.4f us, min %.4f max %.4f", rec.TimeUS, want*1e6, rec.MinUS, rec.MaxUS)
			if got := rec.TimeUS * 1e-6; math.Abs(got-want) > 0.01*want {
				t.Errorf("time %.3f us, want %.3f us (the ring formula) within 1%%", got*1e6, want*1e6)
			}
			if rec.Wrong != 0 || rec.Algo != "ring" {
				t.Errorf("wrong %d, algo %q; want 0 and ring", rec.Wrong, rec.Algo)
			}
			if !strings.Contains(c.header.Simulated, "1 server x 4 ranks, links 50 GB/s + 3 us, reduce 20 GB/s; times are virtual") {
				t.Errorf("header: simulated %q", c.header.Simulated)
			}
		})
	}
}

// TestClockOf: the virtual clock is found through --inject's wrapper, and
// backends without one have none.
func TestClockOf(t *testing.T) {
	simW, err := sim.NewWorld(2, backends.LinkModel{})
	if err != nil {
		t.Fatal(err)
	}
	shmW := shm.NewWorld(2)
	spec, err := inject.Parse("corrupt=p:0.5")
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
		{"shm", shmW.Endpoint(0), false},
		{"shm with --inject", inject.Wrap(shmW.Endpoint(1), spec, 1), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, got := backends.ClockOf(tc.t); got != tc.want {
				t.Fatalf("ClockOf: %v, want %v", got, tc.want)
			}
		})
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
		{"alpha on shm", func(p *Plan) { p.Backend = "shm" }, "--sim-alpha: only --backend sim"},
		{"reduce on shm", func(p *Plan) { p.Backend, p.SimAlpha = "shm", 0 }, "--sim-reduce: only --backend sim"},
		{"negative alpha", func(p *Plan) { p.SimAlpha = -1 }, "must not be negative"},
		{"inter alpha on one server", func(p *Plan) { p.SimInterAlpha = time.Microsecond }, "needs --topology"},
		{"inter alpha on two servers", func(p *Plan) {
			p.SimInterAlpha, p.Topology = time.Microsecond, Topology{Servers: 2, PerServer: 2}
		}, ""},
		{"overlap", func(p *Plan) { p.OverlapAuto = true }, "--overlap: its compute takes wall time"},
		{"delay", func(p *Plan) {
			p.InjectText = "delay=1ms"
			p.Inject, _ = inject.Parse(p.InjectText)
		}, `--inject "delay=1ms": delay, bw and slow hold messages in wall time`},
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
	p.LinkGBps, p.LinkInterGBps, p.SimInterAlpha = 56, 25, 10*time.Microsecond
	want := backends.LinkModel{PerServer: 4, IntraAlpha: 3 * time.Microsecond, InterAlpha: 10 * time.Microsecond,
		IntraGBps: 56, InterGBps: 25, ReduceGBps: 20}
	if got := p.simLinks(); got == nil || *got != want {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	if got, want := p.simDescription(), "2 servers x 4 ranks, intra 56 GB/s + 3 us, inter 25 GB/s + 10 us, reduce 20 GB/s; times are virtual"; got != want {
		t.Errorf("description %q, want %q", got, want)
	}
	p.Backend = "shm"
	if p.simLinks() != nil || p.simDescription() != "" {
		t.Error("a plan on shm has simulated links")
	}
}
