package agree

import (
	"context"
	"fmt"
	"sync"

	"github.com/hccl-test/hccl-test/backends"
)

// Watcher is one rank's side of the relay: it holds the cancel function of
// the call the rank is running, and a failure reported for a call the rank
// has not started yet (a rank can be one call behind the one that failed).
// It is safe for concurrent use: the rank watches, the relay reports.
type Watcher struct {
	mu      sync.Mutex
	seq     uint64
	cancel  context.CancelCauseFunc
	early   uint64 // a call reported failed before it was watched, 0 if none
	earlyBy backends.Vote
}

// Watch implements backends.Recoverer.Watch.
func (w *Watcher) Watch(seq uint64, cancel context.CancelCauseFunc) {
	w.mu.Lock()
	w.seq, w.cancel = seq, cancel
	early, by := w.early, w.earlyBy
	if early != 0 && early <= seq {
		w.early = 0
	}
	w.mu.Unlock()
	if early == seq {
		cancel(Cause(seq, by))
	}
}

// Report stops the watched call if it is seq, or remembers seq's failure
// if that call is still to come. Reports about calls already over are
// ignored.
func (w *Watcher) Report(seq uint64, by backends.Vote) {
	w.mu.Lock()
	var cancel context.CancelCauseFunc
	switch {
	case seq == w.seq:
		cancel = w.cancel
	case seq > w.seq:
		w.early, w.earlyBy = seq, by
	}
	w.mu.Unlock()
	if cancel != nil {
		cancel(Cause(seq, by))
	}
}

// Done forgets the watched call once its verdict is in, so that a late
// report cannot reach it.
func (w *Watcher) Done(seq uint64) {
	w.mu.Lock()
	if w.seq == seq {
		w.cancel = nil
	}
	w.mu.Unlock()
}

// Cause is the error a watched call is cancelled with when rank by.Rank
// reports that call seq failed. It wraps backends.ErrPeerGone.
func Cause(seq uint64, by backends.Vote) error {
	return fmt.Errorf("%w: rank %d reported that op #%d failed: %s", backends.ErrPeerGone, by.Rank, seq, by.Err)
}
