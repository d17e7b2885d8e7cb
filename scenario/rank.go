package scenario

// A scenario's state on one rank: its domains' communicators and the
// collectives it runs, made before the first phase.

import (
	"fmt"
	"slices"
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
