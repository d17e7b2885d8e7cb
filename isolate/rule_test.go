package isolate

import (
	"bytes"
	"math"
	"slices"
	"strings"
	"testing"
)

// failed marks a pair whose measurement failed.
var failed = math.NaN()

// figures is a pair of hosts and its figure in GB/s (failed: NaN).
type figures = []struct {
	a, b string
	v    float64
}

// analyzePairs runs the rule on one made-up log per pair.
func analyzePairs(pairs figures) *Report {
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
	return Analyze(logs, "sendrecv", DefaultConfig())
}

// TestRuleLogScale runs the rule on the pairs of a live search between
// six network namespaces of a loaded machine (h2 rate-limited, h4's link
// taken down): healthy pairs spread from 0.16 to 0.52 GB/s, which put
// median - 3 MAD on GB/s below zero, so that nothing was slow; on the
// logarithms the limited host is named, and the downed one by its
// failures, and no other host.
func TestRuleLogScale(t *testing.T) {
	r := analyzePairs(figures{
		{"h1", "h2", 0.001815}, {"h1", "h3", 0.2147}, {"h1", "h4", failed}, {"h1", "h5", 0.2132}, {"h1", "h6", 0.5177},
		{"h2", "h3", 0.00191}, {"h2", "h4", failed}, {"h2", "h5", 0.002232}, {"h2", "h6", 0.001819},
		{"h3", "h4", 0.06184}, {"h3", "h5", 0.1599}, {"h3", "h6", 0.2926},
		{"h4", "h5", failed}, {"h4", "h6", failed}, {"h5", "h6", 0.3},
	})
	if r.Threshold <= 0 || r.Threshold > 0.8*r.Median {
		t.Errorf("threshold %v, median %v: want above 0 and at most 0.8 x the median", r.Threshold, r.Median)
	}
	if names, _ := named(r); !slices.Equal(names, []string{"h2", "h4"}) {
		t.Errorf("named %v, want h2 then h4 (median %.3g, MAD %.3g, threshold %.3g)", names, r.Median, r.MAD, r.Threshold)
	}
}

// sixNamespaces is the pattern of the six-namespace live runs of
// docs/isolate.md: h2 rate-limited (0.002 GB/s with everyone), h4's link
// down after its pairs with h3 and h6 were measured (failed with h1, h2,
// h5), h5 busy (no slower than the healthy hosts), healthy pairs 0.25 to
// 0.70 GB/s; noisy, if not empty, is one pair between healthy hosts that
// the loaded machine slowed to 0.073 GB/s.
func sixNamespaces(noisy string) figures {
	ps := figures{
		{"h1", "h2", 0.00202}, {"h1", "h3", 0.31}, {"h1", "h4", failed}, {"h1", "h5", 0.26}, {"h1", "h6", 0.29},
		{"h2", "h3", 0.0021}, {"h2", "h4", failed}, {"h2", "h5", 0.0025}, {"h2", "h6", 0.00246},
		{"h3", "h4", 0.28}, {"h3", "h5", 0.25}, {"h3", "h6", 0.45},
		{"h4", "h5", failed}, {"h4", "h6", 0.70},
		{"h5", "h6", 0.27},
	}
	for i := range ps {
		if ps[i].a+"-"+ps[i].b == noisy {
			ps[i].v = 0.0731
		}
	}
	return ps
}

// TestRuleExplainsAway pins the host verdict on the patterns of the live
// runs: a host bad only with hosts named on stronger evidence, plus one
// pair slowed by noise, is not named (the rule of "more than half of all
// its pairs" named h1 or h5 there), and a host whose link went down is
// named with exactly half of its remaining pairs failed. The three-host
// and four-host cases are the rule's small limits.
func TestRuleExplainsAway(t *testing.T) {
	tests := []struct {
		name      string
		pairs     figures
		wantHosts []string
		wantPairs []string
		wantText  string // in the report, if not empty
	}{
		{name: "six namespaces, a healthy host with a noisy pair", pairs: sixNamespaces("h1-h6"),
			wantHosts: []string{"h2", "h4"}, wantPairs: []string{"h1-h6:slow"},
			wantText: "named host 2: h4, bad with 3 of its 5 peers, 2 of 4 without those with hosts named before it"},
		{name: "six namespaces, the busy host with a noisy pair", pairs: sixNamespaces("h3-h5"),
			wantHosts: []string{"h2", "h4"}, wantPairs: []string{"h3-h5:slow"}},
		{name: "six namespaces, no noise", pairs: sixNamespaces(""), wantHosts: []string{"h2", "h4"}},
		{name: "a host down after half its pairs", pairs: figures{
			{"h1", "h2", 0.30}, {"h1", "h3", 0.31}, {"h1", "h4", 0.29}, {"h1", "h5", failed},
			{"h2", "h3", 0.30}, {"h2", "h4", 0.32}, {"h2", "h5", failed},
			{"h3", "h4", 0.28}, {"h3", "h5", 0.30},
			{"h4", "h5", 0.31},
		}, wantHosts: []string{"h5"}},
		{name: "half slow is not enough", pairs: figures{
			{"h1", "h2", 0.30}, {"h1", "h3", 0.31}, {"h1", "h4", 0.29}, {"h1", "h5", 0.05},
			{"h2", "h3", 0.30}, {"h2", "h4", 0.32}, {"h2", "h5", 0.05},
			{"h3", "h4", 0.28}, {"h3", "h5", 0.30},
			{"h4", "h5", 0.31},
		}, wantPairs: []string{"h1-h5:slow", "h2-h5:slow"}},
		{name: "three hosts, one down", pairs: figures{{"h1", "h2", 0.3}, {"h1", "h3", failed}, {"h2", "h3", failed}},
			wantHosts: []string{"h3"}},
		{name: "three hosts, a failed link: no host can be told", pairs: figures{{"h1", "h2", failed}, {"h1", "h3", 0.3}, {"h2", "h3", 0.31}},
			wantPairs: []string{"h1-h2:failed"}},
		{name: "four hosts, two down", pairs: figures{
			{"h1", "h2", failed}, {"h1", "h3", failed}, {"h1", "h4", failed},
			{"h2", "h3", failed}, {"h2", "h4", failed},
			{"h3", "h4", 0.3},
		}, wantHosts: []string{"h1", "h2"}},
		{name: "four hosts, one down, one failed link", pairs: figures{
			{"h1", "h2", 0.3}, {"h1", "h3", failed}, {"h1", "h4", failed},
			{"h2", "h3", 0.29}, {"h2", "h4", failed},
			{"h3", "h4", failed},
		}, wantHosts: []string{"h4"}, wantPairs: []string{"h1-h3:failed"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := analyzePairs(tt.pairs)
			hosts, pairs := named(r)
			var text bytes.Buffer
			r.WriteText(&text)
			if !slices.Equal(hosts, tt.wantHosts) || !slices.Equal(pairs, tt.wantPairs) {
				t.Errorf("named hosts %q pairs %q, want %q %q\n%s", hosts, pairs, tt.wantHosts, tt.wantPairs, text.String())
			}
			if !strings.Contains(text.String(), tt.wantText) {
				t.Errorf("the report does not say %q:\n%s", tt.wantText, text.String())
			}
		})
	}
}
