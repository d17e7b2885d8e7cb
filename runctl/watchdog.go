package runctl

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hccl-test/hccl-test/backends"
)

// Watchdog limits each op of a row to the plan's timeout. A
// context.WithTimeout per op costs about a microsecond, and re-arming a
// timer per op a few hundred nanoseconds, which 1 KiB ops would measure;
// instead the op's start is stored in an atomic, and one goroutine (for
// every watchdog of the same period) looks at it every watchPeriod. An op
// that overruns ends the row's context with a cause that wraps
// ErrTimeout, so it fails as it would at a deadline, at most two periods late (200 ms at most). ArmNow reads no clock
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
	tokens  atomic.Int64
	timeout time.Duration
	// token is the token ArmNow stored that the ticks have seen, and seen
	// when the first of them saw it; only the ticking goroutine uses them.
	token int64
	seen  time.Time
	h     *watchHub
	slot  int // w's index in h.dogs; guarded by hubs.mu
}

// The watchdogs of one period share one ticking goroutine (a watchHub):
// an in-process world runs a watchdog per rank and row, and a ticker and
// goroutine each, at ten ticks a second, cost a simulated world of 16384
// ranks more CPU than its calls (a third of a sweep's, profiled); one
// ticker looks at every watchdog in a pass over their atomics.

// watchHub is the watchdogs of one period and the goroutine that ticks
// for them while there are any.
type watchHub struct {
	period time.Duration
	// dogs are the hub's watchdogs, each at its slot; guarded by hubs.mu.
	// A slice, not a set: a tick copies it in one move where a map's
	// iteration over 16384 watchdogs (a rank's for its whole sweep) cost
	// a simulated world a third of a CPU-second.
	dogs []*Watchdog
	quit chan struct{} // closed when the hub has no watchdog left
}

// hubs holds the running hubs by period.
var hubs struct {
	mu sync.Mutex
	m  map[time.Duration]*watchHub
}

// NewWatchdog starts a watchdog over a context derived from parent that
// fails an op running longer than timeout; Stop ends it.
func NewWatchdog(parent context.Context, timeout time.Duration) *Watchdog {
	ctx, cancel := context.WithCancelCause(parent)
	w := &Watchdog{ctx: ctx, cancel: cancel, base: time.Now(), timeout: timeout}
	period := watchPeriod(timeout)
	hubs.mu.Lock()
	defer hubs.mu.Unlock()
	h := hubs.m[period]
	if h == nil {
		h = &watchHub{period: period, quit: make(chan struct{})}
		if hubs.m == nil {
			hubs.m = map[time.Duration]*watchHub{}
		}
		hubs.m[period] = h
		go h.run()
	}
	w.h, w.slot = h, len(h.dogs)
	h.dogs = append(h.dogs, w)
	return w
}

// run ticks every period until the hub has no watchdog left, and at each
// tick ends the ops that overran.
func (h *watchHub) run() {
	tick := time.NewTicker(h.period)
	defer tick.Stop()
	var dogs []*Watchdog
	for {
		select {
		case <-h.quit:
			return
		case now := <-tick.C:
			hubs.mu.Lock()
			dogs = append(dogs[:0], h.dogs...)
			hubs.mu.Unlock()
			for _, w := range dogs {
				w.check(now)
			}
			clear(dogs)
		}
	}
}

// check ends the watched op if it has run longer than the timeout at now
// (again, if it ended before: a cancel of an ended context does nothing).
func (w *Watchdog) check(now time.Time) {
	s := w.started.Load()
	if s < 0 && s != w.token {
		w.token, w.seen = s, now
	}
	if s < 0 && now.Sub(w.seen) > w.timeout || s > 0 && now.Sub(w.base)-time.Duration(s-1) > w.timeout {
		w.cancel(fmt.Errorf("%w: one op took longer than %v", backends.ErrTimeout, w.timeout))
	}
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
	hubs.mu.Lock()
	if h := w.h; h != nil {
		// The last watchdog takes w's slot.
		last := h.dogs[len(h.dogs)-1]
		h.dogs[w.slot], last.slot = last, w.slot
		h.dogs[len(h.dogs)-1] = nil
		h.dogs = h.dogs[:len(h.dogs)-1]
		if len(h.dogs) == 0 {
			close(h.quit)
			delete(hubs.m, h.period)
		}
		w.h = nil
	}
	hubs.mu.Unlock()
	w.cancel(nil)
}

// Context returns the context of the ops the watchdog limits: it ends with
// a cause that wraps backends.ErrTimeout when one op overruns.
func (w *Watchdog) Context() context.Context { return w.ctx }
