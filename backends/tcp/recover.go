package tcp

import (
	"context"
	"errors"
	"fmt"

	"github.com/hccl-test/hccl-test/backends"
	"github.com/hccl-test/hccl-test/backends/agree"
)

// The endpoint can run a failed call again (--retry).
var _ backends.Recoverer = (*endpoint)(nil)

// Watch implements backends.Recoverer. Once rank 0 is gone, every call
// watched stops at once: nobody is left to decide whether to run it again.
func (ep *endpoint) Watch(seq uint64, cancel context.CancelCauseFunc) {
	// Stored before the watcher learns of it: a report that reads seq
	// finds the watcher at seq or earlier, and so reaches the call.
	ep.watchSeq.Store(seq)
	ep.watcher.Watch(seq, cancel)
	if c := ep.ctl; c != nil && c.gone != nil {
		select {
		case <-c.gone:
			cancel(agree.Cause(seq, c.goneVote()))
		default:
		}
	}
}

// Agree implements backends.Recoverer: rank 0's hub collects the votes,
// the other ranks' over their control connections.
func (ep *endpoint) Agree(ctx context.Context, seq uint64, v backends.Vote) (backends.Vote, error) {
	defer ep.watcher.Done(seq)
	if ep.size == 1 {
		return v, nil
	}
	return ep.vote(ctx, agree.Round{Kind: agree.Verdict, Seq: seq}, v)
}

// Recover implements backends.Recoverer. Every rank's attempt has ended
// once the verdict is in, so no request of this rank is pending: Recover
// fails what the links still hold, closes their connections, waits for
// their goroutines, and returns them to their state before they first
// connected, at a new link epoch, so that the next message dials again.
// The ranks then meet at rank 0 before any of them posts: a rank that
// dialed a peer still holding the old connection would be refused.
func (ep *endpoint) Recover(ctx context.Context, seq uint64) error {
	r := agree.Round{Kind: agree.Recovered, Seq: seq}
	select {
	case <-ep.closed:
		return fmt.Errorf("%s: %w", r, backends.ErrClosed)
	default:
	}
	if ep.size == 1 {
		return nil
	}
	if !ep.retry {
		return fmt.Errorf("%s: %w", r, errNoRetry)
	}
	ep.resetLinks(seq)
	verdict, err := ep.vote(ctx, r, backends.Vote{Rank: ep.rank})
	if err != nil {
		return err
	}
	if verdict.Outcome != backends.Succeeded {
		// Only a rank gone fails a barrier.
		return fmt.Errorf("%s: %w: %s", r, backends.ErrPeerGone, verdict.Err)
	}
	return nil
}

// errNoRetry is returned by Agree and Recover on a world set up without
// Config.Retry, which has no control plane.
var errNoRetry = errors.New("the tcp world was not set up to run calls again (Config.Retry is off)")

// vote casts v in round r and returns the verdict: on rank 0 straight
// into the hub, elsewhere through rank 0.
func (ep *endpoint) vote(ctx context.Context, r agree.Round, v backends.Vote) (backends.Vote, error) {
	if !ep.retry {
		return backends.Vote{}, fmt.Errorf("%s: %w", r, errNoRetry)
	}
	if v.Rank != ep.rank {
		return backends.Vote{}, fmt.Errorf("%s: %w: rank %d votes for rank %d", r, backends.ErrMismatch, ep.rank, v.Rank)
	}
	select {
	case <-ep.closed:
		return backends.Vote{}, fmt.Errorf("%s: %w", r, backends.ErrClosed)
	default:
	}
	ep.ctl.agreeing.Add(1)
	defer ep.ctl.agreeing.Add(-1)
	if ep.ctl.hub != nil {
		return ep.ctl.hub.Submit(ctx, r, v)
	}
	return ep.ctl.ask(ctx, r, v)
}

// resetLinks makes every link as new, for call seq to run again.
func (ep *endpoint) resetLinks(seq uint64) {
	err := fmt.Errorf("%w: op #%d is being run again", backends.ErrPeerGone, seq)
	for _, l := range ep.links {
		if l != nil {
			l.fail(err)
		}
	}
	// Once every link has failed, no dial can start at the old epoch
	// (goDial checks the link first), and every connection handed to a
	// link from now on must come from the new one (attach checks it).
	ep.epoch.Add(1)
	for _, l := range ep.links {
		if l != nil {
			l.reset()
		}
	}
}

// reset returns a failed link to its state before it first connected,
// once the goroutines of its last connection (reader, writer, dial) have
// ended: no connection, empty queues, frames numbered from 0 again. The
// link of a closed endpoint stays failed.
func (l *link) reset() {
	l.lwg.Wait()
	l.mu.Lock()
	defer l.mu.Unlock()
	select {
	case <-l.ep.closed:
		return
	default:
	}
	l.sends, l.recvs = nil, nil
	l.conn, l.wr, l.dialConn, l.err = nil, nil, nil, nil
	l.dialing, l.writing, l.filling = false, false, false
	l.sendSeq = 0
	l.stop = make(chan struct{})
}
