package isolate

import (
	"math"
	"slices"
	"strings"
	"testing"
)

// TestPlan checks the plan against its definition: one measurement per
// pair of hosts, local rank i against local rank i (so that a host of
// fewer ranks leaves the other's extra ranks out), then the halvings with
// all their hosts' ranks, each slot's measurements on disjoint ranks.
func TestPlan(t *testing.T) {
	for _, tc := range []struct {
		name      string
		hosts     []string
		pairs     int
		rails     int // rails of every pair
		slots     int
		groupSize []int
	}{
		{"4 hosts of 2", []string{"a", "a", "b", "b", "c", "c", "d", "d"}, 6, 2, 4, []int{4, 4}},
		{"3 hosts of 1", []string{"a", "b", "c"}, 3, 1, 3, nil},
		{"ranks interleaved", []string{"a", "b", "a", "b"}, 1, 2, 1, nil},
		{"6 hosts of 1", []string{"a", "b", "c", "d", "e", "f"}, 15, 1, 6, []int{3, 3}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := newPlan(tc.hosts)
			if err != nil {
				t.Fatal(err)
			}
			var pairs int
			var groups []int
			busy := map[[2]int]bool{} // slot, rank
			for _, m := range p.meas {
				var ranks []int
				if m.Level == 0 {
					pairs++
					if len(m.Rails) != tc.rails {
						t.Errorf("pair %v: %d rails, want %d", m.Hosts, len(m.Rails), tc.rails)
					}
					for i, r := range m.Rails {
						a, b := p.ranksOf[m.Hosts[0]], p.ranksOf[m.Hosts[1]]
						if r != [2]int{a[i], b[i]} {
							t.Errorf("pair %v rail %d: ranks %v, want %d and %d", m.Hosts, i, r, a[i], b[i])
						}
						ranks = append(ranks, r[0], r[1])
					}
				} else {
					groups = append(groups, len(m.Ranks))
					ranks = m.Ranks
				}
				for _, r := range ranks {
					if busy[[2]int{m.Slot, r}] {
						t.Errorf("slot %d: rank %d in two measurements", m.Slot, r)
					}
					busy[[2]int{m.Slot, r}] = true
					if _, _, ok := m.part(r); !ok {
						t.Errorf("rank %d of %v has no part in it", r, m.Hosts)
					}
				}
			}
			if pairs != tc.pairs || p.slots != tc.slots || !slices.Equal(groups, tc.groupSize) {
				t.Errorf("%d pairs, %d slots, groups %v; want %d, %d, %v", pairs, p.slots, groups, tc.pairs, tc.slots, tc.groupSize)
			}
		})
	}
	if _, err := newPlan([]string{"a", "a"}); err == nil || !strings.Contains(err.Error(), "2 hosts or more") {
		t.Errorf("one host: %v, want a refusal", err)
	}
}

// TestLiveReportMerge checks how the ranks' views of a measurement make
// its verdict: the slower side's time, a failure on either side, a rail
// nobody reported, wrong bytes, and a group that is slow only together.
func TestLiveReportMerge(t *testing.T) {
	hosts := []string{"a", "b", "c", "d", "e"}
	p, err := newPlan(hosts)
	if err != nil {
		t.Fatal(err)
	}
	o := DefaultLiveOptions()
	o.Bytes = 1e9 // 1 s is 1 GB/s
	// Every pair's two sides at 1 s but: ab's slower side at 1.25 s
	// (0.8 GB/s), ad failed on one side, bd with wrong bytes, be not
	// reported; no host is bad with more than half of its 4 peers.
	odd := map[string][2]result{
		"ab": {{Seconds: 1}, {Seconds: 1.25}},
		"ad": {{Seconds: 1}, {Err: "rank 3: timed out"}},
		"bd": {{Seconds: 1}, {Seconds: 1, Wrong: 7}},
	}
	var all []result
	for mi, m := range p.meas {
		name := ""
		for _, h := range m.Hosts {
			name += hosts[h]
		}
		if m.Level > 0 {
			// Groups {a,b,c} and {d,e}: the second at a fifth of the first.
			s := 1.0
			if name == "de" {
				s = 5
			}
			for _, r := range m.Ranks {
				all = append(all, result{M: mi, Rail: -1, Rank: r, Seconds: s})
			}
			continue
		}
		if name == "be" {
			continue
		}
		views, ok := odd[name]
		if !ok {
			views = [2]result{{Seconds: 1}, {Seconds: 1}}
		}
		for i, v := range views {
			v.M, v.Rank = mi, m.Rails[0][i]
			all = append(all, v)
		}
	}
	r := liveReport(o, p, all, p.slots, map[int]string{1: "timed out"})
	want := map[string]struct {
		verdict string
		figure  float64
		why     string
	}{
		"ab": {OK, 0.8, ""}, "ad": {Failed, math.NaN(), "rank 3: timed out"},
		"bd": {Failed, math.NaN(), "7 wrong bytes"}, "be": {Failed, math.NaN(), "no report from either rank"},
	}
	for _, pr := range r.Pairs {
		w, ok := want[pr.A+pr.B]
		if !ok {
			w.verdict, w.figure = OK, 1
		}
		if pr.Verdict != w.verdict || !(pr.Figure == w.figure || math.IsNaN(w.figure) && math.IsNaN(pr.Figure)) ||
			!strings.Contains(strings.Join(pr.Failures, ""), w.why) {
			t.Errorf("pair %s-%s: %s %v %v; want %s %v %q", pr.A, pr.B, pr.Verdict, pr.Figure, pr.Failures, w.verdict, w.figure, w.why)
		}
	}
	if hosts, _, _ := r.Named(); len(hosts) != 0 {
		t.Errorf("named hosts %v, want none", hosts)
	}
	if len(r.Unreported) != 1 || !strings.HasPrefix(r.Unreported[0], "rank 1 (b): timed out") {
		t.Errorf("unreported %v", r.Unreported)
	}
	// {a,b,c}: an allreduce of 3 ranks moves 4/3 its bytes, 1.33 GB/s
	// against its pairs' median 1; {d,e}: 0.2 against 1. With two groups
	// the faster is the baseline, at most 1; {d,e}, whose pair is good,
	// is slow only together, and named.
	for _, g := range r.Groups {
		slow := g.Hosts[0] == "d"
		if g.Named != slow || slow && g.Verdict != Slow || !slow && g.Verdict != OK {
			t.Errorf("group %v: ratio %.2f, %s, named %v (baseline %.2f)", g.Hosts, g.Ratio, g.Verdict, g.Named, r.GroupBaseline)
		}
	}
}

// TestLiveReportStoppedUnknown: a pair that no rank reported failed in a
// search that ran every slot, but is left out, neither good nor bad, of
// one that was stopped, whose gathers a stop cuts short too (rank 0
// stopped alone read its peers' messages of later measurements instead
// of their reports, and a healthy host was named for its pairs).
func TestLiveReportStoppedUnknown(t *testing.T) {
	hosts := []string{"a", "b", "c", "d"}
	p, err := newPlan(hosts)
	if err != nil {
		t.Fatal(err)
	}
	o := DefaultLiveOptions()
	o.Bytes = 1e9
	var all []result
	for mi, m := range p.meas {
		if m.Level > 0 || hosts[m.Hosts[0]]+hosts[m.Hosts[1]] == "bc" {
			continue // bc reported by neither rank; no group measured
		}
		for _, r := range m.Rails[0] {
			all = append(all, result{M: mi, Rank: r, Seconds: 1})
		}
	}
	tests := []struct {
		name      string
		ran       int
		wantPairs int
		wantBC    string // bc's verdict, "" when left out
	}{
		{name: "every slot ran", ran: p.slots, wantPairs: 6, wantBC: Failed},
		{name: "stopped after the rounds", ran: p.pairSlots, wantPairs: 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := liveReport(o, p, all, tt.ran, nil)
			bc := ""
			for _, pr := range r.Pairs {
				if pr.A+pr.B == "bc" {
					bc = pr.Verdict
				}
			}
			if len(r.Pairs) != tt.wantPairs || bc != tt.wantBC {
				t.Errorf("%d pairs, bc %q; want %d, %q", len(r.Pairs), bc, tt.wantPairs, tt.wantBC)
			}
			if tt.ran < p.slots && len(r.Groups) != 0 {
				t.Errorf("%d groups, want none: none was reported", len(r.Groups))
			}
			if hosts, _, _ := r.Named(); tt.ran < p.slots && len(hosts) != 0 {
				t.Errorf("named hosts %v, want none", hosts)
			}
		})
	}
}
