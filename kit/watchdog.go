package bench

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/hccl-test/hccl-test/backends"
)

// opWatchdog limits each op of a row to the plan's timeout. A
// context.WithTimeout per op costs about a microsecond, and re-arming a
// timer per op a few hundred nanoseconds, which 1 KiB ops would measure;
// instead the op's start is stored in an atomic, and one goroutine per row
// looks at it every timeout/8. An op that overruns ends the row's context
// with a cause that wraps ErrTimeout, so it fails as it would at a
// deadline, at most an eighth of the timeout late.
type opWatchdog struct {
	ctx    context.Context
	cancel context.CancelCauseFunc
	base   time.Time
	// started is the running op's start, in nanoseconds after base plus
	// one; 0 between ops.
	started atomic.Int64
	quit    chan struct{}
}

func newOpWatchdog(parent context.Context, timeout time.Duration) *opWatchdog {
	ctx, cancel := context.WithCancelCause(parent)
	w := &opWatchdog{ctx: ctx, cancel: cancel, base: time.Now(), quit: make(chan struct{})}
	period := max(timeout/8, time.Millisecond)
	go func() {
		tick := time.NewTicker(period)
		defer tick.Stop()
		for {
			select {
			case <-w.quit:
				return
			case <-ctx.Done():
				return
			case now := <-tick.C:
				s := w.started.Load()
				if s != 0 && now.Sub(w.base)-time.Duration(s-1) > timeout {
					cancel(fmt.Errorf("%w: one op took longer than %v", backends.ErrTimeout, timeout))
					return
				}
			}
		}
	}()
	return w
}

// arm starts the clock of an op that started at start.
func (w *opWatchdog) arm(start time.Time) { w.started.Store(int64(start.Sub(w.base)) + 1) }

// disarm stops the clock between ops, so that waiting elsewhere (at a
// barrier) never counts against an op.
func (w *opWatchdog) disarm() { w.started.Store(0) }

// stop ends the watch and releases the context.
func (w *opWatchdog) stop() {
	close(w.quit)
	w.cancel(nil)
}
