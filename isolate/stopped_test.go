package isolate

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hccl-test/hccl-test/backends"
	"github.com/hccl-test/hccl-test/backends/shm"
)

// stop0Backend is shm on which rank stop alone is stopped (as a signal
// to its process alone would) when it begins its third sendrecv
// measurement: it has measured two rounds, and the ranks of the pair
// that does not hold it go on to the gather after the pairs and the
// groups without it.
type stop0Backend struct {
	mu     sync.Mutex
	stop   int // the rank stopped; set before the run
	begun  int // its sendrecv measurements begun; guarded by mu
	cancel context.CancelCauseFunc
}

func (b *stop0Backend) Name() string                { return "isolate-stop0" }
func (b *stop0Backend) Capabilities() backends.Caps { return shm.Backend{}.Capabilities() }
func (b *stop0Backend) Run(ctx context.Context, cfg backends.Config, body backends.RankFunc) error {
	return shm.Backend{}.Run(ctx, cfg, func(ctx context.Context, t backends.Transport) error {
		if t.Rank() != b.stop {
			return body(ctx, t)
		}
		ctx, cancel := context.WithCancelCause(ctx)
		defer cancel(nil)
		b.mu.Lock()
		b.begun, b.cancel = 0, cancel
		b.mu.Unlock()
		return body(ctx, &stop0Transport{sendRecvHook{Transport: t, on: b.began}})
	})
}

var stopper0 = &stop0Backend{}

func init() { backends.Register(stopper0) }

// began counts a sendrecv measurement of the stopped rank begun, and
// stops that rank as its third begins.
func (b *stop0Backend) began(int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.begun++; b.begun == 3 {
		b.cancel(errors.New("SIGTERM received"))
	}
}

// stop0Transport is the stopped rank's transport: sendRecvHook, and the
// links it drops dropped beneath it.
type stop0Transport struct{ sendRecvHook }

func (s *stop0Transport) DropLink(peer int, err error) {
	if d, ok := s.Transport.(backends.LinkDropper); ok {
		d.DropLink(peer, err)
	}
}

// TestLiveRankStopped stops one rank alone in the third round of four
// hosts, after the pair that does not hold it has gone on to the gather
// after the pairs. Rank 0 still takes every rank's results of the two
// rounds that all ran, so the four pairs of those rounds are measured,
// none failed and nothing named, and the report says which rank stopped.
// (Rank 0 stopped used to skip that gather and take its peers' report of
// it for their last: the pairs it did not measure itself had "no report
// from either rank", failed, and host1 was named. Another rank stopped
// left the report saying "stopped ()".)
func TestLiveRankStopped(t *testing.T) {
	tests := []struct {
		rank        int
		wantStopped string
		peer        string // the stopped rank's peer in round 3, which it may drop
	}{
		{rank: 0, wantStopped: "SIGTERM received", peer: "rank 1 "},
		{rank: 3, wantStopped: "rank 3: SIGTERM received", peer: "rank 2 "},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("rank %d", tt.rank), func(t *testing.T) {
			limit := 5 * time.Second
			o := liveOptions(stopper0.Name(), 4, 1, limit)
			stopper0.stop = tt.rank
			began := time.Now()
			rep, err := RunLive(context.Background(), o)
			if err != nil {
				t.Fatal(err)
			}
			if rep.Ran != 2 || rep.Stopped != tt.wantStopped {
				t.Fatalf("ran %d of %d slots, stopped %q; want 2, %q:\n%s", rep.Ran, rep.Slots, rep.Stopped, tt.wantStopped, text(t, rep))
			}
			if len(rep.Pairs) != 4 || len(rep.Groups) != 0 {
				t.Errorf("%d pairs, %d groups; want rounds 1 and 2's 4 pairs only:\n%s", len(rep.Pairs), len(rep.Groups), text(t, rep))
			}
			for _, p := range rep.Pairs {
				if p.Verdict == Failed || p.Verdict == Flaky || !(p.Figure > 0) {
					t.Errorf("pair %s - %s: %s %v\n%s", p.A, p.B, p.Verdict, p.Failures, text(t, rep))
				}
			}
			// The stop cut the stopped rank's measurement with its peer
			// short, whose order of messages is then unknown: rank 0
			// may have dropped that link, and that peer's results then
			// come from its other peers.
			for _, u := range rep.Unreported {
				if !strings.HasPrefix(u, tt.peer) {
					t.Errorf("unreported %v, want every rank but %sheard from", rep.Unreported, tt.peer)
				}
			}
			// A peer waits for the stopped rank in round 3 until its
			// slot's end; the rest within the search's limits (4 slots
			// and 2 gathers).
			if took, bound := time.Since(began), 6*limit+10*time.Second; took > bound {
				t.Errorf("the search took %v, more than its limits allow (%v)", took, bound)
			}
		})
	}
}
