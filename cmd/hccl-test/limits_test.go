package main

import (
	"strings"
	"testing"
	"time"
)

// TestSimClockLimit runs simulated worlds whose virtual time passes what a
// clock can count (a tiny bandwidth, a week's delay on every message, a
// week-slow rank): each run fails (exit 1) with one line naming the clock's
// limit, the rank and the op, instead of wrapping to a time of 0 and
// passing.
func TestSimClockLimit(t *testing.T) {
	bin := buildBinary(t)
	tests := []struct {
		name string
		args []string
	}{
		{"tiny link", []string{"--link-bw", "1B/s", "-b", "1G", "-e", "1G", "-n", "20", "--sim-data=false", "-p", "4"}},
		{"tiny injected bw", []string{"--inject", "bw=1B/s", "-b", "256M", "-e", "1G", "-n", "20", "--sim-data=false", "-p", "4"}},
		{"week delays", []string{"--inject", "delay=168h", "-b", "1K", "-e", "1K", "-n", "100000", "-p", "8"}},
		{"week-slow rank", []string{"--inject", "slow=168h@rank=1", "-b", "1K", "-e", "1K", "-n", "10000", "-p", "8"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"--backend", "sim", "-w", "0"}, tc.args...)
			start := time.Now()
			_, stderr, code := runBinary(t, bin, args...)
			if code != exitFailed {
				t.Fatalf("exit %d, want %d; stderr %q", code, exitFailed, stderr)
			}
			if took := time.Since(start); took > 30*time.Second {
				t.Errorf("took %v", took)
			}
			if strings.Count(stderr, "\n") != 1 {
				t.Errorf("stderr %q: want one line", stderr)
			}
			for _, want := range []string{"the virtual clock reached its limit of 100 years", "rank ", "op #"} {
				if !strings.Contains(stderr, want) {
					t.Errorf("stderr %q lacks %q", stderr, want)
				}
			}
		})
	}
}
