package kit

import (
	"context"
	"errors"
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
			case <-time.After(500 * time.Millisecond):
				if tt.wantErr {
					t.Fatal("overrunning op not stopped within 10 timeouts")
				}
			}
		})
	}
}

// TestWatchdogArmNow: an op armed without a clock reading is ended as a
// timeout, not before the timeout and within ten of them, and ops armed
// one after another, each shorter than the timeout, are not.
func TestWatchdogArmNow(t *testing.T) {
	const timeout = 50 * time.Millisecond
	tests := []struct {
		name    string
		every   time.Duration // re-arm period, 0 for once
		wantErr bool
	}{
		{"an op that overruns ends the context as a timeout", 0, true},
		{"short ops back to back do not add up", timeout / 5, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := NewWatchdog(context.Background(), timeout)
			defer w.Stop()
			start := time.Now()
			w.ArmNow()
			var rearm <-chan time.Time
			if tt.every > 0 {
				tick := time.NewTicker(tt.every)
				defer tick.Stop()
				rearm = tick.C
			}
			end := time.After(10 * timeout)
			for {
				select {
				case <-rearm:
					w.ArmNow()
					continue
				case <-w.ctx.Done():
					if !tt.wantErr {
						t.Fatal("context ended while every op was shorter than the timeout")
					}
					if took := time.Since(start); took < timeout {
						t.Fatalf("ended after %v, before the timeout %v", took, timeout)
					}
					if err := backends.ContextError(w.ctx); !errors.Is(err, backends.ErrTimeout) {
						t.Fatalf("got %v, want ErrTimeout", err)
					}
				case <-end:
					if tt.wantErr {
						t.Fatal("overrunning op not stopped within 10 timeouts")
					}
				}
				return
			}
		})
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
