// Package memguard stops a run whose resident memory passes what it was
// estimated to need, with an error of its own, before the kernel's
// out-of-memory killer ends the process without a word.
//
// A watcher samples the process's resident set a few times a second. When
// it passes the limit (what the process held when the watch began, plus
// the estimate and a margin), the watcher cancels the run's context with an
// *Exceeded cause, which the run ends on like any cancellation; if the run
// has not ended Grace later (a loop that allocates without looking at its
// context), Stuck is called, which can end the process.
package memguard

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hccl-test/hccl-test/internal/limits"
)

// Exceeded is the cause of a run stopped by the guard.
type Exceeded struct {
	Resident int64 // the resident size sampled, bytes
	Estimate int64 // what the run was estimated to need
	Limit    int64 // the resident size the guard stops at
	Start    int64 // the resident size when the watch began
	// Ceiling is Config.Ceiling when the limit came from it (the
	// system's limit came before the estimate's), else 0.
	Ceiling int64
}

// Error names the resident size, the estimate and the limit, on one line.
func (e *Exceeded) Error() string {
	if e.Ceiling > 0 {
		return fmt.Sprintf("resident memory %s passed the limit of %s (%s at the start, and the %s a memory cgroup or ulimit -v left, less a margin): stopped before the kernel ends the process; use a smaller -e or fewer ranks",
			limits.HumanBytes(e.Resident), limits.HumanBytes(e.Limit), limits.HumanBytes(e.Start), limits.HumanBytes(e.Ceiling))
	}
	return fmt.Sprintf("resident memory %s passed the limit of %s (%s at the start, and the run's estimate of %s with margin): stopped before the system runs out; the estimate (--dry-run) is wrong, please report it",
		limits.HumanBytes(e.Resident), limits.HumanBytes(e.Limit), limits.HumanBytes(e.Start), limits.HumanBytes(e.Estimate))
}

// Config says what the guard watches.
type Config struct {
	// Estimate is what the run was estimated to need, in bytes; 0 or
	// less turns the guard off.
	Estimate int64
	// Limit is how much the resident size may grow past what it was
	// when the watch began before the run is stopped; 0 takes
	// DefaultLimit(Estimate). The estimate counts the process itself, so
	// in a process of its own a run is allowed that much twice over; a
	// process that ran other work before (a test) is not charged for it.
	Limit int64
	// Every is the time between two samples; 0 takes 50 ms.
	Every time.Duration
	// Grace is how long the run has to end once cancelled before Stuck
	// is called; 0 takes 3 s.
	Grace time.Duration
	// Resident samples the resident size; nil reads this process's
	// (Resident).
	Resident func() (int64, error)
	// Stuck, if set, is called once, on the watcher's goroutine, when
	// the run has not ended Grace after the guard cancelled it, and
	// should end the process.
	Stuck func(*Exceeded)
	// Ceiling, if positive, is how much the resident size may grow before
	// a limit of the system acts (the room a memory cgroup leaves, or
	// RLIMIT_AS's): the guard stops the run CeilingMargin short of it when
	// that comes before Limit, so that the kernel's out-of-memory killer
	// never does.
	Ceiling int64
	// GoLimit, if set, also makes the Go runtime collect garbage harder
	// as its own memory nears Limit (debug.SetMemoryLimit), until the
	// watch stops.
	GoLimit bool
}

// DefaultLimit is the resident size a run estimated to need estimate bytes
// is stopped at: half as much again, and at least 256 MiB more, since the
// estimate is of what the run allocates, not of what the runtime and the
// kernel add to it.
func DefaultLimit(estimate int64) int64 {
	margin := max(estimate/2, 256<<20)
	if estimate > math.MaxInt64-margin {
		return math.MaxInt64
	}
	return estimate + margin
}

// CeilingMargin is how far short of a system's limit of ceiling bytes the
// guard stops a run: a sixteenth, and at least 32 MiB, for what the kernel
// charges besides the resident pages (page tables, socket buffers, the page
// cache of outputs) and what grows between two samples.
func CeilingMargin(ceiling int64) int64 { return max(ceiling/16, 32<<20) }

// Watch starts the guard on a context derived from ctx, which it cancels
// with an *Exceeded cause when the resident size passes the limit. The run
// must use the returned context, and call stop when it has ended; stop
// ends the watcher and waits for it.
func Watch(ctx context.Context, cfg Config) (context.Context, func()) {
	if cfg.Estimate <= 0 {
		return ctx, func() {}
	}
	if cfg.Limit <= 0 {
		cfg.Limit = DefaultLimit(cfg.Estimate)
	}
	if cfg.Every <= 0 {
		cfg.Every = 50 * time.Millisecond
	}
	if cfg.Grace <= 0 {
		cfg.Grace = 3 * time.Second
	}
	if cfg.Resident == nil {
		cfg.Resident = Resident
	}
	start, err := cfg.Resident()
	if err != nil {
		start = 0
	}
	limit, ceiling := cfg.Limit, int64(0)
	if c := max(cfg.Ceiling-CeilingMargin(cfg.Ceiling), 1); cfg.Ceiling > 0 && c < limit {
		limit, ceiling = c, cfg.Ceiling
	}
	if limit < math.MaxInt64-start {
		limit += start
	}
	gctx, stop := watch(ctx, cfg, start, limit, ceiling)
	if !cfg.GoLimit {
		return gctx, stop
	}
	old := debug.SetMemoryLimit(limit)
	return gctx, func() {
		stop()
		debug.SetMemoryLimit(old)
	}
}

// watch runs the watcher of Watch.
// It stops the run past limit, the resident size start plus cfg.Limit (or
// the ceiling less its margin, when ceiling is not 0).
func watch(ctx context.Context, cfg Config, start, limit, ceiling int64) (context.Context, func()) {
	gctx, cancel := context.WithCancelCause(ctx)
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(cfg.Every)
		defer tick.Stop()
		var over *Exceeded
		var stuck <-chan time.Time
		for {
			select {
			case <-done:
				return
			case <-stuck:
				if cfg.Stuck != nil {
					cfg.Stuck(over)
				}
				stuck = nil
			case <-tick.C:
				if over != nil {
					continue
				}
				rss, err := cfg.Resident()
				if err != nil || rss <= limit {
					continue
				}
				over = &Exceeded{Resident: rss, Estimate: cfg.Estimate, Limit: limit, Start: start, Ceiling: ceiling}
				cancel(over)
				timer := time.NewTimer(cfg.Grace)
				defer timer.Stop()
				stuck = timer.C
			}
		}
	}()
	var once sync.Once
	return gctx, func() {
		once.Do(func() {
			close(done)
			wg.Wait()
			cancel(nil)
		})
	}
}

// Cause returns the guard's *Exceeded if it stopped the run of ctx (a
// context from Watch, or one derived from it), nil otherwise.
func Cause(ctx context.Context) *Exceeded {
	var e *Exceeded
	if errors.As(context.Cause(ctx), &e) {
		return e
	}
	return nil
}

// ownShared is the function SetOwnShared installed, nil for none.
var ownShared atomic.Pointer[func() int64]

// SetOwnShared tells Resident, in the whole process, how many bytes of
// shared memory this process allocated itself (own reports it, and is
// called at every sample), until the returned function puts the previous
// one back. Resident then counts them and the private pages, rather than
// every shared page mapped, which includes other processes' memory that
// this one maps (proc's ranks read each other's buffers).
func SetOwnShared(own func() int64) (restore func()) {
	prev := ownShared.Swap(&own)
	return func() { ownShared.Store(prev) }
}
