package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/hccl-test/hccl-test/internal/memguard"
	"github.com/hccl-test/hccl-test/internal/syslimits"
)

// guardMemory watches this process's resident memory against estimate
// (the run's, from bench.Plan.Memory) while the run of the returned
// context lasts: past it by the guard's margin the run is cancelled, and
// a run that does not end soon after is ended here, with one line on
// stderr and exit 1, rather than by the kernel's out-of-memory killer. The
// guard stops the run short of the room a memory cgroup or RLIMIT_AS left
// when that comes first (memguard.Config.Ceiling).
// Call stop when the run has ended.
func guardMemory(ctx context.Context, estimate int64, stderr io.Writer, prefix string) (context.Context, func()) {
	return memguard.Watch(ctx, memguard.Config{
		Estimate: estimate,
		Ceiling:  ceiling(syslimits.Read()),
		GoLimit:  true,
		Stuck: func(e *memguard.Exceeded) {
			fmt.Fprintf(stderr, "%s: %v\n", prefix, e)
			flushBriefly(stderr)
			os.Exit(exitFailed)
		},
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

// flushBriefly waits up to a second for w, when it is one of the
// outputSet's writers (which write in the background), to write what it
// holds: the process is about to exit, and the line that says why went
// with it unwritten (a simulated sweep at 1024 ranks ended with exit 1
// and nothing on stderr). A stderr nobody reads does not hold the exit.
func flushBriefly(w io.Writer) {
	o, ok := w.(*outWriter)
	if !ok {
		return
	}
	done := make(chan struct{})
	go func() {
		o.drain()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(time.Second):
	}
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
