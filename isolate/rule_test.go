package isolate

import (
	"math"
	"testing"
)

// TestRuleLogScale runs the rule on the pairs of a live search between
// six network namespaces of a loaded machine (h2 rate-limited, h4's link
// taken down): healthy pairs spread from 0.16 to 0.52 GB/s, which put
// median - 3 MAD on GB/s below zero, so that nothing was slow; on the
// logarithms the limited host is named, and the downed one by its
// failures, and no other host.
func TestRuleLogScale(t *testing.T) {
	failed := math.NaN()
	pairs := []struct {
		a, b string
		v    float64
	}{
		{"h1", "h2", 0.001815}, {"h1", "h3", 0.2147}, {"h1", "h4", failed}, {"h1", "h5", 0.2132}, {"h1", "h6", 0.5177},
		{"h2", "h3", 0.00191}, {"h2", "h4", failed}, {"h2", "h5", 0.002232}, {"h2", "h6", 0.001819},
		{"h3", "h4", 0.06184}, {"h3", "h5", 0.1599}, {"h3", "h6", 0.2926},
		{"h4", "h5", failed}, {"h4", "h6", failed}, {"h5", "h6", 0.3},
	}
	var logs []*Log
	for _, p := range pairs {
		l := &Log{Path: p.a + "-" + p.b, Hosts: [2]string{p.a, p.b}, Unit: "busbw", Figure: map[int64]float64{}}
		if math.IsNaN(p.v) {
			l.Failure = "timed out"
		} else {
			l.Figure[1<<22] = p.v
		}
		logs = append(logs, l)
	}
	r := Analyze(logs, "sendrecv", DefaultConfig())
	if r.Threshold <= 0 || r.Threshold > 0.8*r.Median {
		t.Errorf("threshold %v, median %v: want above 0 and at most 0.8 x the median", r.Threshold, r.Median)
	}
	hosts, _ := r.Named()
	var names []string
	for _, h := range hosts {
		names = append(names, h.Name)
	}
	if len(names) != 2 || names[0] != "h2" || names[1] != "h4" {
		t.Errorf("named %v, want h2 then h4 (median %.3g, MAD %.3g, threshold %.3g)", names, r.Median, r.MAD, r.Threshold)
	}
}
