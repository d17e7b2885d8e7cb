package tcp

import (
	"testing"
	"time"
)

// TestAdaptiveSpin checks how long a reader polls after a history of
// polls that ended with data early (won with most of the time left), late
// (won with little left) or not at all (polled).
func TestAdaptiveSpin(t *testing.T) {
	budget := spinBudget
	if budget <= 0 {
		t.Skip("polling is off (HCCL_TEST_SPIN=0)")
	}
	// A stopped reader's probe polls for budget/8.
	poll := func(p *pollReader) time.Duration { return max(p.spin, budget/8) }
	early := func(p *pollReader) { p.won(poll(p), poll(p)) }
	late := func(p *pollReader) { p.won(0, poll(p)) }
	lost := (*pollReader).polled
	tests := []struct {
		name    string
		history []func(*pollReader)
		want    time.Duration
	}{
		{"fresh", nil, budget},
		{"early wins keep polling", []func(*pollReader){early, early, early}, budget},
		{"a poll run out stops it", []func(*pollReader){early, lost}, 0},
		{"a late win stops it", []func(*pollReader){late}, 0},
		{"a probe that wins resumes", []func(*pollReader){lost, early}, budget / 8},
		{"a probe that wins late does not", []func(*pollReader){lost, late}, 0},
		{"wins grow it back", []func(*pollReader){lost, early, early, early}, 3 * budget / 8},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := &pollReader{spin: budget}
			for _, f := range tc.history {
				f(p)
			}
			if p.spin != tc.want {
				t.Fatalf("polls for %v, want %v", p.spin, tc.want)
			}
		})
	}
	// Stopped, it probes once every probeEvery waits.
	p := &pollReader{}
	probes := 0
	for range 10 * probeEvery {
		if p.spinFor() > 0 {
			probes++
		}
	}
	if probes != 10 {
		t.Fatalf("%d probes in %d waits, want 10", probes, 10*probeEvery)
	}
}
