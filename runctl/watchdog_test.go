package runctl

import (
	"context"
	"errors"
	"runtime"
	"testing"
	"time"

	"github.com/hccl-test/hccl-test/backends"
)

func TestOpWatchdog(t *testing.T) {
	tests := []struct {
		name    string
		armed   bool
		wantErr bool
	}{
		{"an op that overruns ends the context as a timeout", true, true},
		{"time between ops does not count", false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := NewWatchdog(context.Background(), 50*time.Millisecond)
			defer w.Stop()
			if tt.armed {
				w.Arm(time.Now())
			}
			select {
			case <-w.ctx.Done():
				if !tt.wantErr {
					t.Fatal("context ended with no op running")
				}
				if err := backends.ContextError(w.ctx); !errors.Is(err, backends.ErrTimeout) {
					t.Fatalf("got %v, want ErrTimeout", err)
				}
			case <-time.After(watchdogQuiet(tt.wantErr)):
				if tt.wantErr {
					t.Fatal("overrunning op not stopped")
				}
			}
		})
	}
}

// watchdogHang is how long a test waits for a watchdog that must end an
// op: far past its timeout, so that only one that never fires fails, not
// one a loaded host made late.
const watchdogHang = 30 * time.Second

// watchdogQuiet is how long a test watches a watchdog: until it fires (or
// watchdogHang) when it must, for ten 50 ms timeouts when it must not.
func watchdogQuiet(mustFire bool) time.Duration {
	if mustFire {
		return watchdogHang
	}
	return 500 * time.Millisecond
}

// TestWatchdogArmNow: an op armed without a clock reading is ended as a
// timeout, not before the timeout, and ops armed one after another, each
// shorter than the timeout, are not.
func TestWatchdogArmNow(t *testing.T) {
	t.Run("an op that overruns ends the context as a timeout", func(t *testing.T) {
		const timeout = 50 * time.Millisecond
		w := NewWatchdog(context.Background(), timeout)
		defer w.Stop()
		start := time.Now()
		w.ArmNow()
		select {
		case <-w.ctx.Done():
			if took := time.Since(start); took < timeout {
				t.Fatalf("ended after %v, before the timeout %v", took, timeout)
			}
			if err := backends.ContextError(w.ctx); !errors.Is(err, backends.ErrTimeout) {
				t.Fatalf("got %v, want ErrTimeout", err)
			}
		case <-time.After(watchdogHang):
			t.Fatalf("overrunning op not stopped %v later", watchdogHang)
		}
	})
	// A loaded host can hold the re-arming goroutine past the timeout,
	// and then the watchdog is right to end the op: only an end while
	// every op, as the re-arming goroutine timed it, was shorter than the
	// timeout is wrong. A try that tells nothing runs again with the
	// timeout doubled.
	t.Run("short ops back to back do not add up", func(t *testing.T) {
		for timeout := 50 * time.Millisecond; ; timeout *= 2 {
			longest, ended := armBackToBack(timeout)
			if !ended {
				return
			}
			if longest < timeout {
				t.Fatalf("context ended while every op was shorter than the timeout %v (longest %v)", timeout, longest)
			}
			if timeout >= 2*time.Second {
				t.Fatalf("an op ran %v, past the timeout %v, at every try: the host is too loaded to tell", longest, timeout)
			}
			t.Logf("an op ran %v, past the timeout %v, on a loaded host: again with the timeout doubled", longest, timeout)
		}
	})
}

// armBackToBack arms a watchdog of timeout for op after op, each a fifth
// of the timeout long, for ten timeouts; it returns the longest op as
// timed here and whether the watchdog ended the context.
func armBackToBack(timeout time.Duration) (longest time.Duration, ended bool) {
	w := NewWatchdog(context.Background(), timeout)
	defer w.Stop()
	tick := time.NewTicker(timeout / 5)
	defer tick.Stop()
	end := time.After(10 * timeout)
	last := time.Now()
	w.ArmNow()
	for {
		select {
		case <-tick.C:
			now := time.Now()
			longest, last = max(longest, now.Sub(last)), now
			w.ArmNow()
		case <-w.ctx.Done():
			return max(longest, time.Since(last)), true
		case <-end:
			return longest, false
		}
	}
}

// BenchmarkWatchdogArm is what arming and disarming the watchdog costs per
// op: with the start read from the clock (Arm), and without (ArmNow).
func BenchmarkWatchdogArm(b *testing.B) {
	w := NewWatchdog(context.Background(), time.Minute)
	defer w.Stop()
	b.Run("Arm", func(b *testing.B) {
		for b.Loop() {
			w.Arm(time.Now())
			w.Disarm()
		}
	})
	b.Run("ArmNow", func(b *testing.B) {
		for b.Loop() {
			w.ArmNow()
			w.Disarm()
		}
	})
}

// TestWatchPeriod: the watchdog ends an op at most two periods after its
// time limit; that lateness stays within a fifth of a second whatever the
// limit (a stopped rank is named within a second of -T), and within a
// quarter of the limit for short ones.
func TestWatchPeriod(t *testing.T) {
	tests := []struct {
		timeout  time.Duration
		maxLate  time.Duration
		minValue time.Duration
	}{
		{time.Microsecond, 2 * time.Millisecond, time.Millisecond},
		{40 * time.Millisecond, 10 * time.Millisecond, time.Millisecond},
		{time.Second, 250 * time.Millisecond, time.Millisecond},
		{5 * time.Second, 200 * time.Millisecond, time.Millisecond},
		{2 * time.Minute, 200 * time.Millisecond, time.Millisecond},
		{24 * time.Hour, 200 * time.Millisecond, time.Millisecond},
	}
	for _, tc := range tests {
		p := watchPeriod(tc.timeout)
		if late := 2 * p; late > tc.maxLate || p < tc.minValue {
			t.Errorf("timeout %v: period %v ends an op up to %v late, want at most %v (and a period of at least %v)",
				tc.timeout, p, late, tc.maxLate, tc.minValue)
		}
	}
}

// TestWatchdogsShareTicker: the watchdogs of one period (a world's ranks,
// each with its row's) share one goroutine, and each still ends its own
// op alone: the one armed op that overruns ends its context, and the
// others, between ops, stay alive.
func TestWatchdogsShareTicker(t *testing.T) {
	const n, timeout = 1000, 50 * time.Millisecond
	before := runtime.NumGoroutine()
	dogs := make([]*Watchdog, n)
	for i := range dogs {
		dogs[i] = NewWatchdog(context.Background(), timeout)
	}
	if grew := runtime.NumGoroutine() - before; grew > n/10 {
		t.Errorf("%d watchdogs started %d goroutines, want them to share one", n, grew)
	}
	dogs[n/2].ArmNow()
	select {
	case <-dogs[n/2].Context().Done():
	case <-time.After(watchdogHang):
		t.Fatal("overrunning op not stopped")
	}
	for i, w := range dogs {
		if i != n/2 && w.Context().Err() != nil {
			t.Fatalf("watchdog %d ended with no op running: %v", i, context.Cause(w.Context()))
		}
	}
	for _, w := range dogs {
		w.Stop()
	}
	w := NewWatchdog(context.Background(), timeout) // a fresh hub after the last one stopped
	defer w.Stop()
	w.ArmNow()
	select {
	case <-w.Context().Done():
	case <-time.After(watchdogHang):
		t.Fatal("overrunning op not stopped after every earlier watchdog stopped")
	}
}

// TestWatchdogStopKeepsOthersWatched: the hub keeps its watchdogs in a
// slice, the last taking the slot of one that stops. Whichever stop
// (first, middle, last, all but one), the hub holds exactly the others,
// each at its slot, and a stuck op on one still standing (one that was
// moved into a stopped one's slot among them) is still ended.
func TestWatchdogStopKeepsOthersWatched(t *testing.T) {
	const n, timeout = 8, 50 * time.Millisecond
	tests := []struct {
		name  string
		stop  []int // indexes stopped, in this order
		stuck int   // the index whose op then overruns
	}{
		{"the first stops", []int{0}, n - 1},
		{"the last stops", []int{n - 1}, 0},
		{"one in the middle stops", []int{3}, n - 1},
		{"several, out of order", []int{5, 0, 7, 2}, 6},
		{"all but one", []int{0, 1, 2, 3, 4, 5, 7}, 6},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dogs := make([]*Watchdog, n)
			for i := range dogs {
				dogs[i] = NewWatchdog(context.Background(), timeout)
			}
			stopped := map[int]bool{}
			for _, i := range tc.stop {
				dogs[i].Stop()
				stopped[i] = true
			}
			defer func() {
				for i, w := range dogs {
					if !stopped[i] {
						w.Stop()
					}
				}
			}()
			h := dogs[tc.stuck].h
			hubs.mu.Lock()
			held := map[*Watchdog]bool{}
			for slot, w := range h.dogs {
				held[w] = true
				if w.slot != slot {
					t.Errorf("a watchdog at slot %d says it is at %d", slot, w.slot)
				}
			}
			hubs.mu.Unlock()
			for i, w := range dogs {
				if held[w] == stopped[i] {
					t.Errorf("watchdog %d: held by the hub %v, stopped %v", i, held[w], stopped[i])
				}
			}
			dogs[tc.stuck].ArmNow()
			select {
			case <-dogs[tc.stuck].Context().Done():
			case <-time.After(watchdogHang):
				t.Fatal("overrunning op not stopped")
			}
		})
	}
}
