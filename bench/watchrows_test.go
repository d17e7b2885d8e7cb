package bench

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/hccl-test/hccl-test/backends"
	"github.com/hccl-test/hccl-test/coll"
	"github.com/hccl-test/hccl-test/internal/wallbound"
)

// stallBytes is the smallest send that stall-rank-1's rank 1 never
// completes (rankOneBackend): the rows of smaller sizes run, the first
// row of that size stalls.
const stallBytes = 1024

// stallTransport's sends of stallBytes or more never complete.
type stallTransport struct{ backends.Transport }

func (s stallTransport) Send(peer int, buf []byte) backends.Request {
	if len(buf) >= stallBytes {
		return stalled{}
	}
	return s.Transport.Send(peer, buf)
}

// BeginCall passes the call on to shm, whose messages carry it.
func (s stallTransport) BeginCall(c backends.Call) {
	s.Transport.(interface{ BeginCall(backends.Call) }).BeginCall(c)
}

// stalled is a request that completes only when its wait's context ends.
type stalled struct{}

func (stalled) Wait(ctx context.Context) error {
	<-ctx.Done()
	return backends.ContextError(ctx)
}

// TestRowWatchdogFiresInLaterRow: the rows of a rank's sweep share one
// watchdog (watch); a rank that stalls in the third row is still caught
// by it: the run ends with a timeout that names the row, soon after the op
// timeout, with the two rows before it written. Each of the rows before
// has armed and disarmed the shared watchdog many times.
func TestRowWatchdogFiresInLaterRow(t *testing.T) {
	tests := []struct {
		name  string
		iters int
	}{
		{"one iteration a row", 1},
		{"many iterations a row", 20},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := DefaultPlan()
			p.Backend, p.Ranks = "stall-rank-1", 2
			p.Ops = []coll.Op{coll.SendRecv}
			p.MinBytes, p.MaxBytes, p.StepFactor = stallBytes/4/4, stallBytes, 4
			p.Iters, p.Warmup = tc.iters, 1
			p.Timeout = 300 * time.Millisecond
			p.LinkGBps, p.LinkSource = 10, "given"
			p.Algo = "ring" // auto would calibrate, on messages that stall
			healthy := p
			healthy.Backend = "shm"
			base := wallbound.Baseline(func() {
				var c capture
				if _, err := Run(context.Background(), healthy, &c); err != nil {
					t.Fatalf("the healthy run: %v", err)
				}
				if len(c.records) != 3 {
					t.Fatalf("the healthy run wrote %d rows, want 3", len(c.records))
				}
			})
			c, err := runWithin(t, p, base)
			if !errors.Is(err, backends.ErrTimeout) {
				t.Fatalf("got %v, want a timeout", err)
			}
			if !strings.Contains(err.Error(), "1024 B") {
				t.Errorf("error %q does not name the row of 1024 B", err)
			}
			if len(c.records) != 2 {
				t.Errorf("%d rows written, want the 2 before the stall", len(c.records))
			}
		})
	}
}

// TestWatchSharedInSweep: in the sweep a rank's rows share one watchdog,
// disarmed between rows, until one of its ops overran it: the row after
// gets a fresh one whose context is live; outside the sweep each row has
// its own.
func TestWatchSharedInSweep(t *testing.T) {
	tests := []struct {
		name     string
		sweeping bool
		overrun  bool // the first row's op overruns the time limit
		wantSame bool
	}{
		{"sweep rows share one", true, false, true},
		{"sweep row after an overrun gets a new one", true, true, false},
		{"outside the sweep each row has its own", false, false, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := &rankRunner{plan: DefaultPlan(), sweeping: tc.sweeping}
			r.plan.Timeout = time.Millisecond
			defer r.endWatch()
			first, release := r.watch(context.Background())
			if tc.overrun {
				first.ArmNow()
				select {
				case <-first.Context().Done():
				case <-time.After(time.Minute):
					t.Fatal("the watchdog did not end an op that overran it")
				}
			}
			release()
			second, release2 := r.watch(context.Background())
			defer release2()
			if same := first == second; same != tc.wantSame {
				t.Errorf("the second row's watchdog is the first's: %v, want %v", same, tc.wantSame)
			}
			if err := second.Context().Err(); err != nil {
				t.Errorf("the second row's context has ended: %v", err)
			}
			if !tc.overrun && tc.sweeping {
				// Disarmed between rows: waiting past the limit ends nothing.
				time.Sleep(10 * time.Millisecond)
				if err := second.Context().Err(); err != nil {
					t.Errorf("a disarmed watchdog ended its context: %v", err)
				}
			}
			if !tc.sweeping {
				if err := first.Context().Err(); err == nil {
					t.Error("a row's own watchdog outlived its row")
				}
			}
		})
	}
}
