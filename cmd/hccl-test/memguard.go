package main

import (
	"context"

	"github.com/hccl-test/hccl-test/internal/memguard"
)

// guardMemory watches this process's resident memory against estimate
// (the run's, from bench.Plan.Memory) while the run of the returned
// context lasts: past it by the guard's margin the run is cancelled, and
// a run that does not end soon after is ended here through set's one way
// out (outputSet.stopNow: the rows measured reach the outputs, one line on
// stderr, exit 1), rather than by the kernel's out-of-memory killer.
// Call stop when the run has ended.
func guardMemory(ctx context.Context, estimate int64, set *outputSet) (context.Context, func()) {
	return memguard.Watch(ctx, memguard.Config{
		Estimate: estimate,
		GoLimit:  true,
		Stuck:    guardStuck(set),
	})
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
