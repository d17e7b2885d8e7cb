package main

import (
	"context"

	"github.com/hccl-test/hccl-test/internal/memguard"
	"github.com/hccl-test/hccl-test/internal/syslimits"
)

// guardMemory watches this process's resident memory against estimate
// (the run's, from bench.Plan.Memory) while the run of the returned
// context lasts: past it by the guard's margin the run is cancelled, and
// a run that does not end soon after is ended here through set's one way
// out (outputSet.stopNow: the rows measured reach the outputs, one line on
// stderr, exit 1), rather than by the kernel's out-of-memory killer. The
// guard stops the run short of the room a memory cgroup or RLIMIT_AS left
// when that comes first (memguard.Config.Ceiling).
// Call stop when the run has ended.
func guardMemory(ctx context.Context, estimate int64, set *outputSet) (context.Context, func()) {
	return memguard.Watch(ctx, memguard.Config{
		Estimate: estimate,
		Ceiling:  ceiling(syslimits.Read()),
		GoLimit:  true,
		Stuck:    guardStuck(set),
	})
}

// ceiling returns the room the tighter of a memory cgroup and RLIMIT_AS
// leaves now, 0 for none; the free memory of the machine (MemAvailable) is
// left out, since the kernel reclaims caches for it before it kills.
func ceiling(l syslimits.Limits) int64 {
	var c int64
	for _, b := range []syslimits.Bound{l.Cgroup, l.AddressSpace} {
		if b.Set && (c == 0 || b.Room < c) {
			c = max(b.Room, 1)
		}
	}
	return c
}

// guardStuck is what the guard calls when a run it cancelled did not end:
// the process ends through set's one way out.
func guardStuck(set *outputSet) func(*memguard.Exceeded) {
	return func(e *memguard.Exceeded) { set.stopNow(stopCause{kind: stopMemory, err: e}) }
}

// memoryStopped reports whether the guard of guardMemory stopped the run
// of ctx, and if so records it in set as the run's stop cause, whose line
// finish prints.
func memoryStopped(ctx context.Context, set *outputSet) bool {
	e := memguard.Cause(ctx)
	if e == nil {
		return false
	}
	set.stop(stopCause{kind: stopMemory, err: e})
	return true
}
