package isolate

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hccl-test/hccl-test/backends"
	"github.com/hccl-test/hccl-test/backends/shm"
	"github.com/hccl-test/hccl-test/coll"
)

// stop0Backend is shm on which rank 0 alone is stopped (as a signal to
// its process alone would) when it begins its third sendrecv
// measurement: it has measured two rounds, and the ranks of the pair
// that does not hold it go on to the gather after the pairs and the
// groups without it.
type stop0Backend struct {
	mu     sync.Mutex
	begun  int // rank 0's sendrecv measurements begun; guarded by mu
	cancel context.CancelCauseFunc
}

func (b *stop0Backend) Name() string                { return "isolate-stop0" }
func (b *stop0Backend) Capabilities() backends.Caps { return shm.Backend{}.Capabilities() }
func (b *stop0Backend) Run(ctx context.Context, cfg backends.Config, body backends.RankFunc) error {
	return shm.Backend{}.Run(ctx, cfg, func(ctx context.Context, t backends.Transport) error {
		if t.Rank() != 0 {
			return body(ctx, t)
		}
		ctx, cancel := context.WithCancelCause(ctx)
		defer cancel(nil)
		b.mu.Lock()
		b.begun, b.cancel = 0, cancel
		b.mu.Unlock()
		return body(ctx, &stop0Transport{Transport: t, b: b})
	})
}

var stopper0 = &stop0Backend{}

func init() { backends.Register(stopper0) }

type stop0Transport struct {
	backends.Transport
	b *stop0Backend
}

func (s *stop0Transport) BeginCall(call backends.Call) {
	if call.Op == uint8(coll.SendRecv) && call.Seq == 1 {
		s.b.mu.Lock()
		if s.b.begun++; s.b.begun == 3 {
			s.b.cancel(errors.New("SIGTERM received"))
		}
		s.b.mu.Unlock()
	}
	if tg, ok := s.Transport.(backends.CallTagger); ok {
		tg.BeginCall(call)
	}
}

func (s *stop0Transport) DropLink(peer int, err error) {
	if d, ok := s.Transport.(backends.LinkDropper); ok {
		d.DropLink(peer, err)
	}
}

// TestLiveRankZeroStopped stops rank 0 alone in the third round of four
// hosts, after the other pair has gone on to the gather after the pairs:
// rank 0 still takes every rank's results of the two rounds it ran, so
// the four pairs of those rounds are measured, none failed and nothing
// named. (Rank 0 used to skip that gather when stopped before it and
// take its peers' report of it for their last: the pairs it did not
// measure itself had "no report from either rank", failed, and two
// healthy hosts were named.)
func TestLiveRankZeroStopped(t *testing.T) {
	limit := 5 * time.Second
	o := liveOptions(stopper0.Name(), 4, 1, limit)
	began := time.Now()
	rep, err := RunLive(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Ran != 2 || rep.Stopped != "SIGTERM received" {
		t.Fatalf("ran %d of %d slots, stopped %q; want 2, SIGTERM received:\n%s", rep.Ran, rep.Slots, rep.Stopped, text(t, rep))
	}
	if len(rep.Pairs) != 4 || len(rep.Groups) != 0 {
		t.Errorf("%d pairs, %d groups; want rounds 1 and 2's 4 pairs only:\n%s", len(rep.Pairs), len(rep.Groups), text(t, rep))
	}
	for _, p := range rep.Pairs {
		if p.Verdict == Failed || p.Verdict == Flaky || !(p.Figure > 0) {
			t.Errorf("pair %s - %s: %s %v\n%s", p.A, p.B, p.Verdict, p.Failures, text(t, rep))
		}
	}
	// Rank 0 dropped its link to rank 1 when the stop cut their
	// measurement short (its order of messages is then unknown), so rank
	// 1 is not heard from; its pairs of rounds 1 and 2 are, from their
	// other ranks.
	for _, u := range rep.Unreported {
		if !strings.HasPrefix(u, "rank 1 ") {
			t.Errorf("unreported %v, want every rank but rank 1 heard from", rep.Unreported)
		}
	}
	// Rank 1 waits for rank 0 in round 3 until its slot's end; the rest
	// within the search's limits (4 slots and 2 gathers).
	if took, bound := time.Since(began), 6*limit+10*time.Second; took > bound {
		t.Errorf("the search took %v, more than its limits allow (%v)", took, bound)
	}
}
