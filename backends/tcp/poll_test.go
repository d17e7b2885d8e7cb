package tcp

import "testing"

// TestAdaptiveSpin checks whether a reader polls after a history of polls
// that ended with data early (won with most of the time left), late (won
// with little left) or not at all (lost), and that a reader that has
// stopped probes now and then.
func TestAdaptiveSpin(t *testing.T) {
	budget := spinBudget
	if budget <= 0 {
		t.Skip("polling is off (HCCL_TEST_SPIN=0)")
	}
	early := func(p *pollReader) { p.won(budget, budget) }
	late := func(p *pollReader) { p.won(budget/4, budget) }
	lost := (*pollReader).polled
	tests := []struct {
		name    string
		history []func(*pollReader)
		polls   bool
	}{
		{"fresh", nil, true},
		{"early wins", []func(*pollReader){early, early, early}, true},
		{"one poll lost of many", []func(*pollReader){early, lost, early, early, lost}, true},
		{"two in a row lost", []func(*pollReader){lost, lost}, false},
		{"late wins count as lost", []func(*pollReader){late, late}, false},
		{"lost half the time", []func(*pollReader){early, lost, early, lost, early, lost, early, lost}, false},
		{"a probe that wins resumes", []func(*pollReader){lost, lost, early}, true},
		{"a probe that wins late does not", []func(*pollReader){lost, lost, late}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := &pollReader{credit: maxCredit}
			for _, f := range tc.history {
				f(p)
			}
			if got := p.spinFor() > 0; got != tc.polls {
				t.Fatalf("polls: %v, want %v (credit %d)", got, tc.polls, p.credit)
			}
		})
	}
	// Stopped, it probes, for the whole budget, once every probeEvery waits.
	p := &pollReader{}
	probes := 0
	for range 10 * probeEvery {
		switch d := p.spinFor(); d {
		case 0:
		case budget:
			probes++
		default:
			t.Fatalf("a probe polls for %v, want %v", d, budget)
		}
	}
	if probes != 10 {
		t.Fatalf("%d probes in %d waits, want 10", probes, 10*probeEvery)
	}
}
