package memguard

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fake is a resident size a test sets.
type fake struct{ n atomic.Int64 }

func (f *fake) read() (int64, error) { return f.n.Load(), nil }

func TestWatch(t *testing.T) {
	tests := []struct {
		name     string
		resident int64
		limit    int64
		stops    bool
	}{
		{"under the limit", 900, 1000, false},
		{"at the limit", 1000, 1000, false},
		{"past the limit", 1001, 1000, true},
		{"far past", 1 << 40, 1000, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var f fake
			ctx, stop := Watch(context.Background(), Config{Estimate: 500, Limit: tc.limit, Every: time.Millisecond, Resident: f.read})
			defer stop()
			f.n.Store(tc.resident)
			select {
			case <-ctx.Done():
				if !tc.stops {
					t.Fatalf("stopped at %d of %d: %v", tc.resident, tc.limit, context.Cause(ctx))
				}
				e := Cause(ctx)
				if e == nil || e.Resident != tc.resident || e.Limit != tc.limit || e.Estimate != 500 {
					t.Fatalf("Cause = %+v", e)
				}
				msg := e.Error()
				if strings.Contains(msg, "\n") || !strings.Contains(msg, "resident memory") || !strings.Contains(msg, "estimate of 500B") {
					t.Errorf("message %q: want one line naming the resident size and the estimate", msg)
				}
			case <-time.After(quiet(tc.stops, 200*time.Millisecond)):
				if tc.stops {
					t.Fatalf("not stopped at %d of %d", tc.resident, tc.limit)
				}
			}
		})
	}
}

// TestWatchGrowth checks that a run whose memory grows is stopped once it
// passes the limit, not before.
func TestWatchGrowth(t *testing.T) {
	var f fake
	ctx, stop := Watch(context.Background(), Config{Estimate: 100, Limit: 150, Every: time.Millisecond, Resident: f.read})
	defer stop()
	for n := int64(0); n <= 150; n += 10 {
		f.n.Store(n)
		time.Sleep(3 * time.Millisecond)
		if ctx.Err() != nil {
			t.Fatalf("stopped at %d, under the limit", n)
		}
	}
	f.n.Store(151)
	select {
	case <-ctx.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("not stopped past the limit")
	}
}

// TestWatchFromStart checks that what the process held when the watch
// began is not charged to the run.
func TestWatchFromStart(t *testing.T) {
	var f fake
	f.n.Store(1000)
	ctx, stop := Watch(context.Background(), Config{Estimate: 50, Limit: 100, Every: time.Millisecond, Resident: f.read})
	defer stop()
	f.n.Store(1100)
	time.Sleep(20 * time.Millisecond)
	if ctx.Err() != nil {
		t.Fatalf("stopped at 1100, within 1000 + 100: %v", context.Cause(ctx))
	}
	f.n.Store(1101)
	select {
	case <-ctx.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("not stopped at 1101")
	}
	if e := Cause(ctx); e == nil || e.Start != 1000 || e.Limit != 1100 || !strings.Contains(e.Error(), "1000B at the start") {
		t.Errorf("Cause = %+v (%v)", e, e)
	}
}

// TestStuck checks that a run that does not end once cancelled is handed
// to Stuck, and one that ends is not.
func TestStuck(t *testing.T) {
	for _, ends := range []bool{false, true} {
		var f fake
		called := make(chan *Exceeded, 1)
		ctx, stop := Watch(context.Background(), Config{Estimate: 1, Limit: 2, Every: time.Millisecond,
			Grace: 50 * time.Millisecond, Resident: f.read, Stuck: func(e *Exceeded) { called <- e }})
		f.n.Store(1 << 30)
		<-ctx.Done()
		if ends {
			stop()
		}
		select {
		case e := <-called:
			if ends {
				t.Errorf("Stuck called for a run that ended")
			}
			if e == nil || e.Resident != 1<<30 {
				t.Errorf("Stuck got %+v", e)
			}
		case <-time.After(quiet(!ends, 300*time.Millisecond)):
			if !ends {
				t.Errorf("Stuck not called for a run that did not end")
			}
		}
		stop()
	}
}

func TestOffAndParent(t *testing.T) {
	ctx, stop := Watch(context.Background(), Config{})
	stop()
	if ctx.Err() != nil || Cause(ctx) != nil {
		t.Errorf("a guard with no estimate cancelled the run: %v", context.Cause(ctx))
	}
	parent, cancel := context.WithCancel(context.Background())
	ctx, stop = Watch(parent, Config{Estimate: 1 << 40, Every: time.Millisecond, Resident: func() (int64, error) { return 0, errors.New("no") }})
	defer stop()
	cancel()
	<-ctx.Done()
	if Cause(ctx) != nil {
		t.Errorf("a cancelled parent reads as the guard's: %v", Cause(ctx))
	}
}

func TestResident(t *testing.T) {
	n, err := Resident()
	if err != nil {
		t.Skip(err)
	}
	if n < 1<<20 || n > 1<<40 {
		t.Errorf("Resident() = %d: not a process's size", n)
	}
}

func TestDefaultLimit(t *testing.T) {
	for _, tc := range []struct{ est, want int64 }{
		{0, 256 << 20}, {1 << 30, 3 << 29}, {100 << 20, 356 << 20}, {1 << 62, 1<<62 + 1<<61},
		{1<<63 - 1, 1<<63 - 1},
	} {
		if got := DefaultLimit(tc.est); got != tc.want {
			t.Errorf("DefaultLimit(%d) = %d, want %d", tc.est, got, tc.want)
		}
	}
}

// TestCeiling: a system's limit (a memory cgroup's room) below what the
// estimate allows stops the run a margin short of it, with a line naming
// it rather than calling the estimate wrong; above it, it changes nothing.
func TestCeiling(t *testing.T) {
	const mib = 1 << 20
	tests := []struct {
		name      string
		ceiling   int64
		resident  int64 // past the start
		wantLimit int64 // past the start; 0: not stopped
		wantWord  string
	}{
		{"cgroup tighter", 512 * mib, 600 * mib, 512*mib - 32*mib, "a memory cgroup or ulimit -v left"},
		{"cgroup tighter, under", 512 * mib, 470 * mib, 0, ""},
		{"cgroup looser", 64 << 30, 2000 * mib, 1000*mib + 500*mib, "the estimate (--dry-run) is wrong"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var f fake
			const start = 100 * mib
			f.n.Store(start)
			ctx, stop := Watch(context.Background(), Config{Estimate: 1000 * mib, Ceiling: tc.ceiling, Every: time.Millisecond, Resident: f.read})
			defer stop()
			f.n.Store(start + tc.resident)
			select {
			case <-ctx.Done():
				e := Cause(ctx)
				if tc.wantLimit == 0 || e == nil || e.Limit != start+tc.wantLimit || !strings.Contains(e.Error(), tc.wantWord) {
					t.Fatalf("stopped: %+v: %v", e, e)
				}
			case <-time.After(quiet(tc.wantLimit != 0, 200*time.Millisecond)):
				if tc.wantLimit != 0 {
					t.Fatalf("not stopped at %d past the start", tc.resident)
				}
			}
		})
	}
}

// quiet is how long a test watches for an event: until it comes (or a
// minute, a hang) when it must, for window when it must not, so that a
// loaded host that makes it late fails nothing.
func quiet(must bool, window time.Duration) time.Duration {
	if must {
		return time.Minute
	}
	return window
}
