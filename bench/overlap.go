package bench

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/hccl-test/hccl-test/coll"
	"github.com/hccl-test/hccl-test/payload"
	"github.com/hccl-test/hccl-test/results"
	"github.com/hccl-test/hccl-test/runctl"
)

// --overlap measures each row a second time, with every iteration
// overlapped with synthetic compute (compute.go): the collective is started
// without blocking (coll.Comm.Start), the rank computes, then waits for it
// (Pending.Wait). The compute amount is Plan.Overlap, or with OverlapAuto
// this rank's own mean time in the row's timed loop, just measured; it may
// differ between ranks, since it changes no message. A row of several
// buckets (--fusion) starts its buckets one after another: bucket i is
// started, 1/b of the compute runs, bucket i is waited for, then bucket i+1
// is started, as a training step starts each gradient bucket's collective
// while it computes the next (a Comm runs one collective at a time).
//
// The compute's unit is calibrated with as many loads running at once as
// this process hosts ranks (payload.ComputeUnitFor), so that the compute takes
// about the time asked for under the load of the measured row, where every
// rank computes at once, not on an idle machine.
//
// t_compute, the row's compute column, is the same compute timed alone on
// this row: every rank runs it at once, with no communication, once before
// each timed overlapped iteration, so that both see the machine in the
// same state (timed apart, a few runs drifted from the iterations by more
// than a short collective lasts). It is measured rather than taken
// from the calibration because ranks that share cores slow each other's
// compute too, with or without communication; timed alone, that cost is in
// t_compute, and the efficiency is what overlapping gains or loses beyond it.

// overlapResult is what rank 0 learns from measureOverlap, in microseconds,
// the slowest rank counting: totalUS is the mean time of an overlapped
// iteration, computeUS the compute alone. Both are zero on other ranks.
type overlapResult struct {
	totalUS, computeUS float64
	// shared: the ranks computing at once outnumber the cores, so compute
	// and communication share CPUs and the efficiency cannot be measured.
	shared bool
}

// fill sets rec's overlap fields from o and rec's own time; without a
// measurement (computeUS 0) it leaves them zero.
func (o overlapResult) fill(rec *results.Record) {
	if o.computeUS <= 0 {
		return
	}
	rec.ComputeUS, rec.TotalUS = o.computeUS, o.totalUS
	rec.OverlapEff = math.NaN()
	if !o.shared {
		rec.OverlapEff = overlapEfficiency(rec.TimeUS, o.computeUS, o.totalUS)
	}
}

// overlapEfficiency is (comm + compute - total) / min(comm, compute): the
// share of the shorter of the two that running both at once hid. 1: it was
// hidden entirely (total = the longer one); 0: nothing was (total = comm +
// compute). NaN when any time is not positive or not finite.
//
// The result is held to [0, 1]. Consistent inputs are inside already: an
// overlapped iteration takes at least the longer of its parts and, hiding
// nothing, their sum. A total below the longer part is that part's noise
// (its time measured apart, a few runs of it), which, larger than the
// shorter part (a 2 µs collective beside 500 µs of compute), would read
// as tens; it counts as all hidden. A total above the sum is the two
// slowing each other, which the total column shows; nothing was hidden.
func overlapEfficiency(comm, compute, total float64) float64 {
	shorter := min(comm, compute)
	if !(shorter > 0) || !(total > 0) || math.IsInf(comm+compute+total, 0) {
		return math.NaN()
	}
	return min(max((comm+compute-total)/shorter, 0), 1)
}

// combineOverlap turns every rank's overlap samples (rank-major: iters
// overlapped iteration times, then the compute-alone time, in seconds) into
// the row's overlap result, with combine's convention: the slowest rank's
// mean.
func combineOverlap(all []float64, n, iters int) overlapResult {
	var o overlapResult
	for rk := range n {
		s := all[rk*(iters+1) : (rk+1)*(iters+1)]
		var total float64
		for _, d := range s[:iters] {
			total += d
		}
		o.totalUS = max(o.totalUS, total/float64(iters)*1e6)
		o.computeUS = max(o.computeUS, s[iters]*1e6)
	}
	// A measured row has a positive compute time (results.Record).
	o.computeUS = max(o.computeUS, 1e-3)
	return o
}

// measureOverlap measures the row whose buckets measureRow has just timed
// (own: this rank's iteration times in seconds) again, overlapped with
// compute: the compute alone, then p.Warmup untimed and p.Iters timed
// overlapped iterations, each under the op watchdog wd. Rank 0 gathers
// every rank's times and returns the result; other ranks return zero.
func (r *rankRunner) measureOverlap(ctx context.Context, comm *coll.Comm, wd *runctl.Watchdog, algo string,
	buckets []*coll.Args, own []float64) (overlapResult, error) {
	p := &r.plan
	k := r.overlapCompute()
	amount := p.Overlap
	if p.OverlapAuto {
		var sum float64
		for _, d := range own {
			sum += d
		}
		amount = time.Duration(sum / float64(len(own)) * float64(time.Second))
	}
	units := k.unitsFor(amount)

	var alone float64
	timeAlone := func() error {
		start := r.stamp()
		if err := k.alone(ctx, units); err != nil {
			return fmt.Errorf("timing the compute alone: %w", err)
		}
		alone += r.since(start).Seconds()
		return nil
	}
	iteration := func() (time.Duration, error) {
		start := r.stamp()
		for i, args := range buckets {
			share := units / len(buckets)
			if i < units%len(buckets) {
				share++
			}
			if err := overlapOne(wd, comm, algo, args, k, share, p.Timeout); err != nil {
				return 0, err
			}
		}
		return r.since(start), nil
	}
	for range p.Warmup {
		if _, err := iteration(); err != nil {
			return overlapResult{}, fmt.Errorf("warm-up: %w", err)
		}
	}
	if err := r.barrier(ctx); err != nil {
		return overlapResult{}, err
	}
	samples := make([]float64, p.Iters+1)
	for i := range p.Iters {
		if err := timeAlone(); err != nil {
			return overlapResult{}, err
		}
		d, err := iteration()
		if err != nil {
			return overlapResult{}, err
		}
		samples[i] = d.Seconds()
	}
	samples[p.Iters] = alone / float64(p.Iters)
	if err := k.check(); err != nil {
		return overlapResult{}, err
	}
	all, err := r.gatherFloats(ctx, samples)
	if err != nil || r.comm.Rank() != 0 {
		return overlapResult{}, err
	}
	o := combineOverlap(all, r.comm.Size(), p.Iters)
	o.shared = payload.ComputeShared(p.HostedRanksOrAll())
	return o, nil
}

// overlapOne starts the collective of args on comm, runs units of compute
// while it runs, and waits for it. The watchdog is armed from the start
// until the collective is seen finished (between compute slices, or when
// waited for), so that it limits the collective, never the compute. If the
// wait fails, the collective may still own the buffers: it is given up to
// timeout to end (its context is the watchdog's, which has ended), and its
// own error, which says where it stood, is preferred.
//
// In virtual time the compute runs beside the collective on the rank's
// clock: the collective is waited for first, and the clock then held to
// where the compute, begun with the collective, would end.
func overlapOne(wd *runctl.Watchdog, comm *coll.Comm, algo string, args *coll.Args, k overlapCompute, units int,
	timeout time.Duration) error {
	wd.ArmNow()
	var begun time.Duration
	if k.load == nil {
		begun = k.clock.Now()
	}
	pending := comm.Start(wd.Context(), algo, args)
	armed := true
	var computeErr error
	if k.load != nil {
		computeErr = k.load.RunSliced(wd.Context(), units, func() {
			if !armed {
				return
			}
			select {
			case <-pending.Done():
				wd.Disarm()
				armed = false
			default:
			}
		})
	}
	_, err := pending.Wait(wd.Context())
	wd.Disarm()
	if err != nil {
		t := time.NewTimer(timeout)
		defer t.Stop()
		select {
		case <-pending.Done():
			if _, own := pending.Wait(wd.Context()); own != nil {
				err = own
			}
		case <-t.C:
			err = fmt.Errorf("%w (and the collective had not ended %v later)", err, timeout)
		}
		return err
	}
	if k.load == nil {
		k.clock.HoldUntil(begun + time.Duration(units))
	}
	return computeErr
}

// overlapCompute is the compute --overlap runs: the synthetic load on the
// wall clock, or on a backend in virtual time (sim) holds of the rank's
// clock, in units of a nanosecond.
type overlapCompute struct {
	load  *payload.ComputeLoad // nil in virtual time
	clock runctl.VirtualClock
}

// overlapCompute returns the compute for this rank's backend.
func (r *rankRunner) overlapCompute() overlapCompute {
	if v, ok := runctl.VirtualClockOf(r.comm.Transport()); ok {
		return overlapCompute{clock: v}
	}
	return overlapCompute{load: payload.NewComputeLoad(payload.ComputeUnitFor(computeRanks(&r.plan)))}
}

// computeRanks returns how many ranks of this process compute at once: every
// hosted rank on a backend whose ranks share the process, else one (ranks
// of other processes on the host calibrate in their own).
func computeRanks(p *Plan) int {
	if p.Caps().InProcess {
		return p.HostedRanksOrAll()
	}
	return 1
}

// unitsFor returns how many units of compute take about d.
func (k overlapCompute) unitsFor(d time.Duration) int {
	if k.load == nil {
		return int(d)
	}
	return k.load.UnitsFor(d)
}

// alone runs units of compute with nothing else.
func (k overlapCompute) alone(ctx context.Context, units int) error {
	if k.load == nil {
		k.clock.Hold(time.Duration(units))
		return nil
	}
	return k.load.RunSliced(ctx, units, nil)
}

// check reports a synthetic compute that went wrong: never, but it keeps
// the compute's result observable, so that it cannot be optimised away.
func (k overlapCompute) check() error {
	if k.load != nil && k.load.Result() <= 0 {
		return fmt.Errorf("synthetic compute went wrong (%v)", k.load.Result())
	}
	return nil
}
