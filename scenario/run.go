package scenario

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/hccl-test/hccl-test/backends"
	"github.com/hccl-test/hccl-test/backends/group"
	"github.com/hccl-test/hccl-test/backends/inject"
	"github.com/hccl-test/hccl-test/coll"
	"github.com/hccl-test/hccl-test/dtype"
	"github.com/hccl-test/hccl-test/estimate"
	"github.com/hccl-test/hccl-test/payload"
	"github.com/hccl-test/hccl-test/runctl"
	"github.com/hccl-test/hccl-test/world"
)

// Options are the command line's choices for running a scenario.
type Options struct {
	// World is where the scenario runs, as a sweep's: Backend, Timeout
	// (the limit for one collective, barrier or exchange), and Master,
	// Bind, ConnectTimeout, Args and Log, passed to the backend (Args must
	// make a rank process run the same scenario). Its Ranks is not read:
	// the world has the scenario's ranks (Scenario.Ranks, which the
	// command's -p and a launcher's size reach through Overrides).
	world.World
	// Faults are applied to every run, the baseline included (Inject,
	// InjectText as given, Seed for their random choices). A scenario runs
	// no call again: Retry and its pauses are not read.
	world.Faults
	JSON bool // write one JSON object instead of the text
	// Links are the links of a simulated world (--backend sim: --link-bw
	// and --topology), which its backend simulates with its own options
	// (World.Own; see backends.Settings and backends.Modeled); the zero
	// WorldLinks for the backend's defaults, and on other backends.
	Links backends.WorldLinks
	// NoPayload runs the collectives with lengths only (--sim-data=false,
	// sim only): no buffer takes memory and nothing is checked.
	NoPayload bool
}

// config is the backend configuration for a world of ranks.
func (o Options) config(ranks int) backends.Config {
	w := o.World
	w.Ranks = ranks
	return w.Config(o.Links, false)
}

// CheckBackend has o's backend check the configuration of a world of
// ranks (backends.CheckConfig) before anything starts.
func (o Options) CheckBackend(ranks int) error {
	b, err := o.Resolve()
	if err != nil {
		return err
	}
	return backends.CheckConfig(b, o.config(ranks))
}

// Run runs sc in one world on o's backend: it measures each domain's
// links and the compute loop, runs the step with only o's faults (the
// baseline), then once per domain with links with that domain's links
// slowed by sc.Slowdown, and writes the report to out from the process that
// hosts rank 0, which also gets it returned (other processes get nil).
func Run(ctx context.Context, sc *Scenario, o Options, out io.Writer) (*Report, error) {
	b, err := o.Resolve()
	if err != nil {
		return nil, fmt.Errorf("--backend: %w", err)
	}
	var rep *Report
	// Every rank's harness stays reachable until the transport has ended:
	// its communicators' scratch space is unmapped once they are collected
	// (coll.Comm), and a receive that failed on its context may be filled
	// until then (tcp's reader goes on with it until the endpoint closes).
	var (
		keptMu sync.Mutex
		kept   []*scenRank
	)
	err = b.Run(ctx, o.config(sc.Ranks), func(ctx context.Context, t backends.Transport) error {
		if runctl.NeedsAgreement(b, sc.Ranks) {
			if err := runctl.AgreeOn(ctx, t, o.Timeout, scenarioFields(sc, o)); err != nil {
				return err
			}
		}
		r, err := newScenRank(sc, o, t)
		if err != nil {
			return fmt.Errorf("scenario %q, world rank %d: %w", sc.Name, t.Rank(), err)
		}
		keptMu.Lock()
		kept = append(kept, r)
		keptMu.Unlock()
		res, err := r.run(ctx)
		if err != nil {
			return fmt.Errorf("scenario %q, world rank %d: %w", sc.Name, t.Rank(), err)
		}
		if t.Rank() == 0 {
			rep = res
		}
		return nil
	})
	runtime.KeepAlive(kept)
	if err != nil {
		if ctx.Err() != nil {
			err = fmt.Errorf("interrupted (%w): %w", context.Cause(ctx), err)
		}
		return nil, err
	}
	if rep == nil {
		return nil, nil
	}
	rep.Backend, rep.Unchecked = o.Backend, o.NoPayload
	if m, ok := b.(backends.Modeled); ok && o.Caps().Simulated {
		rep.Simulated = m.DescribeLinks(o.Settings(o.Links), sc.Ranks)
	}
	if len(o.Inject) > 0 {
		rep.Faults = fmt.Sprintf("%s (seed %d)", o.InjectText, o.Seed)
	}
	if o.JSON {
		err = rep.WriteJSON(out)
	} else {
		err = rep.WriteText(out)
	}
	if err != nil {
		return rep, fmt.Errorf("writing the report: %w", err)
	}
	return rep, nil
}

// scenRank is the scenario on one rank.
type scenRank struct {
	sc *Scenario
	o  Options
	t  backends.Transport // the world's, without faults
	// world is the harness's own communicator, over t without faults:
	// barriers and combining the timings, which no injected fault may
	// slow or garble.
	world   *coll.Comm
	rank    int
	domains []string // sc.Domains()
	links   []bool   // by domain: its groups have at least 2 ranks
	// alpha (seconds) and beta (bytes per second) of each domain's links,
	// as probed.
	alpha, beta []float64
	// betaFig is how each domain's repeated beta probes went (runctl.Settle).
	betaFig []runctl.Settled
	actions []scenAction
	colls   []*scenColl // by step; nil for compute phases
	load    scenLoad
	// comms holds each run's communicators, one per domain: [0] the
	// baseline's, [1+d] those of the run with domain d slowed; made when
	// the run first comes, kept for its later rounds.
	comms [][]*coll.Comm
	// gates scope each run's faults to its own calls, as comms are
	// indexed: opened under the run's watchdog and time limit, so that
	// their holds end with either (inject.Gate).
	gates   []*inject.Gate
	untrack []func() // for the status report on SIGQUIT
	// curRun is the run under way ([0] the baseline, [1+d] domain d
	// slowed), and began counts each run's iterations begun, warm-up,
	// timed and checked alike: the iteration whose draw a routed step
	// takes (scenColl.use).
	curRun int
	began  []int
	// timing is set during the timed iterations of a run.
	timing bool
	// clock is the rank's virtual clock on a backend in virtual time
	// (clock.go), zero on the wall clock.
	clock runctl.VirtualClock
	// top is the simulated servers (--topology on sim), zero elsewhere.
	top world.Topology
}

// scenAction is one thing an iteration does: a compute phase, a
// collective, or a compute phase with a collective overlapping it.
type scenAction struct {
	compute time.Duration // 0: none
	coll    int           // index of the collective step, -1: none
}

// scenColl is a collective step on one rank: its arguments over buffers of
// its own, filled once with the check pattern.
type scenColl struct {
	step    *Step
	index   int // in sc.Steps
	dom     int // in domains
	args    *coll.Args
	row     payload.Row
	pattern dtype.Pattern
	rank, n int // in its group
	// model is what auto chooses with on sim (the simulated links' own
	// figures, for the step's domain and data type); nil elsewhere, where
	// the Comm keeps the default model.
	model *coll.Model
	// draws are the arguments of each of a routed step's draws over the
	// same buffers (one for the other steps); args and row are the one
	// in use (use).
	draws []scenDraw
	// taken counts, by draw, the baseline run's timed iterations that
	// took it.
	taken []int
}

// scenDraw is a collective's arguments and row under one draw.
type scenDraw struct {
	args *coll.Args
	row  payload.Row
}

// use makes iteration iter's draw the one c calls with: iter mod the
// number of draws, the same on every rank of the run; counted says to
// count it in taken.
func (c *scenColl) use(iter int, counted bool) {
	i := iter % len(c.draws)
	c.args, c.row = c.draws[i].args, c.draws[i].row
	if counted {
		c.taken[i]++
	}
}

// newScenRank prepares rank t.Rank() of sc: the plan of an iteration and the
// buffers of every collective, or the error of buffers it cannot have.
func newScenRank(sc *Scenario, o Options, t backends.Transport) (*scenRank, error) {
	r := &scenRank{sc: sc, o: o, t: t, rank: t.Rank(), domains: sc.Domains(), colls: make([]*scenColl, len(sc.Steps))}
	r.comms = make([][]*coll.Comm, 1+len(r.domains))
	r.gates = make([]*inject.Gate, 1+len(r.domains))
	r.began = make([]int, 1+len(r.domains))
	if v, ok := runctl.VirtualClockOf(t); ok {
		r.clock = v
	}
	var cal *estimate.Calibration
	r.top, cal = scenSim(sc, o)
	r.alpha, r.beta = make([]float64, len(r.domains)), make([]float64, len(r.domains))
	r.betaFig = make([]runctl.Settled, len(r.domains))
	for _, d := range r.domains {
		r.links = append(r.links, sc.GroupSize(d) > 1)
	}
	for i := 0; i < len(sc.Steps); i++ {
		st := &sc.Steps[i]
		switch {
		case st.IsCompute() && i+1 < len(sc.Steps) && sc.Steps[i+1].Overlap:
			r.actions = append(r.actions, scenAction{compute: st.Compute, coll: i + 1})
			i++
		case st.IsCompute():
			r.actions = append(r.actions, scenAction{compute: st.Compute, coll: -1})
		default:
			r.actions = append(r.actions, scenAction{coll: i})
		}
	}
	for i := range sc.Steps {
		st := &sc.Steps[i]
		if st.IsCompute() {
			continue
		}
		n := sc.GroupSize(st.Group)
		rank := slices.Index(r.members(st.Group), r.rank)
		row := payload.Row{Op: st.Op, DType: st.DType, RedOp: st.RedOp, Root: st.Root, Place: payload.OutOfPlace,
			Count: st.Elems, Bytes: st.Bytes, Group: st.Group, GroupSize: n}
		send, recv := st.BufferBytes(n)
		var bp payload.BufferPool
		if o.NoPayload {
			// Address space that nothing touches, as a sweep's without
			// payload.
			mem, err := payload.NoPayloadBuffers.Get(int(send + recv))
			if err != nil {
				return nil, fmt.Errorf("step %d: buffers without payload: %w", i+1, err)
			}
			bp.A, bp.B = mem[:send:send], mem[send:]
		} else {
			bp.A, bp.B = make([]byte, send), make([]byte, recv)
		}
		c := &scenColl{step: st, index: i, dom: slices.Index(r.domains, st.Group),
			pattern: payload.PatternFor(row, n), rank: rank, n: n}
		// One layout of the buffers per draw; the first is in use.
		for _, d := range st.Draws {
			row.Counts = d.Counts
			c.draws = append(c.draws, scenDraw{args: bp.Args(row, rank, n), row: row})
		}
		if st.Draws == nil {
			c.draws = []scenDraw{{args: bp.Args(row, rank, n), row: row}}
		}
		c.taken = make([]int, len(c.draws))
		c.use(0, false)
		if !o.NoPayload {
			payload.FillInputs(c.args, c.pattern, rank)
		}
		if cal != nil {
			kind := st.Group
			if kind == WorldDomain {
				kind = "" // the world's Comm knows the servers
			}
			m := world.DomainModel(cal.Model(st.DType, st.Bytes), kind, r.top.Crosses(sc.Layout, sc.Ranks, kind))
			c.model = &m
		}
		r.colls[i] = c
	}
	return r, nil
}

// members returns the world ranks of this rank's group in domain dom.
func (r *scenRank) members(dom string) []int {
	if dom == WorldDomain {
		out := make([]int, r.sc.Ranks)
		for i := range out {
			out[i] = i
		}
		return out
	}
	return r.sc.Layout.Members(dom, r.rank)
}

// domainComm returns this rank's communicator in domain dom over t.
func (r *scenRank) domainComm(t backends.Transport, dom string) (*coll.Comm, error) {
	if dom == WorldDomain {
		c := coll.NewComm(t)
		if r.top.TwoLevel() {
			if err := c.SetTopology(r.top.PerServer); err != nil {
				return nil, fmt.Errorf("--topology: %w", err)
			}
		}
		return c, nil
	}
	g, err := group.New(t, r.members(dom))
	if err != nil {
		return nil, fmt.Errorf("%s group: %w", dom, err)
	}
	return coll.NewComm(g), nil
}

// scenRoundIters is how many timed iterations a run does in one round:
// the runs (the baseline and each slowed domain) take turns round after
// round, so that whatever else the machine does over time, and any drift
// of its speed, falls on them all alike.
const scenRoundIters = 2

// scenRoundsOf returns how many rounds iters timed iterations take.
func scenRoundsOf(iters int) int { return (iters + scenRoundIters - 1) / scenRoundIters }

// run is the whole scenario on this rank: the probes, then every run, in
// rounds. Every rank returns the same results; rank 0's report is the one
// written.
func (r *scenRank) run(ctx context.Context) (*Report, error) {
	r.world = coll.NewComm(r.t)
	r.untrack = append(r.untrack, runctl.Track(r.world))
	defer func() {
		for _, u := range r.untrack {
			u()
		}
	}()
	if err := r.probe(ctx); err != nil {
		return nil, err
	}
	if err := r.calibrate(ctx); err != nil {
		return nil, fmt.Errorf("calibrating the compute loop: %w", err)
	}
	// runs[0] is the baseline, runs[1+d] the run with domain d slowed.
	runs := make([]*scenResult, 1+len(r.domains))
	rounds := scenRoundsOf(r.sc.Iterations)
	for round := range rounds {
		iters := min(scenRoundIters, r.sc.Iterations-round*scenRoundIters)
		// Later rounds need less: the communicators have their scratch
		// space, the buffers are touched.
		warmup := r.sc.Warmup
		if round > 0 {
			warmup = min(warmup, 1)
		}
		for d := -1; d < len(r.domains); d++ {
			if d >= 0 && !r.links[d] {
				continue
			}
			res, err := r.runPhase(ctx, d, iters, warmup, round == 0)
			if err != nil {
				if d < 0 {
					return nil, fmt.Errorf("baseline run: %w", err)
				}
				return nil, fmt.Errorf("run with %s links slowed: %w", r.domains[d], err)
			}
			runs[d+1] = runs[d+1].add(res)
		}
	}
	return r.report(runs[0], runs[1:]), nil
}

// phaseSpec returns the faults of this rank in the phase that slows domain
// d (-1: the baseline): the --inject faults, and on every link from this
// rank to another rank of its group in d a delay of Slowdown% of the
// domain's alpha and a bandwidth limit of its beta / Slowdown%, which
// holds a message of s bytes Slowdown% of s/beta longer.
func (r *scenRank) phaseSpec(d int) inject.Spec {
	spec := slices.Clone(r.o.Inject)
	if d < 0 {
		return spec
	}
	delay, rate := r.slowFaults(d)
	for _, peer := range r.members(r.domains[d]) {
		if peer == r.rank {
			continue
		}
		spec = append(spec,
			inject.Fault{Kind: inject.Delay, Min: delay, Max: delay, From: r.rank, To: peer},
			inject.Fault{Kind: inject.Bandwidth, Rate: rate, From: r.rank, To: peer})
	}
	return spec
}

// slowFaults returns the delay and the bandwidth limit (bytes per second)
// that slow domain d's links by the scenario's slowdown.
func (r *scenRank) slowFaults(d int) (time.Duration, float64) {
	frac := r.sc.Slowdown / 100
	return time.Duration(frac * r.alpha[d] * 1e9), r.beta[d] / frac
}

// runComms returns this rank's communicators in run d (-1: the baseline),
// one per domain, over the world's transport wrapped with the run's
// faults.
func (r *scenRank) runComms(d int) ([]*coll.Comm, error) {
	if c := r.comms[d+1]; c != nil {
		return c, nil
	}
	t, gate := inject.WrapGated(r.t, r.phaseSpec(d), r.o.Seed)
	r.gates[d+1] = gate
	comms := make([]*coll.Comm, len(r.domains))
	for i, dom := range r.domains {
		c, err := r.domainComm(t, dom)
		if err != nil {
			return nil, err
		}
		c.SetNoPayload(r.o.NoPayload)
		comms[i] = c
		r.untrack = append(r.untrack, runctl.Track(c))
	}
	r.comms[d+1] = comms
	return comms, nil
}

// runPhase runs the step with domain d slowed (-1: none): warmup
// iterations, then iters timed ones, then with check a checked one. All
// ranks switch runs after a barrier, so every link carries the same calls
// in the same order on both of its ends.
func (r *scenRank) runPhase(ctx context.Context, d, iters, warmup int, check bool) (*scenResult, error) {
	comms, err := r.runComms(d)
	if err != nil {
		return nil, err
	}
	if err := r.barrier(ctx); err != nil {
		return nil, err
	}
	r.curRun = d + 1
	wd := runctl.NewWatchdog(ctx, r.o.Timeout)
	defer wd.Stop()
	gate := r.gates[d+1]
	gate.Open(wd.Context(), r.o.Timeout)
	defer gate.Close()
	corrupted := gate.Corrupted()
	k := scenSampleLen(len(r.domains))
	scratch := make([]float64, k)
	for i := range warmup {
		clear(scratch)
		if err := r.iterate(wd, comms, scratch, nil); err != nil {
			return nil, fmt.Errorf("warm-up iteration %d: %w", i+1, err)
		}
	}
	if err := r.barrier(ctx); err != nil {
		return nil, err
	}
	samples := make([]float64, iters*k)
	r.timing = true
	for i := range iters {
		if err := r.iterate(wd, comms, samples[i*k:(i+1)*k], nil); err != nil {
			r.timing = false
			return nil, fmt.Errorf("timed iteration %d: %w", i+1, err)
		}
	}
	r.timing = false
	// Corruption --inject put where the check cannot see it (warm-up and
	// timed iterations, or the checked one when the check found nothing,
	// as a max or min can hide a flipped bit) is always reported: one
	// wrong element per corrupted message, as a sweep counts it.
	unchecked := gate.Corrupted() - corrupted
	wrong := make([]float64, len(r.sc.Steps)+1)
	if check && !r.o.NoPayload {
		clear(scratch)
		if err := r.iterate(wd, comms, scratch, wrong); err != nil {
			return nil, fmt.Errorf("checked iteration: %w", err)
		}
		var found float64
		for _, w := range wrong {
			found += w
		}
		if found == 0 {
			unchecked = gate.Corrupted() - corrupted
		}
	}
	wrong[len(r.sc.Steps)] = float64(unchecked)
	return r.combine(ctx, iters, samples, wrong)
}

// scenSampleLen is how many values one iteration records on a rank: the
// step's time, the compute time, then each domain's communication and
// exposed time.
func scenSampleLen(domains int) int { return 2 + 2*domains }
