package inject

import (
	"context"
	"fmt"
	"runtime"
	"time"

	"github.com/hccl-test/hccl-test/backends"
)

// charge adds d, a hold that fault f makes (of what, "the send to rank
// 3"), to the current call's, and fails when the call's holds alone now
// exceed the op's time limit: the call could only time out, and on a
// backend in virtual time (sim) nothing else would bound it.
func (w *transport) charge(d time.Duration, f Fault, what string) error {
	w.held += d
	if w.limit > 0 && w.held > w.limit {
		return injected{fmt.Errorf("a hold of %v of %s, injected by --inject %v, takes the op past its time limit of %v: %w",
			d, what, f, w.limit, backends.ErrTimeout), w.Rank()}
	}
	return nil
}

// hold keeps the rank from going on for d (fault f's hold of what): on
// its virtual clock when it has one, else in wall time until the open
// gate's context ends. It fails, naming the fault, when the hold would
// take the call past its time limit (charge) or ended early.
func (w *transport) hold(d time.Duration, f Fault, what string) error {
	if err := w.charge(d, f, what); err != nil {
		return err
	}
	if w.holder != nil {
		w.holder.Hold(d)
		return nil
	}
	ctx := w.ctx
	if ctx == nil {
		ctx = context.Background()
	}
	if err := holdFor(ctx, d); err != nil {
		return injected{fmt.Errorf("a hold of %v of %s, injected by --inject %v, ended early: %w", d, what, f, err), w.Rank()}
	}
	return nil
}

// holdFor waits for d precisely, or until ctx ends (its error, as a
// Request reports it: backends.ContextError). A timer alone wakes up to
// a millisecond late on virtual machines whose processors are idle, which
// would turn every injected delay of microseconds into one of a
// millisecond: it sleeps all but the last millisecond, then yields the
// processor until the time is up.
func holdFor(ctx context.Context, d time.Duration) error {
	deadline := time.Now().Add(d)
	if d > 2*time.Millisecond {
		t := time.NewTimer(d - time.Millisecond)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return backends.ContextError(ctx)
		}
	}
	for time.Now().Before(deadline) {
		if ctx.Err() != nil {
			return backends.ContextError(ctx)
		}
		runtime.Gosched()
	}
	return nil
}
