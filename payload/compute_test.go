package payload

import (
	"context"
	"errors"
	"math"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/hccl-test/hccl-test/internal/wallbound"
	"golang.org/x/sys/unix"
)

// TestComputeUnitsFor turns durations into units with a known unit time.
func TestComputeUnitsFor(t *testing.T) {
	k := NewComputeLoad(1e-6) // one unit per microsecond
	for _, tc := range []struct {
		d    time.Duration
		want int
	}{
		{0, 0},
		{-time.Second, 0},
		{time.Nanosecond, 1},
		{time.Microsecond, 1},
		{1500 * time.Nanosecond, 2},
		{2 * time.Millisecond, 2000},
		{time.Minute, 60_000_000},
	} {
		if got := k.UnitsFor(tc.d); got != tc.want {
			t.Errorf("unitsFor(%v) = %d, want %d", tc.d, got, tc.want)
		}
	}
}

// TestComputeCalibrated checks that the units for a duration, run alone,
// take about that long. The bounds are generous: this runs on shared,
// noisy machines, under the race detector too.
func TestComputeCalibrated(t *testing.T) {
	perUnit := ComputeUnit()
	if !(perUnit > 0) || perUnit > 1e-3 {
		t.Fatalf("calibrated %v s per unit", perUnit)
	}
	k := NewComputeLoad(perUnit)
	for _, tc := range []struct {
		name   string
		d      time.Duration
		lo, hi time.Duration
	}{
		{"2ms", 2 * time.Millisecond, 200 * time.Microsecond, 20 * time.Millisecond},
		{"10ms", 10 * time.Millisecond, time.Millisecond, 100 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Other work on the host stretches the run's wall time (under
			// a CPU hog, tens of times): the thread's CPU time is what the
			// calibration must match; one of five tries, each calibrated
			// afresh, must land within the bounds.
			var took []time.Duration
			for range 5 {
				k = NewComputeLoad(ComputeUnit())
				_, cpu := timeRun(t, func() { k.Run(k.UnitsFor(tc.d)) })
				if cpu >= tc.lo && cpu <= tc.hi {
					return
				}
				took = append(took, cpu)
			}
			t.Errorf("the units for %v took %v of CPU time alone, calibrated afresh each time (want %v to %v)", tc.d, took, tc.lo, tc.hi)
		})
	}
	if r := k.Result(); !(r > 0) || math.IsInf(r, 0) {
		t.Errorf("result %v: want finite and positive", r)
	}
}

// TestComputeSliced runs the load in slices: every slice calls back, and
// an ended context stops it early with its cause.
func TestComputeSliced(t *testing.T) {
	k := NewComputeLoad(ComputeUnit())
	units := k.UnitsFor(time.Millisecond)
	calls := 0
	if err := k.RunSliced(context.Background(), units, func() { calls++ }); err != nil {
		t.Fatal(err)
	}
	if want := units / k.UnitsFor(computeSlice); calls < want {
		t.Errorf("%d calls between slices, want at least %d", calls, want)
	}
	cause := errors.New("stop")
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(cause)
	// A cancelled minute of load stops within a slice: bounded by slack
	// over one slice run now (wallbound), not by a time.
	base := wallbound.Baseline(func() { _ = k.RunSliced(context.Background(), k.UnitsFor(computeSlice), nil) })
	start := time.Now()
	err := k.RunSliced(ctx, k.UnitsFor(time.Minute), nil)
	if !errors.Is(err, cause) {
		t.Errorf("got %v, want the context's cause", err)
	}
	if d, bound := time.Since(start), wallbound.Bound(0, base); d > bound {
		t.Errorf("a cancelled load ran for %v (a slice takes %v)", d, base)
	}
}

// TestComputeUnitForShared calibrates with more loads at once than the
// process has threads for Go code: each unit takes longer (about the
// loads per thread times; the bound is generous), and as many loads
// running the units for a duration at once end in about that time on an
// idle host: their threads' CPU time together, spread over the threads for
// Go code, is about that duration.
func TestComputeUnitForShared(t *testing.T) {
	procs := runtime.GOMAXPROCS(0)
	n := 2 * procs
	one, shared := ComputeUnitFor(1), ComputeUnitFor(n)
	if !(shared > 1.3*one) {
		t.Errorf("a unit takes %v s with one load, %v s with %d at once: want longer", one, shared, n)
	}
	if !ComputeShared(runtime.NumCPU()+1) || ComputeShared(runtime.NumCPU()) {
		t.Errorf("ComputeShared wrong around %d cores", runtime.NumCPU())
	}
	// Other work on the host stretches the loads' wall time (under a CPU
	// hog, tens of times) but not the CPU time they use; one of five tries
	// must land within the bounds.
	d := 5 * time.Millisecond
	var took []time.Duration
	for range 5 {
		var wg sync.WaitGroup
		cpus := make([]time.Duration, n)
		errs := make([]error, n)
		for i := range n {
			k := NewComputeLoad(shared)
			wg.Go(func() {
				cpus[i], errs[i] = threadCPU(func() { _ = k.RunSliced(context.Background(), k.UnitsFor(d), nil) })
			})
		}
		wg.Wait()
		var cpu time.Duration
		for i := range n {
			if errs[i] != nil {
				t.Skipf("no thread CPU clock: %v", errs[i])
			}
			cpu += cpus[i]
		}
		idle := cpu / time.Duration(procs)
		if idle >= d/5 && idle <= 10*d {
			return
		}
		took = append(took, idle)
	}
	t.Errorf("%d loads of %v at once took %v of CPU time per thread for Go code in 5 tries (want %v to %v)", n, d, took, d/5, 10*d)
}

// threadCPU runs f on a thread of its own and returns the thread's CPU
// time it took.
func threadCPU(f func()) (time.Duration, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var c0, c1 unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &c0); err != nil {
		return 0, err
	}
	f()
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &c1); err != nil {
		return 0, err
	}
	return time.Duration(c1.Nano() - c0.Nano()), nil
}

// timeRun runs f on a thread of its own and returns the wall time and the
// thread's CPU time it took.
func timeRun(t *testing.T, f func()) (wall, cpu time.Duration) {
	t.Helper()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var c0, c1 unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &c0); err != nil {
		t.Skipf("no thread CPU clock: %v", err)
	}
	start := time.Now()
	f()
	wall = time.Since(start)
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &c1); err != nil {
		t.Skipf("no thread CPU clock: %v", err)
	}
	return wall, time.Duration(c1.Nano() - c0.Nano())
}
