package coll

import (
	"context"
	"errors"
	"fmt"
	"time"
	"unsafe"

	"github.com/hccl-test/hccl-test/backends"
)

// Retry is a Comm's re-execution policy (SetRetry), on the model of HCCL's
// operator re-execution (HCCL_OP_RETRY_ENABLE, HCCL_OP_RETRY_PARAMS).
type Retry struct {
	// Max is how many times a failed call may be run again; 0 turns
	// re-execution off.
	Max int
	// Hold is the pause between the failure and the first re-run;
	// Interval the pause between later re-runs.
	Hold, Interval time.Duration
	// Rearm, if set, is called before each re-run, to restart the
	// caller's time limit for the call.
	Rearm func()
}

// SetRetry sets the re-execution policy for the calls that follow. When a
// call fails on any rank with a transport error (a dropped link, a peer
// that gave up), every rank votes on how its attempt ended and all receive
// the same verdict; on a transient failure they recover the transport, the
// input of an in-place call is restored from a copy taken before the first
// attempt, and the call runs again, at most r.Max times. A failure on one
// rank stops the attempt on every other at once, rather than leaving them
// waiting on a peer that gave up. An attempt that ran out of time, was
// cancelled, or failed for another reason (ranks disagreeing about the
// call) is not run again: every rank returns an error.
//
// Every rank must set the same policy, and the transport must implement
// backends.Recoverer (Run fails otherwise).
func (c *Comm) SetRetry(r Retry) { c.retry = r }

// Reruns returns how many times calls on this Comm have been run again so
// far. It is the same on every rank.
func (c *Comm) Reruns() int { return c.reruns }

// runRetry runs a collective under the retry policy.
func (c *Comm) runRetry(ctx context.Context, name string, a *Args) (string, error) {
	if err := a.validate(c.rank, c.size); err != nil {
		return "", fmt.Errorf("%v rank %d: %w", a.Op, c.rank, err)
	}
	var restore func()
	if saved := c.saveInput(a); saved != nil {
		restore = func() { copy(a.Send, saved) }
	}
	return c.retrying(ctx, restore, func(actx context.Context) (string, error) {
		return c.runOnce(actx, name, a)
	})
}

// retrying runs attempt until the ranks agree that it succeeded, it failed
// for good, or the policy's re-runs are spent; restore, if set, runs before
// every re-run.
func (c *Comm) retrying(ctx context.Context, restore func(), attempt func(context.Context) (string, error)) (string, error) {
	rec, ok := c.t.(backends.Recoverer)
	if !ok {
		return "", fmt.Errorf("rank %d: --retry: this backend cannot run a failed call again", c.rank)
	}
	r := c.retry
	for n := 0; ; n++ {
		actx, cancel := context.WithCancelCause(ctx)
		seq := c.calls + 1 // the number the attempt's call will get
		rec.Watch(seq, cancel)
		used, err := attempt(actx)
		cancel(nil)
		verdict, aerr := rec.Agree(ctx, seq, c.vote(ctx, actx, err))
		switch {
		case aerr != nil:
			return used, errors.Join(err, fmt.Errorf("rank %d: %w", c.rank, aerr))
		case verdict.Outcome == backends.Succeeded:
			return used, nil
		case verdict.Outcome == backends.Fatal:
			return used, c.verdictError(seq, verdict, err)
		case n == r.Max:
			return used, fmt.Errorf("giving up after %d re-runs: %w", n, c.verdictError(seq, verdict, err))
		}
		pause := r.Interval
		if n == 0 {
			pause = r.Hold
		}
		if err := sleep(ctx, pause); err != nil {
			return used, fmt.Errorf("rank %d: waiting to run op #%d again: %w", c.rank, seq, err)
		}
		if err := rec.Recover(ctx, seq); err != nil {
			return used, fmt.Errorf("rank %d: %w", c.rank, err)
		}
		c.reruns++
		if restore != nil {
			restore()
		}
		if r.Rearm != nil {
			r.Rearm()
		}
	}
}

// vote classifies how this rank's attempt ended: transient when a link
// failed or another rank's failure stopped it, fatal when the caller's
// context ended, the ranks disagree about the call (a mismatch, here or
// at a peer that stopped for it), or the failure is of another kind.
func (c *Comm) vote(ctx, actx context.Context, err error) backends.Vote {
	v := backends.Vote{Rank: c.rank}
	switch {
	case err == nil:
		return v
	case ctx.Err() != nil:
		v.Outcome = backends.Fatal
	case errors.Is(err, context.Canceled) && errors.Is(context.Cause(actx), backends.ErrPeerGone):
		// Stopped by another rank's failure, not by one of its own.
		v.Outcome = backends.Transient
		err = context.Cause(actx)
	case errors.Is(err, backends.ErrMismatch):
		// Also when a peer stopped because of it (tcp's abort frames).
		v.Outcome = backends.Fatal
	case errors.Is(err, backends.ErrPeerGone):
		v.Outcome = backends.Transient
	default:
		v.Outcome = backends.Fatal
	}
	v.Err = err.Error()
	return v
}

// verdictError is what a rank returns when the ranks gave up on call seq:
// its own error if its attempt failed for a reason of its own, else the
// failure of the rank the verdict names.
func (c *Comm) verdictError(seq uint64, verdict backends.Vote, own error) error {
	if own != nil && !errors.Is(own, context.Canceled) {
		return own
	}
	return fmt.Errorf("rank %d, op #%d: stopped because rank %d failed it (%v): %s",
		c.rank, seq, verdict.Rank, verdict.Outcome, verdict.Err)
}

// saveInput copies the input of an in-place call, which the call
// overwrites, into memory kept for the purpose, and returns the copy; nil
// when the input survives the call, or when calls carry no payload
// (SetNoPayload) and there is no input to keep.
func (c *Comm) saveInput(a *Args) []byte {
	if !c.payload() || !overlap(a.Send, a.Recv) {
		return nil
	}
	if cap(c.saved) < len(a.Send) {
		c.saved = make([]byte, len(a.Send))
	}
	c.saved = c.saved[:len(a.Send)]
	copy(c.saved, a.Send)
	return c.saved
}

// overlap reports whether two buffers share memory.
func overlap(x, y []byte) bool {
	if len(x) == 0 || len(y) == 0 {
		return false
	}
	xs, ys := uintptr(unsafe.Pointer(unsafe.SliceData(x))), uintptr(unsafe.Pointer(unsafe.SliceData(y)))
	return xs < ys+uintptr(len(y)) && ys < xs+uintptr(len(x))
}

// sleep waits for d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return backends.ContextError(ctx)
	}
}
