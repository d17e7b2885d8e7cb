package wallbound

import (
	"testing"
	"time"
)

func TestBound(t *testing.T) {
	tests := []struct {
		name               string
		promised, baseline time.Duration
		want               time.Duration
	}{
		{"quick baseline gets the floor", 0, time.Millisecond, Floor},
		{"slow baseline scales", time.Second, time.Second, time.Second + Factor*time.Second},
		{"promised adds", 5 * time.Second, 0, 5*time.Second + Floor},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Bound(tc.promised, tc.baseline); got != tc.want {
				t.Errorf("Bound(%v, %v) = %v, want %v", tc.promised, tc.baseline, got, tc.want)
			}
		})
	}
}

// TestBaselineIsQuickest: of three runs, the baseline is the quickest, so
// one slow run (a pause) does not stretch it.
func TestBaselineIsQuickest(t *testing.T) {
	runs := 0
	got := Baseline(func() {
		runs++
		if runs == 2 {
			time.Sleep(500 * time.Millisecond)
		}
	})
	if runs != 3 {
		t.Errorf("%d runs, want 3", runs)
	}
	if got >= 500*time.Millisecond {
		t.Errorf("baseline %v includes the slow run", got)
	}
}
