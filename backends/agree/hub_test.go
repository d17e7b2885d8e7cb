package agree

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hccl-test/hccl-test/backends"
)

// submitAll casts votes[r] for every rank at once and returns each rank's
// verdict and error.
func submitAll(h *Hub, ctx context.Context, r Round, votes []backends.Vote) ([]backends.Vote, []error) {
	got, errs := make([]backends.Vote, len(votes)), make([]error, len(votes))
	var wg sync.WaitGroup
	for i, v := range votes {
		wg.Go(func() { got[i], errs[i] = h.Submit(ctx, r, v) })
	}
	wg.Wait()
	return got, errs
}

func TestHubVerdict(t *testing.T) {
	ok := func(r int) backends.Vote { return backends.Vote{Rank: r} }
	tr := func(r int, s string) backends.Vote {
		return backends.Vote{Rank: r, Outcome: backends.Transient, Err: s}
	}
	fa := func(r int, s string) backends.Vote { return backends.Vote{Rank: r, Outcome: backends.Fatal, Err: s} }
	tests := []struct {
		name  string
		votes []backends.Vote
		want  backends.Vote
	}{
		{"all succeed", []backends.Vote{ok(0), ok(1), ok(2), ok(3)}, ok(0)},
		{"one transient", []backends.Vote{ok(0), ok(1), tr(2, "link"), ok(3)}, tr(2, "link")},
		{"lowest rank among equals", []backends.Vote{ok(0), tr(1, "a"), ok(2), tr(3, "b")}, tr(1, "a")},
		{"fatal beats transient", []backends.Vote{tr(0, "a"), ok(1), fa(2, "mismatch"), tr(3, "b")}, fa(2, "mismatch")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var relayed []backends.Vote
			var mu sync.Mutex
			h := NewHub(len(tt.votes), func(_ Round, v backends.Vote) {
				mu.Lock()
				relayed = append(relayed, v)
				mu.Unlock()
			})
			got, errs := submitAll(h, context.Background(), Round{Verdict, 9}, tt.votes)
			for r := range got {
				if errs[r] != nil || got[r] != tt.want {
					t.Errorf("rank %d: %+v, %v; want %+v", r, got[r], errs[r], tt.want)
				}
			}
			failed := tt.want.Outcome != backends.Succeeded
			if (len(relayed) == 1) != failed || len(relayed) > 1 {
				t.Errorf("relayed %v for a verdict of %v: want one relay exactly when a rank failed", relayed, tt.want)
			}
			if len(h.rounds) != 0 {
				t.Errorf("%d rounds left behind", len(h.rounds))
			}
		})
	}
}

// TestHubRoundsAreSeparate: a Recovered round with the same call number is
// another decision, and relays nothing.
func TestHubRoundsAreSeparate(t *testing.T) {
	relays := 0
	h := NewHub(2, func(Round, backends.Vote) { relays++ })
	v := []backends.Vote{{Rank: 0, Outcome: backends.Transient, Err: "x"}, {Rank: 1}}
	if got, _ := submitAll(h, context.Background(), Round{Verdict, 3}, v); got[1].Outcome != backends.Transient {
		t.Fatalf("verdict %+v", got[1])
	}
	got, errs := submitAll(h, context.Background(), Round{Recovered, 3}, []backends.Vote{{Rank: 0}, {Rank: 1}})
	if errs[0] != nil || got[0].Outcome != backends.Succeeded || relays != 1 {
		t.Fatalf("recovered round: %+v %v, %d relays", got[0], errs[0], relays)
	}
}

// TestHubMissing: a vote that never comes ends the wait at the deadline,
// naming who is missing.
func TestHubMissing(t *testing.T) {
	h := NewHub(4, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, errs := submitAll(h, ctx, Round{Verdict, 1}, []backends.Vote{{Rank: 0}, {Rank: 2}})
	for _, err := range errs {
		if !errors.Is(err, backends.ErrTimeout) || !strings.Contains(err.Error(), "no word from ranks 1, 3") {
			t.Errorf("got %v", err)
		}
	}
	if _, err := h.Submit(context.Background(), Round{Verdict, 1}, backends.Vote{Rank: 0}); err == nil {
		t.Error("a second vote from rank 0 was accepted")
	}
}

// TestHubLose: a rank that is gone decides the open round and every later
// one, and the open one is relayed.
func TestHubLose(t *testing.T) {
	var relayed []Round
	h := NewHub(3, func(r Round, _ backends.Vote) { relayed = append(relayed, r) })
	done := make(chan backends.Vote)
	go func() {
		v, _ := h.Submit(context.Background(), Round{Verdict, 4}, backends.Vote{Rank: 0})
		done <- v
	}()
	for {
		h.mu.Lock()
		n := len(h.rounds)
		h.mu.Unlock()
		if n == 1 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	h.Lose(2, errors.New("connection reset"))
	v := <-done
	if v.Outcome != backends.Fatal || v.Rank != 2 || !strings.Contains(v.Err, "rank 2 is gone: connection reset") {
		t.Fatalf("verdict %+v", v)
	}
	if later, err := h.Submit(context.Background(), Round{Recovered, 4}, backends.Vote{Rank: 1}); err != nil || later.Outcome != backends.Fatal {
		t.Fatalf("later round: %+v, %v", later, err)
	}
	if len(relayed) != 1 || relayed[0] != (Round{Verdict, 4}) {
		t.Fatalf("relayed %v", relayed)
	}
}

// TestHubLoseBetweenRounds: a rank lost while the others are in a call,
// before any has voted on it, stops that call: the one after the last
// voted on.
func TestHubLoseBetweenRounds(t *testing.T) {
	var relayed []Round
	h := NewHub(2, func(r Round, _ backends.Vote) { relayed = append(relayed, r) })
	submitAll(h, context.Background(), Round{Verdict, 7}, []backends.Vote{{Rank: 0}, {Rank: 1}})
	h.Lose(1, errors.New("exited"))
	if len(relayed) != 1 || relayed[0] != (Round{Verdict, 8}) {
		t.Fatalf("relayed %v, want op #8", relayed)
	}
}

// TestWatcher: a report stops the watched call, is kept for a call still to
// come, and is dropped for one that is over.
func TestWatcher(t *testing.T) {
	by := backends.Vote{Rank: 3, Outcome: backends.Transient, Err: "dropped"}
	var w Watcher
	ctx, cancel := context.WithCancelCause(context.Background())
	w.Watch(5, cancel)
	w.Report(5, by)
	if err := context.Cause(ctx); !errors.Is(err, backends.ErrPeerGone) || !strings.Contains(err.Error(), "rank 3 reported that op #5 failed: dropped") {
		t.Fatalf("cause %v", err)
	}
	w.Done(5)

	w.Report(6, by) // the rank has not started call 6 yet
	ctx, cancel = context.WithCancelCause(context.Background())
	w.Watch(6, cancel)
	if ctx.Err() == nil {
		t.Fatal("an early report did not stop the call when it started")
	}
	w.Done(6)

	ctx, cancel = context.WithCancelCause(context.Background())
	w.Watch(7, cancel)
	w.Report(6, by) // late: call 6 is over
	if ctx.Err() != nil {
		t.Fatal("a late report stopped the next call")
	}
}
