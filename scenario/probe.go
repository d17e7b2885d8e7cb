package scenario

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"slices"
	"time"

	"github.com/hccl-test/hccl-test/backends"
	"github.com/hccl-test/hccl-test/backends/inject"
	"github.com/hccl-test/hccl-test/coll"
	"github.com/hccl-test/hccl-test/dtype"
	"github.com/hccl-test/hccl-test/payload"
	"github.com/hccl-test/hccl-test/runctl"
	"github.com/hccl-test/hccl-test/units"
)

// Before its runs a scenario measures, on the backend in use and with the
// --inject faults in place, what a message costs in each domain (alpha,
// beta), so that "slowed by P%" means P% slower than that domain's links
// are; and how fast each rank computes, so that a compute phase is a
// fixed amount of work.
const (
	// scenProbeSmall and scenProbeLarge are the sizes of the ring
	// exchanges that measure alpha and beta; the large one shares
	// scenProbeBudget among the ranks as the sweep's link probe does
	// (scenProbeSize): scenProbeLarge up to 128 ranks, 64 KiB at 4096.
	scenProbeSmall  = 8
	scenProbeLarge  = 1 << 20
	scenProbeBudget = 256 << 20
	// scenProbeIters and scenProbeLargeIters are their timed iterations
	// (the median counts), each after scenProbeWarmup untimed ones.
	scenProbeIters      = 15
	scenProbeLargeIters = 5
	scenProbeWarmup     = 1
	// scenCalWindow is how long one calibration run of the compute loop
	// lasts; the best of scenCalRuns counts.
	scenCalWindow = 30 * time.Millisecond
	scenCalRuns   = 3
	// scenBatch is how many units of compute run between two looks at
	// the clock while calibrating (a few microseconds).
	scenBatch = 32
)

// scenLoad is one rank's synthetic compute: the load of --overlap
// (payload.ComputeLoad, multiply-adds over a small array of its own), calibrated
// with every rank computing at once. It is work, not a sleep, so that it
// competes with communication for the CPU as real compute does.
type scenLoad struct {
	k payload.ComputeLoad
	// perSec is how many units a second the rank runs when every rank
	// computes at once, as calibrated.
	perSec float64
}

// rate runs units for about window and returns units per second.
func (l *scenLoad) rate(window time.Duration) float64 {
	start := time.Now()
	done := 0
	for time.Since(start) < window {
		l.k.Run(scenBatch)
		runtime.Gosched()
		done += scenBatch
	}
	return float64(done) / time.Since(start).Seconds()
}

// run computes for about d, as calibrated, in slices between which other
// goroutines run (payload.ComputeLoad.RunSliced); it stops early if ctx ends.
func (l *scenLoad) run(ctx context.Context, d time.Duration) error {
	l.k.PerUnit = 1 / l.perSec
	if err := l.k.RunSliced(ctx, int(d.Seconds()*l.perSec+0.5), nil); err != nil {
		return backends.ContextError(ctx)
	}
	return nil
}

// calibrate measures the compute loop on every rank at once (so that ranks
// sharing cores share them as they will in the step) and gives every rank
// the mean rate: each rank then does the same work per phase, and a phase
// of d takes about d with every rank computing and nothing else running.
// In virtual time compute phases are holds, with nothing to calibrate.
func (r *scenRank) calibrate(ctx context.Context) error {
	if r.virtual() || !slices.ContainsFunc(r.sc.Steps, Step.IsCompute) {
		return nil
	}
	best := 0.0
	for range scenCalRuns {
		if err := r.barrier(ctx); err != nil {
			return err
		}
		best = max(best, r.load.rate(scenCalWindow))
	}
	sum, err := r.allreduce(ctx, dtype.Sum, []float64{best})
	if err != nil {
		return err
	}
	r.load.perSec = sum[0] / float64(r.world.Size())
	return nil
}

// probe measures alpha and beta of every domain that has links, over t
// (the world's transport with the --inject faults): a ring
// exchange (send to the next rank of the group, receive from the one
// before) in every group of the domain at once, of scenProbeSmall and of
// scenProbeLarge bytes. Alpha is the small exchange's time, beta the bytes
// over the large one's extra time; each iteration counts its slowest rank,
// and the median iteration counts. Every rank gets the same figures.
func (r *scenRank) probe(ctx context.Context) error {
	// The probes run with --inject's faults, under their time limit.
	t, gate := inject.WrapGated(r.t, r.o.Inject, r.o.Seed)
	var send, recv []byte
	size := scenProbeSize(t.Size())
	for d, dom := range r.domains {
		if !r.links[d] {
			continue
		}
		if send == nil {
			send, recv = make([]byte, size), make([]byte, size)
		}
		comm, err := r.domainComm(t, dom)
		if err != nil {
			return err
		}
		// Repeated until the betas agree (runctl.Settle): one repetition on
		// a loaded host read a twentieth of another's, and the slowed
		// runs' holds are made from these figures. Alpha is the least
		// of the repetitions' small exchanges.
		alpha := math.Inf(1)
		start := time.Now()
		measure := func(int) (runctl.Reading, error) {
			small, err := r.probeTime(ctx, comm, gate, send[:scenProbeSmall], recv[:scenProbeSmall], scenProbeIters)
			if err != nil {
				return runctl.Reading{}, fmt.Errorf("measuring %s links with %d-byte exchanges: %w", dom, scenProbeSmall, err)
			}
			large, err := r.probeTime(ctx, comm, gate, send, recv, scenProbeLargeIters)
			if err != nil {
				return runctl.Reading{}, fmt.Errorf("measuring %s links with %s exchanges: %w", dom, units.FormatSize(size), err)
			}
			// Every rank must stop at the same repetition: the
			// slowest rank's clock counts.
			el, err := r.allreduce(ctx, dtype.Max, []float64{time.Since(start).Seconds()})
			if err != nil {
				return runctl.Reading{}, err
			}
			alpha = min(alpha, small)
			beta := float64(size-scenProbeSmall) / max(large-small, large/10)
			return runctl.Reading{Value: beta, Elapsed: time.Duration(el[0] * float64(time.Second))}, nil
		}
		var fig runctl.Settled
		if r.virtual() {
			// Virtual time reads the same every time: once is enough.
			one, err := measure(0)
			if err != nil {
				return err
			}
			fig = runctl.Settled{Value: one.Value, Lo: one.Value, Hi: one.Value, Reps: 1, Agreed: true, Took: one.Elapsed}
		} else if fig, err = runctl.Settle(measure); err != nil {
			return err
		}
		r.alpha[d], r.beta[d], r.betaFig[d] = alpha, fig.Value, fig
	}
	return nil
}

// scenProbeSize returns the large probe exchange's size on a world of
// ranks ranks.
func scenProbeSize(ranks int) int64 {
	return runctl.ShareBudget(scenProbeBudget, ranks, runctl.ProbeMin, scenProbeLarge)
}

// probeTime times iters ring exchanges of len(send) bytes in comm, after
// scenProbeWarmup untimed ones, and returns the median over iterations of
// the slowest rank's time, in seconds.
func (r *scenRank) probeTime(ctx context.Context, comm *coll.Comm, gate *inject.Gate, send, recv []byte, iters int) (float64, error) {
	args := &coll.Args{Op: coll.SendRecv, DType: dtype.Uint8, Count: len(send), Root: 0, Send: send, Recv: recv}
	if err := r.barrier(ctx); err != nil {
		return 0, err
	}
	wd := runctl.NewWatchdog(ctx, r.o.Timeout)
	defer wd.Stop()
	gate.Open(wd.Context(), r.o.Timeout)
	defer gate.Close()
	times := make([]float64, iters)
	for i := -scenProbeWarmup; i < iters; i++ {
		start := r.now()
		wd.Arm(time.Now())
		_, err := comm.Run(wd.Context(), coll.Auto, args)
		wd.Disarm()
		if err != nil {
			return 0, err
		}
		if i >= 0 {
			times[i] = (r.now() - start).Seconds()
		}
	}
	slowest, err := r.allreduce(ctx, dtype.Max, times)
	if err != nil {
		return 0, err
	}
	slices.Sort(slowest)
	return slowest[len(slowest)/2], nil
}

// scenHarnessWait is how many time limits (--timeout) the harness's own
// barriers and combining may wait: they wait for the other ranks to
// finish their share of work, every op of which has a time limit of its
// own, so they only need to guard against a rank that stopped without
// failing.
const scenHarnessWait = 10

// ctl is the harness's own control channel (runctl.Ctl) over the world
// without faults, each call within scenHarnessWait time limits.
func (r *scenRank) ctl() runctl.Ctl {
	return runctl.Ctl{Comm: r.world, Timeout: scenHarnessWait * r.o.Timeout}
}

// barrier synchronises the world.
func (r *scenRank) barrier(ctx context.Context) error {
	if err := r.ctl().Barrier(ctx); err != nil {
		return fmt.Errorf("barrier: %w", err)
	}
	return nil
}

// allreduce combines every rank's v element by element with op and returns
// the result, the same on every rank.
func (r *scenRank) allreduce(ctx context.Context, op dtype.ReduceOp, v []float64) ([]float64, error) {
	out, err := r.ctl().AllReduceFloats(ctx, op, v)
	if err != nil {
		return nil, fmt.Errorf("combining timings: %w", err)
	}
	return out, nil
}
