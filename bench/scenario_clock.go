package bench

import (
	"context"
	"time"

	"github.com/hccl-test/hccl-test/backends"
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
func (r *scenRank) virtual() bool { return r.holder != nil }

// now returns this rank's time: its virtual clock in virtual time, else the
// wall-clock time since epoch.
func (r *scenRank) now() time.Duration {
	if r.virtual() {
		return r.clock.Now()
	}
	return time.Since(epoch)
}

// compute runs a compute phase of d: a hold of the clock in virtual time,
// else the calibrated load.
func (r *scenRank) compute(ctx context.Context, d time.Duration) error {
	if r.virtual() {
		r.holder.Hold(d)
		return nil
	}
	return r.load.run(ctx, d)
}

// useClock makes r run in virtual time if t has a virtual clock that
// holds can be charged to.
func (r *scenRank) useClock(t backends.Transport) {
	c, vc := backends.ClockOf(t)
	h, vh := backends.HolderOf(t)
	if vc && vh {
		r.clock, r.holder = c, h
	}
}
