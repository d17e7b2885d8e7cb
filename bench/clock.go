package bench

import (
	"context"
	"time"

	"github.com/hccl-test/hccl-test/backends"
	"github.com/hccl-test/hccl-test/backends/inject"
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

// modeled returns the plan's backend as a backends.Modeled when it
// simulates its links (Caps.Simulated), else nil.
func (p *Plan) modeled() backends.Modeled {
	b, err := p.Resolve()
	if err != nil || !b.Capabilities().Simulated {
		return nil
	}
	m, _ := b.(backends.Modeled)
	return m
}

// settings are what the plan says to its backend (world.World.Settings),
// with the links of --link-bw and the servers of --topology
// (worldLinks), from which a simulator makes its link model with its own
// options (sim: --sim-alpha, --sim-reduce, --sim-copy, --sim-gap,
// --sim-pull), zero fields taking its defaults.
func (p *Plan) settings() backends.Settings { return p.World.Settings(p.Links.WorldLinks(p.Topology)) }

// WorldLinks returns what l says of the links of a world whose ranks sit
// on servers as topo says, for its backend (backends.Settings.Links): the
// bandwidths inside and between servers and, with two levels, the ranks
// of a server.
func (l Links) WorldLinks(topo Topology) backends.WorldLinks {
	w := backends.WorldLinks{IntraGBps: l.LinkGBps, InterGBps: l.LinkInterGBps}
	if topo.TwoLevel() {
		w.PerServer = topo.PerServer
	}
	return w
}

// simDescription describes the simulated links for the header, "" for
// other backends.
func (p *Plan) simDescription() string {
	m := p.modeled()
	if m == nil {
		return ""
	}
	s := m.DescribeLinks(p.settings(), p.Ranks) + "; times are virtual"
	if p.NoPayload {
		s += "; no payload: results are not checked"
	}
	return s
}

// CheckWorld checks l and the backend's own options (w.Own) for a world w
// whose ranks sit on servers as topo says and that injects faults f, as a
// sweep's are checked, and returns what l says of its links
// (WorldLinks): what hccl-test scenario runs a simulated world with.
func (l Links) CheckWorld(w world.World, topo Topology, f world.Faults) (backends.WorldLinks, error) {
	if l.LinkInterGBps > 0 && !topo.TwoLevel() {
		return backends.WorldLinks{}, fielderr.FieldErrorf("LinkInterGBps", ": a link between servers needs %s with more than one server", fielderr.Field("Topology"))
	}
	if err := l.validateSim(w, topo, f); err != nil {
		return backends.WorldLinks{}, err
	}
	return l.WorldLinks(topo), nil
}

// validateSim checks the backend's own options (backends.OwnChecker: sim's
// settings on sim alone), a run without payload, and that nothing the
// plan asks for takes wall time that virtual clocks would not see.
func (p *Plan) validateSim() error { return p.Links.validateSim(p.World, p.Topology, p.Faults) }

// validateSim is Plan.validateSim for links l of world w whose ranks sit
// on servers as topo says and that injects faults f.
func (l Links) validateSim(w world.World, topo Topology, f world.Faults) error {
	c := w.Caps()
	if l.NoPayload && !c.NoPayload {
		return fielderr.FieldErrorf("NoPayload", ": only %s sim can run without payload", fielderr.Field("Backend"))
	}
	if oc, ok := w.Own.(backends.OwnChecker); ok {
		if b, err := w.Resolve(); err == nil {
			if err := oc.CheckOwn(b, l.WorldLinks(topo)); err != nil {
				return err
			}
		}
	}
	if !c.Simulated {
		return nil
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
