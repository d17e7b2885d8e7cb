package tcp

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hccl-test/hccl-test/backends"
)

// Recovery tests, part 1: the control plane of a world set up for retry
// (votes, verdicts, relayed failures, a rank gone). reset_test.go tests
// the links' reset between attempts.

// rcWorld sets up n ranks for retry in this process.
func rcWorld(t *testing.T, n int, log *ftLog) []*endpoint {
	t.Helper()
	cfg := backends.Config{Retry: true, Options: Options{ConnectTimeout: 5 * time.Second}}
	if log != nil {
		cfg.Log = log
	}
	return localWorld(t, n, cfg)
}

// rcEach runs f on every rank at once, each in its own goroutine as a
// rank's body would, and returns what each returned.
func rcEach[T any](eps []*endpoint, f func(ep *endpoint) T) []T {
	out := make([]T, len(eps))
	var wg sync.WaitGroup
	for i, ep := range eps {
		wg.Go(func() { out[i] = f(ep) })
	}
	wg.Wait()
	return out
}

// rcAttempt is one rank's part of a call; an error makes the rank vote
// that the call failed, transiently.
type rcAttempt func(ctx context.Context, ep *endpoint, seq uint64) error

// rcCall runs call seq on every rank as the harness does with --retry:
// watch, attempt, agree. It fails t unless every rank gets the same
// verdict, and returns it.
func rcCall(t *testing.T, eps []*endpoint, seq uint64, attempt rcAttempt) backends.Vote {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	type result struct {
		verdict backends.Vote
		err     error
	}
	res := rcEach(eps, func(ep *endpoint) result {
		actx, acancel := context.WithCancelCause(ctx)
		defer acancel(nil)
		ep.Watch(seq, acancel)
		v := backends.Vote{Rank: ep.rank}
		if err := attempt(actx, ep, seq); err != nil {
			v.Outcome, v.Err = backends.Transient, err.Error()
			if cause := context.Cause(actx); cause != nil {
				v.Err += " (" + cause.Error() + ")"
			}
		}
		verdict, err := ep.Agree(ctx, seq, v)
		return result{verdict, err}
	})
	for r, got := range res {
		if got.err != nil {
			t.Fatalf("op #%d: rank %d: Agree: %v", seq, r, got.err)
		}
		if got.verdict != res[0].verdict {
			t.Fatalf("op #%d: rank %d got the verdict %+v, rank 0 %+v", seq, r, got.verdict, res[0].verdict)
		}
	}
	return res[0].verdict
}

// rcRecover runs Recover for call seq on every rank and fails t on an
// error.
func rcRecover(t *testing.T, eps []*endpoint, seq uint64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for r, err := range rcEach(eps, func(ep *endpoint) error { return ep.Recover(ctx, seq) }) {
		if err != nil {
			t.Fatalf("rank %d: Recover(%d): %v", r, seq, err)
		}
	}
}

func TestAgree(t *testing.T) {
	ftNoLeaks(t)
	eps := rcWorld(t, 4, nil)
	tests := []struct {
		name  string
		votes map[int]backends.Vote // by rank; the others succeed
		want  backends.Vote
	}{
		{"all succeed", nil, backends.Vote{Rank: 0, Outcome: backends.Succeeded}},
		{"one transient", map[int]backends.Vote{2: {Outcome: backends.Transient, Err: "link to rank 3 dropped"}},
			backends.Vote{Rank: 2, Outcome: backends.Transient, Err: "link to rank 3 dropped"}},
		{"fatal beats transient", map[int]backends.Vote{1: {Outcome: backends.Transient, Err: "t"}, 3: {Outcome: backends.Fatal, Err: "f"}},
			backends.Vote{Rank: 3, Outcome: backends.Fatal, Err: "f"}},
		{"lowest rank wins a tie", map[int]backends.Vote{3: {Outcome: backends.Transient, Err: "3"}, 1: {Outcome: backends.Transient, Err: "1"}},
			backends.Vote{Rank: 1, Outcome: backends.Transient, Err: "1"}},
		{"rank 0 fails", map[int]backends.Vote{0: {Outcome: backends.Fatal, Err: "0"}, 2: {Outcome: backends.Fatal, Err: "2"}},
			backends.Vote{Rank: 0, Outcome: backends.Fatal, Err: "0"}},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			seq := uint64(i + 1)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			type result struct {
				verdict backends.Vote
				err     error
			}
			res := rcEach(eps, func(ep *endpoint) result {
				v := tt.votes[ep.rank]
				v.Rank = ep.rank
				verdict, err := ep.Agree(ctx, seq, v)
				return result{verdict, err}
			})
			for r, got := range res {
				if got.err != nil || got.verdict != tt.want {
					t.Errorf("rank %d: Agree = %+v, %v; want %+v", r, got.verdict, got.err, tt.want)
				}
			}
		})
	}
}

// TestAgreeWithoutRetry: a world set up without Config.Retry refuses to
// agree, saying why; a world of one rank needs nobody to agree with.
func TestAgreeWithoutRetry(t *testing.T) {
	ctx := context.Background()
	eps := localWorld(t, 2, backends.Config{})
	for _, ep := range eps {
		if ep.ctl != nil {
			t.Fatalf("rank %d has a control plane without retry", ep.rank)
		}
	}
	if _, err := eps[1].Agree(ctx, 1, backends.Vote{Rank: 1}); err == nil || !strings.Contains(err.Error(), "Config.Retry") {
		t.Errorf("Agree without retry: got %v, want an error naming Config.Retry", err)
	}
	if err := eps[0].Recover(ctx, 1); err == nil || !strings.Contains(err.Error(), "Config.Retry") {
		t.Errorf("Recover without retry: got %v, want an error naming Config.Retry", err)
	}
	solo := localWorld(t, 1, backends.Config{})
	v := backends.Vote{Rank: 0, Outcome: backends.Transient, Err: "x"}
	if got, err := solo[0].Agree(ctx, 1, v); err != nil || got != v {
		t.Errorf("Agree alone = %+v, %v; want %+v", got, err, v)
	}
	if err := solo[0].Recover(ctx, 1); err != nil {
		t.Errorf("Recover alone: %v", err)
	}
}

// TestAgreeTimeout: a vote that gets no verdict before ctx ends fails,
// naming what it waited for, and Close does not wait for the rounds left
// open.
func TestAgreeTimeout(t *testing.T) {
	ftNoLeaks(t)
	eps := rcWorld(t, 4, nil)
	tests := []struct {
		rank int
		want string
	}{
		{1, "agreeing on op #17: timed out: no verdict from rank 0"},
		{0, "agreeing on op #17: timed out: no word from ranks 2, 3"},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("rank %d", tt.rank), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
			defer cancel()
			_, err := eps[tt.rank].Agree(ctx, 17, backends.Vote{Rank: tt.rank})
			if !errors.Is(err, backends.ErrTimeout) || err.Error() != tt.want {
				t.Fatalf("got %v, want %q wrapping ErrTimeout", err, tt.want)
			}
		})
	}
	// Rank 0's hub still waits for ranks 2 and 3 in that round.
	for _, ep := range eps {
		ftCloseQuickly(t, ep)
	}
}

// TestVerdictBeforeClose: rank 0 ends as soon as it has the verdict on a
// run's last call; every other rank still gets that verdict.
func TestVerdictBeforeClose(t *testing.T) {
	ftNoLeaks(t)
	for i := range 20 {
		eps := rcWorld(t, 3, nil)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		errs := rcEach(eps, func(ep *endpoint) error {
			v, err := ep.Agree(ctx, 1, backends.Vote{Rank: ep.rank})
			if ep.rank == 0 {
				ep.Close()
			}
			if err == nil && v != (backends.Vote{}) {
				err = fmt.Errorf("verdict %+v, want rank 0's success", v)
			}
			return err
		})
		cancel()
		for r, err := range errs {
			if err != nil {
				t.Fatalf("world %d: rank %d: %v", i, r, err)
			}
		}
		for _, ep := range eps {
			ep.Close()
		}
	}
}

// TestRelay: a rank waiting on a peer stops as soon as another rank votes
// that the call failed, with a cause that names the failure.
func TestRelay(t *testing.T) {
	ftNoLeaks(t)
	eps := rcWorld(t, 4, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	const seq = 5
	actx, acancel := context.WithCancelCause(ctx)
	defer acancel(nil)
	eps[2].Watch(seq, acancel)
	promptly := ftPromptly(t)               // measured before rank 1 votes
	recv := eps[2].Recv(3, make([]byte, 8)) // rank 3 never sends
	waited := make(chan error, 1)
	go func() { waited <- recv.Wait(actx) }()

	fail := backends.Vote{Rank: 1, Outcome: backends.Transient, Err: "link to rank 2 dropped"}
	verdict1 := make(chan error, 1)
	go func() {
		v, err := eps[1].Agree(ctx, seq, fail)
		if err == nil && v != fail {
			err = fmt.Errorf("verdict %+v, want %+v", v, fail)
		}
		verdict1 <- err
	}()
	select {
	case err := <-waited:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("the receive ended with %v, want it cancelled", err)
		}
	case <-time.After(promptly):
		t.Fatalf("the receive from rank 3 still waits %v after rank 1 voted that the call failed", promptly)
	}
	cause := context.Cause(actx)
	if !errors.Is(cause, backends.ErrPeerGone) || !strings.Contains(cause.Error(), "rank 1") || !strings.Contains(cause.Error(), fail.Err) {
		t.Errorf("cause %v: want ErrPeerGone naming rank 1 and %q", cause, fail.Err)
	}

	// The other ranks vote too, and all run the call again.
	for r, err := range rcEach(eps, func(ep *endpoint) error {
		if ep.rank == 1 {
			return <-verdict1
		}
		v, err := ep.Agree(ctx, seq, backends.Vote{Rank: ep.rank})
		if err == nil && v != fail {
			err = fmt.Errorf("verdict %+v, want %+v", v, fail)
		}
		return err
	}) {
		if err != nil {
			t.Fatalf("rank %d: %v", r, err)
		}
	}
	rcRecover(t, eps, seq)
	// The abandoned receive has failed with the reset: this rank's, or
	// rank 3's closing the connection first.
	if err := recv.Wait(ctx); !errors.Is(err, backends.ErrPeerGone) {
		t.Errorf("the abandoned receive: got %v, want ErrPeerGone", err)
	}
}

// TestRankGone: a rank's process dies while the others agree on a call.
// Every other rank learns it within a few seconds, with a fatal verdict
// naming the rank or an error, and cannot recover.
func TestRankGone(t *testing.T) {
	for _, gone := range []int{3, 0} {
		t.Run(fmt.Sprintf("rank %d", gone), func(t *testing.T) {
			ftNoLeaks(t)
			eps := rcWorld(t, 4, nil)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			// The gone rank closes at 50ms; the others learn it promptly.
			limit := 50*time.Millisecond + ftPromptly(t)
			start := time.Now()
			type result struct {
				verdict backends.Vote
				err     error
				took    time.Duration
			}
			res := rcEach(eps, func(ep *endpoint) result {
				if ep.rank == gone {
					time.Sleep(50 * time.Millisecond) // the others are waiting
					ep.Close()
					return result{}
				}
				v, err := ep.Agree(ctx, 1, backends.Vote{Rank: ep.rank})
				return result{v, err, time.Since(start)}
			})
			for r, got := range res {
				if r == gone {
					continue
				}
				if got.took > limit {
					t.Errorf("rank %d: Agree returned after %v, the rank closed at 50ms (want within %v on this host's load)", r, got.took.Round(time.Millisecond), limit)
				}
				named := got.err == nil && got.verdict.Outcome == backends.Fatal && got.verdict.Rank == gone &&
					strings.Contains(got.verdict.Err, fmt.Sprintf("rank %d is gone", gone))
				if !named && !errors.Is(got.err, backends.ErrPeerGone) {
					t.Errorf("rank %d: Agree = %+v, %v; want a fatal verdict naming rank %d, or ErrPeerGone", r, got.verdict, got.err, gone)
				}
			}
			for r, err := range rcEach(eps, func(ep *endpoint) error {
				if ep.rank == gone {
					return nil
				}
				if err := ep.Recover(ctx, 1); err == nil || ctx.Err() != nil {
					return fmt.Errorf("Recover = %v, want it to fail at once", err)
				}
				// A call watched from now on stops at once, or when its
				// failure is reported.
				actx, acancel := context.WithCancelCause(ctx)
				defer acancel(nil)
				ep.Watch(2, acancel)
				if gone == 0 && context.Cause(actx) == nil {
					return errors.New("a call watched without rank 0 did not stop")
				}
				return nil
			}) {
				if err != nil {
					t.Errorf("rank %d: %v", r, err)
				}
			}
		})
	}
}
