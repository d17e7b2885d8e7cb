package scenario

import (
	"math"
	"strings"
	"testing"
)

// TestMedianInterval checks the order-statistics interval of a median
// against the binomial confidences worked out by hand: 6 values give
// (x1, x6) at 1 - 2/64; 20 give (x6, x15) at 1 - 2 P(B <= 5) = 0.9586.
func TestMedianInterval(t *testing.T) {
	seq := func(n int) []float64 {
		x := make([]float64, n)
		for i := range x {
			x[i] = float64(n - i) // descending: the function sorts
		}
		return x
	}
	for _, tc := range []struct {
		x                 []float64
		med, lo, hi, conf float64
	}{
		{[]float64{7}, 7, 7, 7, 0},
		{seq(3), 2, 1, 3, 0.75},
		{seq(6), 3.5, 1, 6, 1 - 2.0/64},
		{seq(20), 10.5, 6, 15, 0.9586},
	} {
		med, lo, hi, conf := medianInterval(tc.x)
		if med != tc.med || lo != tc.lo || hi != tc.hi || math.Abs(conf-tc.conf) > 1e-4 {
			t.Errorf("%v: median %v in %v..%v at %.4f, want %v in %v..%v at %.4f", tc.x, med, lo, hi, conf, tc.med, tc.lo, tc.hi, tc.conf)
		}
	}
}

// TestVerdictNeedsSeparatedIntervals: a domain is called critical only
// when its interval lies above zero and above every other domain's;
// overlapping intervals, or one that reaches zero, make the report say
// the run cannot tell, whatever the means; and so do intervals of too few
// rounds, or a domain whose beta probes did not agree.
func TestVerdictNeedsSeparatedIntervals(t *testing.T) {
	dom := func(name string, change, lo, hi float64) Domain {
		return Domain{Domain: name, Groups: 1, GroupSize: 2, Links: true, BetaAgreed: true, ChangePct: change, ChangeLoPct: lo, ChangeHiPct: hi}
	}
	unsettled := dom("tp", 4, 2, 6)
	unsettled.BetaAgreed = false
	for _, tc := range []struct {
		name     string
		domains  []Domain
		rounds   int // 0: 20 rounds; else so many (negative: in virtual time)
		critical string
		line     string
	}{
		{"separated", []Domain{dom("tp", 4, 2, 6), dom("ep", 13.5, 8, 19)}, 0, "ep",
			"# critical domain: ep (a 50% slower ep link makes the step 13.5% slower; its interval +8.0..+19.0% lies above zero and above every other domain's)"},
		{"overlapping", []Domain{dom("tp", 4, -3, 30), dom("ep", 261.6, 5, 400)}, 0, "",
			"# critical domain: cannot tell (ep leads at +261.6%, but its interval +5.0..+400.0% overlaps tp's -3.0..+30.0%; more iterations may separate them)"},
		{"touching", []Domain{dom("tp", 4, 1, 5), dom("ep", 6, 5, 7)}, 0, "", "# critical domain: cannot tell (ep leads"},
		{"above the others but not zero", []Domain{dom("tp", -4, -9, -5), dom("ep", 1, -1, 3)}, 0, "",
			"# critical domain: cannot tell (ep leads at +1.0%, but its interval -1.0..+3.0% includes no slowdown;"},
		{"alone and above zero", []Domain{dom("dp", 3, 1, 5), {Domain: "tp", Groups: 8, GroupSize: 1}}, 0, "dp",
			"# critical domain: dp (a 50% slower dp link makes the step 3.0% slower; its interval +1.0..+5.0% lies above zero)"},
		{"separated, but 2 rounds", []Domain{dom("tp", 139.7, 53.8, 323.6), dom("dp", -1.3, -19.9, 38.5)}, 2, "",
			"# critical domain: cannot tell (tp leads at +139.7%, but 2 rounds give intervals of only 50% confidence (10 iterations or more give 5 rounds and 94%))"},
		{"separated in virtual time, 2 rounds", []Domain{dom("tp", 1, 1, 1), dom("dp", 13.7, 13.7, 13.7)}, -2, "dp",
			"# critical domain: dp (a 50% slower dp link makes the step 13.7% slower; its interval +13.7..+13.7% lies above zero and above every other domain's)"},
		{"separated, but a beta unsettled", []Domain{unsettled, dom("ep", 13.5, 8, 19)}, 0, "",
			"# critical domain: cannot tell (ep leads at +13.5%, but the beta probes of tp did not agree, so the holds that slowed them are uncertain)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep := &Report{Scenario: "t", Ranks: 2, SlowdownPct: 50, Rounds: 20, IntervalConfidencePct: 95.9, Domains: tc.domains}
			if tc.rounds != 0 {
				rep.Rounds, rep.IntervalConfidencePct = max(tc.rounds, -tc.rounds), 50
			}
			for _, d := range tc.domains {
				if d.Links && (rep.Leading == "" || d.ChangePct > rep.CriticalChangePct) {
					rep.Leading, rep.CriticalChangePct = d.Domain, d.ChangePct
				}
			}
			rep.decide(tc.rounds < 0)
			if rep.Critical != tc.critical || rep.CannotTell != (tc.critical == "") {
				t.Errorf("critical %q (cannot tell %v), want %q", rep.Critical, rep.CannotTell, tc.critical)
			}
			var b strings.Builder
			if err := rep.WriteText(&b); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(b.String(), tc.line) {
				t.Errorf("report lacks %q:\n%s", tc.line, b.String())
			}
		})
	}
}
