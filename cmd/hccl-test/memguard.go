package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/hccl-test/hccl-test/internal/memguard"
)

// guardMemory watches this process's resident memory against estimate
// (the run's, from bench.Plan.Memory) while the run of the returned
// context lasts: past it by the guard's margin the run is cancelled, and
// a run that does not end soon after is ended here, with one line on
// stderr and exit 1, rather than by the kernel's out-of-memory killer.
// Call stop when the run has ended.
func guardMemory(ctx context.Context, estimate int64, stderr io.Writer, prefix string) (context.Context, func()) {
	return memguard.Watch(ctx, memguard.Config{
		Estimate: estimate,
		GoLimit:  true,
		Stuck: func(e *memguard.Exceeded) {
			fmt.Fprintf(stderr, "%s: %v\n", prefix, e)
			os.Exit(exitFailed)
		},
	})
}

// memoryStopped reports, with its one line on stderr, whether the guard of
// guardMemory stopped the run of ctx.
func memoryStopped(ctx context.Context, stderr io.Writer, prefix string) bool {
	e := memguard.Cause(ctx)
	if e == nil {
		return false
	}
	fmt.Fprintf(stderr, "%s: %v\n", prefix, e)
	return true
}
