package payload

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"sync"
	"time"
)

// The synthetic compute of --overlap is work, not a clock: multiply-adds of
// float64s over an array small enough to stay in any L1 data cache, so that
// it measures a core's arithmetic and, when it shares the core with
// communication, gets slower, as real compute does. One unit is one pass
// over the array. How long a unit takes is calibrated once per process
// (ComputeUnit): over tcp that is once per rank; the ranks of shm, which
// share the process, share its cores and the one calibration.
const (
	// computeLen is the number of float64s the load works on: 2 KiB.
	computeLen = 256
	// computeCalTarget is the least time one calibration run lasts; the
	// units per run double until a run takes that long.
	computeCalTarget = time.Millisecond
	// computeCalRuns is how many calibration runs of that many units are
	// timed; the fastest counts, being the least disturbed.
	computeCalRuns = 5
	// computeSlice is about how long the load runs between two looks
	// outside (runSliced).
	computeSlice = 50 * time.Microsecond
	// computeMul and computeAdd make x = x*computeMul + computeAdd converge
	// to computeAdd/(1-computeMul) = 10 from any start in range, so the
	// values stay normal numbers (no denormal slow path) for ever.
	computeMul, computeAdd = 0.9999, 0.001
)

// ComputeLoad is one rank's synthetic compute: its own array (ranks never
// share one) and the calibrated time of a unit.
type ComputeLoad struct {
	PerUnit float64 // seconds one unit takes alone, as calibrated
	x       [computeLen]float64
	// sum accumulates a value of the array after every run, so that the
	// result is observable and no compiler can drop the loop.
	sum float64
}

// NewComputeLoad returns a load whose units take perUnit seconds each.
func NewComputeLoad(perUnit float64) *ComputeLoad {
	k := &ComputeLoad{PerUnit: perUnit}
	for i := range k.x {
		k.x[i] = float64(i)
	}
	return k
}

// Run does units units of work.
func (k *ComputeLoad) Run(units int) {
	x := &k.x
	for range units {
		for i := range x {
			x[i] = x[i]*computeMul + computeAdd
		}
	}
	k.sum += x[units%computeLen]
}

// Result is the observable outcome of every run so far: finite and
// positive.
func (k *ComputeLoad) Result() float64 { return k.sum }

// UnitsFor returns how many units take d when the load runs alone: 0 for
// d <= 0, else at least 1.
func (k *ComputeLoad) UnitsFor(d time.Duration) int {
	if d <= 0 {
		return 0
	}
	// Rounding up, but not past a quotient that is whole but for the
	// rounding error of the division.
	u := math.Ceil(d.Seconds() / k.PerUnit * (1 - 1e-12))
	return int(min(max(u, 1), math.MaxInt32))
}

// RunSliced does units units of work in slices of about computeSlice.
// Between slices it yields the processor, as a thread that the operating
// system preempts would (Go itself preempts a running goroutine only after
// 10 ms, which would keep a communication goroutine that is ready to run
// waiting far longer than a kernel does), then calls between if not nil,
// and gives up, returning ctx's error, once ctx has ended.
func (k *ComputeLoad) RunSliced(ctx context.Context, units int, between func()) error {
	slice := k.UnitsFor(computeSlice)
	done := ctx.Done()
	for units > 0 {
		n := min(units, slice)
		k.Run(n)
		units -= n
		runtime.Gosched()
		if between != nil {
			between()
		}
		select {
		case <-done:
			return fmt.Errorf("synthetic compute stopped with %d units to go: %w", units, context.Cause(ctx))
		default:
		}
	}
	return nil
}

// calibrateCompute measures how long one unit of the load takes when at
// once ranks loads run it, each on its own array and yielding between
// slices as RunSliced does: the units of a run double until ranks runs at
// once last computeCalTarget, then computeCalRuns such rounds are timed and
// the fastest counts. It returns seconds per unit, as one rank sees it
// while every other rank it shares the process with computes too: ranks
// that outnumber the cores share them, and each one's unit takes longer.
func calibrateCompute(ranks int) float64 {
	ranks = max(ranks, 1)
	loads := make([]*ComputeLoad, ranks)
	for i := range loads {
		loads[i] = NewComputeLoad(1)
	}
	timed := func(units int) time.Duration {
		var wg sync.WaitGroup
		start := time.Now()
		for _, k := range loads {
			wg.Go(func() { k.runYielding(units) })
		}
		wg.Wait()
		return time.Since(start)
	}
	units := 16
	for units < 1<<30 && timed(units) < computeCalTarget {
		units *= 2
	}
	best := time.Duration(math.MaxInt64)
	for range computeCalRuns {
		best = min(best, timed(units))
	}
	return max(best.Seconds(), 1e-9) / float64(units)
}

// runYielding does units units of work in slices of computeCalSlice units,
// yielding the processor between them, as RunSliced does but before the
// time of a unit is known.
func (k *ComputeLoad) runYielding(units int) {
	for units > 0 {
		n := min(units, computeCalSlice)
		k.Run(n)
		units -= n
		runtime.Gosched()
	}
}

// computeCalSlice is how many units a calibrating load runs between two
// yields: about computeSlice on a core of a few GFLOPS.
const computeCalSlice = 256

var (
	computeUnitMu sync.Mutex
	computeUnits  = map[int]float64{}
)

// ComputeUnitFor returns the seconds one unit of the load takes on this
// machine while ranks ranks of this process compute at once, calibrating on
// the first call for that count (a few milliseconds) and remembering the
// answer. Ranks that ask at the same time wait for the one that measures,
// and so leave it the cores to itself.
func ComputeUnitFor(ranks int) float64 {
	ranks = max(ranks, 1)
	computeUnitMu.Lock()
	defer computeUnitMu.Unlock()
	if u, ok := computeUnits[ranks]; ok {
		return u
	}
	u := calibrateCompute(ranks)
	computeUnits[ranks] = u
	return u
}

// ComputeUnit returns the seconds one unit of the load takes on this
// machine with one rank computing: ComputeUnitFor(1).
func ComputeUnit() float64 { return ComputeUnitFor(1) }

// ComputeShared reports whether ranks ranks computing at once on this
// machine outnumber its cores, so that compute and communication share
// CPUs and how much of one the other hides cannot be measured.
func ComputeShared(ranks int) bool { return ranks > runtime.NumCPU() }
