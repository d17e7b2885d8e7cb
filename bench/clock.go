package bench

import (
	"context"
	"math"
	"time"

	"github.com/hccl-test/hccl-test/backends"
	"github.com/hccl-test/hccl-test/backends/inject"
	"github.com/hccl-test/hccl-test/backends/sim"
	"github.com/hccl-test/hccl-test/coll"
	"github.com/hccl-test/hccl-test/dtype"
	"github.com/hccl-test/hccl-test/fielderr"
	"github.com/hccl-test/hccl-test/internal/ticks"
	"github.com/hccl-test/hccl-test/runctl"
	"github.com/hccl-test/hccl-test/world"
)

// Virtual time. A backend that simulates its links (--backend sim) keeps a
// clock per rank (backends.Clock), and rows are timed by it: a row's time
// is what the simulated links would take, and time the rank spends apart
// from its messages (--overlap's compute, --inject's holds) is charged to
// its clock (backends.Holder). The watchdog and the start time of a row
// stay on the wall clock.

// now returns this rank's time: its virtual clock when the world's
// transport (or the transport it wraps, such as --inject's) has one, else
// the wall-clock time since runctl.Epoch. Group communicators run over the world's
// transport, so one clock serves every domain.
func (r *rankRunner) now() time.Duration {
	if c, ok := r.comm.Clock(); ok {
		return c.Now()
	}
	return time.Since(runctl.Epoch)
}

// stamp is a reading of the clock that times a row's iterations, which
// only differences of two (rankRunner.since) make time of: the virtual
// clock's nanoseconds, or the wall clock's ticks (internal/ticks: the
// CPU's counter where the kernel keeps time by it, a third of the cost
// of a reading of the monotonic clock, which fences the read to wait for
// every load before it, here the peer's cache lines a wait ends on). An
// iteration's two readings are part of what the peer waits for in the
// next one (the peers' own benchmarks read the clock twice a loop).
type stamp int64

// stamp returns a reading of the clock that times the row.
func (r *rankRunner) stamp() stamp {
	if c, ok := r.comm.Clock(); ok {
		return stamp(c.Now())
	}
	return stamp(ticks.Now())
}

// since returns the time from s to now.
func (r *rankRunner) since(s stamp) time.Duration {
	if c, ok := r.comm.Clock(); ok {
		return c.Now() - time.Duration(s)
	}
	return (ticks.Now() - ticks.Ticks(s)).Duration()
}

// waited returns the time this rank has spent waiting on its peers, which
// the row's straggler figures subtract from its time: in virtual time when
// rows are timed by a virtual clock (backends.WaitClock; none counted if
// the clock does not say), else comm's wall-clock count.
func (r *rankRunner) waited(comm *coll.Comm) time.Duration {
	c, ok := r.comm.Clock()
	if !ok {
		return comm.Waited()
	}
	if w, ok := c.(backends.WaitClock); ok {
		return w.Waited()
	}
	return 0
}

// syncClocks is the harness's barrier. In virtual time (backends.Aligner)
// it is a virtual one too: every rank leaves it at the same instant, the
// latest any rank's clock read when it entered, with idle links, as if
// the harness's own calls took no virtual time (the sim's package comment
// says they do not). So what follows, a row's timed iterations, starts
// from the same state wherever the row stands in the run: not from clocks
// left apart by the row before (its last iteration, its warm-up) or by the
// barrier's own messages, nor behind messages still on a port.
func (r *rankRunner) syncClocks(ctx context.Context) error {
	a, ok := backends.AlignerOf(r.comm.Transport())
	if !ok {
		return r.ctl().Barrier(ctx)
	}
	// The maximum of every rank's clock is a barrier too: no rank has it
	// before every rank has entered. Clocks are whole nanoseconds, exact
	// in a float64 up to 104 days, and the same on every rank beyond.
	latest, err := r.ctl().AllReduceFloats(ctx, dtype.Max, []float64{float64(r.now())})
	if err != nil {
		return err
	}
	a.Align(time.Duration(latest[0]))
	return nil
}

// simLinks returns the link model the plan asks the sim backend to
// simulate, nil for other backends: the bandwidths of --link-bw (inside and
// between servers), the latencies of --sim-alpha, the reduction rate of
// --sim-reduce, the copy rate of --sim-copy, the gap of --sim-gap, who
// moves the data (--sim-pull) and the servers of --topology;
// what is 0 takes the model's
// default (sim.DefaultLinkModel).
func (p Plan) simLinks() *sim.LinkModel { return p.Links.simLinks(p.Caps(), p.Topology) }

// simLinks is Plan.simLinks for links l of a world on a backend of
// capabilities c whose ranks sit on servers as topo says.
func (l Links) simLinks(c backends.Caps, topo Topology) *sim.LinkModel {
	if !c.Simulated {
		return nil
	}
	m := sim.LinkModel{
		IntraAlpha: l.SimAlpha, InterAlpha: l.SimInterAlpha,
		IntraGBps: l.LinkGBps, InterGBps: l.LinkInterGBps, ReduceGBps: l.SimReduceGBps, CopyGBps: l.SimCopyGBps,
		Gap: l.SimGap, Pull: l.SimPull,
	}
	if topo.TwoLevel() {
		m.PerServer = topo.PerServer
	}
	return &m
}

// simDescription describes the simulated links for the header, "" for
// other backends.
func (p Plan) simDescription() string {
	m := p.simLinks()
	if m == nil {
		return ""
	}
	s := m.Describe(p.Ranks) + "; times are virtual"
	if p.NoPayload {
		s += "; no payload: results are not checked"
	}
	return s
}

// SimLinkModel checks the settings of the sim backend in l as a sweep's
// are checked, for a world on a backend of capabilities c whose ranks sit on servers as topo
// says and that injects faults f, and returns the link model they ask for,
// nil when the backend is not sim: what hccl-test scenario runs a simulated
// world on.
func (l Links) SimLinkModel(c backends.Caps, topo Topology, f world.Faults) (*sim.LinkModel, error) {
	if l.LinkInterGBps > 0 && !topo.TwoLevel() {
		return nil, fielderr.FieldErrorf("LinkInterGBps", ": a link between servers needs %s with more than one server", fielderr.Field("Topology"))
	}
	if err := l.validateSim(c, topo, f); err != nil {
		return nil, err
	}
	return l.simLinks(c, topo), nil
}

// validateSim checks the settings of the sim backend, and that nothing the
// plan asks for takes wall time that virtual clocks would not see.
func (p Plan) validateSim() error { return p.Links.validateSim(p.Caps(), p.Topology, p.Faults) }

// validateSim is Plan.validateSim for links l of a world on a backend of
// capabilities c whose ranks sit on servers as topo says and that injects
// faults f.
func (l Links) validateSim(c backends.Caps, topo Topology, f world.Faults) error {
	if l.NoPayload && !c.NoPayload {
		return fielderr.FieldErrorf("NoPayload", ": only %s sim can run without payload", fielderr.Field("Backend"))
	}
	if !c.Simulated {
		switch {
		case l.SimAlpha != 0 || l.SimInterAlpha != 0:
			return fielderr.FieldErrorf("SimAlpha", ": only %s sim simulates links", fielderr.Field("Backend"))
		case l.SimReduceGBps != 0:
			return fielderr.FieldErrorf("SimReduceGBps", ": only %s sim simulates reductions", fielderr.Field("Backend"))
		case l.SimCopyGBps != 0:
			return fielderr.FieldErrorf("SimCopyGBps", ": only %s sim simulates copies", fielderr.Field("Backend"))
		case l.SimGap != 0:
			return fielderr.FieldErrorf("SimGap", ": only %s sim simulates links", fielderr.Field("Backend"))
		case l.SimPull:
			return fielderr.FieldErrorf("SimPull", ": only %s sim simulates links", fielderr.Field("Backend"))
		}
		return nil
	}
	switch {
	case l.SimAlpha < 0 || l.SimInterAlpha < 0:
		return fielderr.FieldErrorf("SimAlpha", " intra=%v,inter=%v: must not be negative", l.SimAlpha, l.SimInterAlpha)
	case l.SimGap < 0:
		return fielderr.FieldErrorf("SimGap", " %v: must not be negative", l.SimGap)
	case l.SimReduceGBps < 0 || math.IsNaN(l.SimReduceGBps) || math.IsInf(l.SimReduceGBps, 0):
		return fielderr.FieldErrorf("SimReduceGBps", " %v: must be a positive bandwidth", l.SimReduceGBps)
	case l.SimCopyGBps < 0 || math.IsNaN(l.SimCopyGBps) || math.IsInf(l.SimCopyGBps, 0):
		return fielderr.FieldErrorf("SimCopyGBps", " %v: must be a positive bandwidth", l.SimCopyGBps)
	case l.SimInterAlpha > 0 && !topo.TwoLevel():
		return fielderr.FieldErrorf("SimInterAlpha", ": a link between servers needs %s with more than one server", fielderr.Field("Topology"))
	}
	if l.NoPayload {
		for _, fault := range f.Inject {
			if fault.Kind == inject.Corrupt {
				return fielderr.FieldErrorf("InjectText", " %q: corrupt changes the bytes of messages, and with %s they have none", f.InjectText, fielderr.Field("NoPayload"))
			}
		}
	}
	return nil
}
