package scenario_test

import (
	"bytes"
	"context"
	"math"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/hccl-test/hccl-test/backends"
	"github.com/hccl-test/hccl-test/backends/sim"
	"github.com/hccl-test/hccl-test/bench"
	"github.com/hccl-test/hccl-test/coll"
	"github.com/hccl-test/hccl-test/dtype"
	"github.com/hccl-test/hccl-test/results"
	"github.com/hccl-test/hccl-test/scenario"
	"github.com/hccl-test/hccl-test/world"

	_ "github.com/hccl-test/hccl-test/backends/shm" // registers shm for the package's tests
	_ "github.com/hccl-test/hccl-test/backends/sim" // registers sim for the package's tests
)

// simScenario has 4 ranks on 2 simulated servers of 2: tp groups {0,1} and
// {2,3} inside a server, dp groups {0,2} and {1,3} across them.
const simScenario = `{"name": "sim", "ranks": 4, "groups": "tp=2,dp=2", "iterations": 6, "warmup": 1,
  "steps": [
    {"name": "forward", "compute": "1ms"},
    {"name": "tp", "group": "tp", "op": "allreduce", "size": "1M"},
    {"name": "backward", "compute": "500us"},
    {"name": "dp", "group": "dp", "op": "allreduce", "size": "4M", "overlap": true}
  ]}`

// simScenarioLinks are simScenario's simulated links, as simPlan's inside
// a server, slower between them.
var simScenarioLinks = sim.LinkModel{PerServer: 2, IntraAlpha: 3 * time.Microsecond, InterAlpha: 10 * time.Microsecond,
	IntraGBps: 50, InterGBps: 10, ReduceGBps: 20, CopyGBps: 30}

// TestScenarioOnSim: a scenario on sim runs in virtual time. Its compute
// phases take exactly their durations; each domain's collective takes what
// the same collective takes in a sweep row on a simulated world of its
// group's 2 ranks on the same links (one server for tp, two for dp); the
// overlapped dp allreduce is exposed only for what outlasts its compute
// phase; and the step is the sum of the parts.
func TestScenarioOnSim(t *testing.T) {
	sc, err := scenario.Parse([]byte(simScenario), scenario.Overrides{})
	if err != nil {
		t.Fatal(err)
	}
	links := simScenarioLinks
	var out bytes.Buffer
	own := sim.Own{Alpha: links.IntraAlpha, InterAlpha: links.InterAlpha, ReduceGBps: links.ReduceGBps, CopyGBps: links.CopyGBps}
	wl := backends.WorldLinks{IntraGBps: links.IntraGBps, InterGBps: links.InterGBps, PerServer: links.PerServer}
	rep, err := scenario.Run(context.Background(), sc, scenario.Options{World: world.World{Backend: sim.Name, Timeout: 20 * time.Second, Own: own}, Links: wl}, &out)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("\n%s", out.String())
	if rep.Simulated == "" || rep.Wrong != 0 {
		t.Errorf("simulated %q, %d wrong", rep.Simulated, rep.Wrong)
	}
	if math.Abs(rep.ComputeMS-1.5) > 1e-6 {
		t.Errorf("compute %.6f ms, want 1.5 exactly", rep.ComputeMS)
	}

	// The same collectives as sweep rows on 2 simulated ranks.
	row := func(bytes int64, servers int) float64 {
		p := simPlan(bytes)
		p.Ranks, p.Algo, p.Iters = 2, coll.Auto, 20
		if servers > 1 {
			p.Topology = world.Topology{Servers: 2, PerServer: 1}
			p.LinkInterGBps = links.InterGBps
			o := p.Own.(sim.Own)
			o.InterAlpha = links.InterAlpha
			p.Own = o
		}
		rec := runOneRow(t, p)
		t.Logf("%d B on %d server(s): %s, %.2f us", bytes, servers, rec.Algo, rec.TimeUS)
		return rec.TimeUS / 1e3
	}
	tp, dp := row(1<<20, 1), row(4<<20, 2)
	dom := map[string]scenario.Domain{}
	for _, d := range rep.Domains {
		dom[d.Domain] = d
	}
	near := func(what string, got, want float64) {
		t.Helper()
		if math.Abs(got-want) > 0.02*want+0.005 {
			t.Errorf("%s %.4f ms, want %.4f ms", what, got, want)
		}
	}
	near("tp comm", dom["tp"].CommMS, tp)
	near("tp exposed", dom["tp"].ExposedMS, tp)
	near("dp comm", dom["dp"].CommMS, dp)
	near("dp exposed", dom["dp"].ExposedMS, max(dp-0.5, 0))
	near("step", rep.StepMS, 1.5+tp+max(dp-0.5, 0))
	if rep.Critical == "" || dom["tp"].ChangePct <= 0 || dom["dp"].ChangePct <= 0 {
		t.Errorf("slowing a domain did not slow the step: tp %+.2f%%, dp %+.2f%%", dom["tp"].ChangePct, dom["dp"].ChangePct)
	}
}

// TestScenarioOnSimWithoutPayload: without payload the scenario's times are
// exactly those with payload, since the simulated links time messages by
// their lengths; nothing is checked, and the report says so.
func TestScenarioOnSimWithoutPayload(t *testing.T) {
	sc, err := scenario.Parse([]byte(simScenario), scenario.Overrides{})
	if err != nil {
		t.Fatal(err)
	}
	links := simScenarioLinks
	reps := make([]*scenario.Report, 2)
	var out bytes.Buffer
	for i, none := range []bool{false, true} {
		out.Reset()
		o := scenario.Options{World: world.World{Backend: sim.Name, Timeout: 20 * time.Second, Own: links}, NoPayload: none}
		if reps[i], err = scenario.Run(context.Background(), sc, o, &out); err != nil {
			t.Fatal(err)
		}
	}
	with, without := reps[0], reps[1]
	if !without.Unchecked || with.Unchecked || !strings.Contains(out.String(), "# wrong elements: not checked") {
		t.Errorf("unchecked: with payload %v, without %v; report:\n%s", with.Unchecked, without.Unchecked, out.String())
	}
	if with.StepMS != without.StepMS || with.Domains[0].CommMS != without.Domains[0].CommMS ||
		with.Domains[1].SlowedStepMS != without.Domains[1].SlowedStepMS {
		t.Errorf("with payload: step %v ms, %s comm %v ms, slowed %s %v ms; without: %v, %v, %v",
			with.StepMS, with.Domains[0].Domain, with.Domains[0].CommMS, with.Domains[1].Domain, with.Domains[1].SlowedStepMS,
			without.StepMS, without.Domains[0].CommMS, without.Domains[1].SlowedStepMS)
	}
}

// simPlan is one row of allreduce on a simulated world of 4 ranks, as the
// sweep's own tests of virtual time have it.
func simPlan(bytes int64) bench.Plan {
	p := bench.DefaultPlan()
	p.Backend, p.Ranks = "sim", 4
	p.Ops, p.DTypes, p.RedOps = []coll.Op{coll.AllReduce}, []dtype.DType{dtype.FP32}, []dtype.ReduceOp{dtype.Sum}
	p.MinBytes, p.MaxBytes = bytes, bytes
	p.Iters, p.Warmup = 5, 1
	p.Algo = "ring"
	p.LinkGBps, p.LinkSource = 50, "given"
	p.Own = sim.Own{Alpha: 3 * time.Microsecond, ReduceGBps: 20, CopyGBps: 30}
	p.Timeout = 20 * time.Second
	return p
}

// runOneRow runs p, a plan of one row, as a sweep and returns the row.
func runOneRow(t *testing.T, p bench.Plan) results.Record {
	t.Helper()
	var c rows
	if _, err := bench.Run(context.Background(), p, &c); err != nil {
		t.Fatal(err)
	}
	if len(c) != 1 {
		t.Fatalf("got %d records, want 1", len(c))
	}
	return c[0]
}

// rows keeps the records of a sweep.
type rows []results.Record

func (c *rows) Begin(results.Header) error   { return nil }
func (c *rows) Write(r results.Record) error { *c = append(*c, r); return nil }
func (c *rows) End(results.Summary) error    { return nil }

// TestMoEExampleReportsSkew: the moe-ep example's report tells its zipf
// routing from a uniform one on the same file: the ep domain's drawn
// imbalance (the busiest rank's bytes over the mean, over the draws its
// timed calls took) is well above the uniform one's, which is near 1, and
// tp, which routes nothing, has none. Its timings need not separate them
// (on shm at 4 ranks the skew moves no more than the noise).
func TestMoEExampleReportsSkew(t *testing.T) {
	data, err := os.ReadFile("../examples/moe-ep.json")
	if err != nil {
		t.Fatal(err)
	}
	uniform := bytes.ReplaceAll(data, []byte("zipf:s=1.2,"), []byte("uniform:"))
	if bytes.Equal(uniform, data) {
		t.Fatal("moe-ep.json routes no zipf traffic")
	}
	links := sim.LinkModel{}
	imbalance := map[string]float64{}
	for name, file := range map[string][]byte{"zipf": data, "uniform": uniform} {
		sc, err := scenario.Parse(file, scenario.Overrides{Iterations: 4})
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		rep, err := scenario.Run(context.Background(), sc, scenario.Options{World: world.World{Backend: sim.Name, Timeout: 60 * time.Second, Own: links}, NoPayload: true}, &out)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range rep.Domains {
			switch {
			case d.Domain == "ep" && d.Draws < 2:
				t.Errorf("%s: ep took %d draws in 4 iterations of 2 routed steps", name, d.Draws)
			case d.Domain == "tp" && (d.Draws != 0 || d.Imbalance != 0):
				t.Errorf("%s: tp routes nothing, yet imbalance %v over %d draws", name, d.Imbalance, d.Draws)
			}
			if d.Domain == "ep" {
				imbalance[name] = d.Imbalance
			}
		}
		t.Logf("%s: ep imbalance %.2f\n%s", name, imbalance[name], out.String())
	}
	if u, z := imbalance["uniform"], imbalance["zipf"]; !(u >= 1 && u < 1.3 && z > 2*u) {
		t.Errorf("ep imbalance %.2f with zipf, %.2f uniform: want uniform near 1 and zipf above twice it", z, u)
	}
}
