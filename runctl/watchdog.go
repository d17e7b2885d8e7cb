package runctl

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/hccl-test/hccl-test/backends"
)

// Watchdog limits each op of a row to the plan's timeout. A
// context.WithTimeout per op costs about a microsecond, and re-arming a
// timer per op a few hundred nanoseconds, which 1 KiB ops would measure;
// instead the op's start is stored in an atomic, and one goroutine per row
// looks at it every watchPeriod. An op that overruns ends the row's
// context with a cause that wraps ErrTimeout, so it fails as it would at a
// deadline, at most two periods late (200 ms at most). ArmNow reads no clock
// at all (a reading costs 70-90 ns on some virtual machines, per op): it
// stores a fresh token, and the watchdog times the token from the first
// tick that sees it, which is at most a period after the op started.

type Watchdog struct {
	ctx    context.Context
	cancel context.CancelCauseFunc
	base   time.Time
	// started is the running op's start, in nanoseconds after base plus
	// one (Arm), or minus the op's token (ArmNow); 0 between ops.
	started atomic.Int64
	// tokens counts the ops ArmNow armed.
	tokens atomic.Int64
	quit   chan struct{}
}

// NewWatchdog starts a watchdog over a context derived from parent that
// fails an op running longer than timeout; Stop ends it.
func NewWatchdog(parent context.Context, timeout time.Duration) *Watchdog {
	ctx, cancel := context.WithCancelCause(parent)
	w := &Watchdog{ctx: ctx, cancel: cancel, base: time.Now(), quit: make(chan struct{})}
	period := watchPeriod(timeout)
	go func() {
		tick := time.NewTicker(period)
		defer tick.Stop()
		// The token ArmNow stored that the ticks have seen, and when the
		// first of them saw it.
		var token int64
		var seen time.Time
		for {
			select {
			case <-w.quit:
				return
			case <-ctx.Done():
				return
			case now := <-tick.C:
				s := w.started.Load()
				if s < 0 && s != token {
					token, seen = s, now
				}
				if s < 0 && now.Sub(seen) > timeout || s > 0 && now.Sub(w.base)-time.Duration(s-1) > timeout {
					cancel(fmt.Errorf("%w: one op took longer than %v", backends.ErrTimeout, timeout))
					return
				}
			}
		}
	}()
	return w
}

// maxWatchPeriod bounds the watchdog's period: an op is ended at most two
// periods after its time limit (one before a tick sees an op ArmNow armed,
// one between ticks), and a run whose rank stopped must end within a
// second of -T, which timeout/8 (1.25 s late at -T 5s) did not. Ten
// ticks a second cost nothing a run measures.
const maxWatchPeriod = 100 * time.Millisecond

// watchPeriod is how often a watchdog over ops of timeout looks at the
// running op: an eighth of the timeout, from 1 ms to maxWatchPeriod.
func watchPeriod(timeout time.Duration) time.Duration {
	return min(max(timeout/8, time.Millisecond), maxWatchPeriod)
}

// Arm starts the clock of an op that started at start.
func (w *Watchdog) Arm(start time.Time) { w.started.Store(int64(start.Sub(w.base)) + 1) }

// ArmNow starts the clock of an op that starts now, without reading the
// clock: the watchdog counts the op's time from the first tick that sees
// it, so that it ends an op that overran the timeout no earlier than Arm
// would, and at most a tick period (watchPeriod) later.
func (w *Watchdog) ArmNow() { w.started.Store(-w.tokens.Add(1)) }

// Disarm stops the clock between ops, so that waiting elsewhere (at a
// barrier) never counts against an op.
func (w *Watchdog) Disarm() { w.started.Store(0) }

// Stop ends the watch and releases the context.
func (w *Watchdog) Stop() {
	close(w.quit)
	w.cancel(nil)
}

// Context returns the context of the ops the watchdog limits: it ends with
// a cause that wraps backends.ErrTimeout when one op overruns.
func (w *Watchdog) Context() context.Context { return w.ctx }
