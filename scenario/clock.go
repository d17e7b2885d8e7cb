package scenario

import (
	"context"
	"slices"
	"time"

	"github.com/hccl-test/hccl-test/backends"
	"github.com/hccl-test/hccl-test/dtype"
	"github.com/hccl-test/hccl-test/estimate"
	"github.com/hccl-test/hccl-test/runctl"
	"github.com/hccl-test/hccl-test/world"
)

// A scenario on a backend in virtual time (sim) runs as it does elsewhere,
// but by each rank's virtual clock: every time it reports is read from
// that clock, and a compute phase is a hold of the clock (backends.Holder)
// instead of work on the CPU, so it needs no calibration. An overlapped
// collective runs beside its compute phase as the simulated links run
// beside a rank's compute: the collective is run, then the clock held to
// where the phase, begun with it, ends. The sensitivity runs' slowed links
// are --inject holds, which sim applies to each message on its sender's
// port (backends.LinkHolder), as a slower link would.

// virtual reports whether this rank runs in virtual time.
func (r *scenRank) virtual() bool { return r.clock.Holder != nil }

// now returns this rank's time: its virtual clock in virtual time, else the
// wall-clock time since epoch.
func (r *scenRank) now() time.Duration {
	if r.virtual() {
		return r.clock.Now()
	}
	return time.Since(runctl.Epoch)
}

// compute runs a compute phase of d: a hold of the clock in virtual time,
// else the calibrated load.
func (r *scenRank) compute(ctx context.Context, d time.Duration) error {
	if r.virtual() {
		r.clock.Hold(d)
		return nil
	}
	return r.load.run(ctx, d)
}

// scenSim returns, for a scenario on sim (a backends.Modeled), the
// simulated servers and the model auto chooses with: the simulated links'
// own figures, as in a sweep. Elsewhere it returns one level and nil: the Comms keep the
// default model.
func scenSim(sc *Scenario, o Options) (world.Topology, *estimate.Calibration) {
	b, _ := o.Resolve()
	m, ok := b.(backends.Modeled)
	if !ok || !o.Caps().Simulated {
		return world.Topology{}, nil
	}
	links := m.LinkFigures(o.Settings(o.Links))
	var top world.Topology
	if p := links.PerServer; p > 0 && p < sc.Ranks && sc.Ranks%p == 0 {
		top = world.Topology{Servers: sc.Ranks / p, PerServer: p}
	}
	var dts []dtype.DType
	for _, st := range sc.Steps {
		if !st.IsCompute() && !slices.Contains(dts, st.DType) {
			dts = append(dts, st.DType)
		}
	}
	return top, estimate.SimCalibration(links, dts)
}
