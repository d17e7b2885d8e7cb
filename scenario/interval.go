package scenario

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// A domain's sensitivity comes from repetitions: the runs take turns in
// rounds (scenRoundIters), and each round gives one paired figure per
// domain, its slowed run's step time against the baseline's of the same
// round. On a loaded host these figures spread widely (the moe-ep example
// named ep critical at +261.6% on a loaded host, +13.5% on a quiet one),
// so the report gives each domain an interval of the median of its
// rounds' changes, and calls a domain critical only when its interval
// lies above every other domain's and above zero.

// intervalConfidence is the least confidence the interval of a median
// is built for, where the rounds allow it (medianInterval).
const intervalConfidence = 0.95

// roundChanges returns each round's change of the step, in percent, of a
// slowed run's round means against the baseline's.
func roundChanges(base, slowed []float64) []float64 {
	n := min(len(base), len(slowed))
	c := make([]float64, n)
	for k := range n {
		c[k] = 100 * (slowed[k] - base[k]) / max(base[k], 1e-12)
	}
	return c
}

// medianInterval returns the median of x and a distribution-free interval
// for it: the order statistics x(k) and x(n+1-k) with the largest k for
// which the interval holds the median with at least intervalConfidence (a
// sign test's binomial), and that confidence. Below 6 values no k reaches
// it; the interval is then all of x, with the confidence it has.
func medianInterval(x []float64) (med, lo, hi, conf float64) {
	n := len(x)
	if n == 0 {
		return math.NaN(), math.NaN(), math.NaN(), 0
	}
	s := slices.Clone(x)
	slices.Sort(s)
	med = s[n/2]
	if n%2 == 0 {
		med = (s[n/2-1] + s[n/2]) / 2
	}
	// Confidence of [x(k), x(n+1-k)]: 1 - 2 P(B <= k-1), B ~ Bin(n, 1/2).
	k, conf := 1, 1-2*binomCDF(n, 0)
	for j := 2; j <= (n+1)/2; j++ {
		c := 1 - 2*binomCDF(n, j-1)
		if c < intervalConfidence {
			break
		}
		k, conf = j, c
	}
	return med, s[k-1], s[n-k], conf
}

// binomCDF returns P(B <= k) for B ~ Bin(n, 1/2).
func binomCDF(n, k int) float64 {
	p, term := 0.0, math.Pow(0.5, float64(n)) // C(n,0) / 2^n
	for i := 0; i <= k && i <= n; i++ {
		p += term
		term = term * float64(n-i) / float64(i+1)
	}
	return p
}

// separated returns the index of the interval that lies wholly above zero
// and above every other interval, or -1 when none does.
func separated(lo, hi []float64) int {
	best := -1
	for i := range lo {
		if best < 0 || lo[i] > lo[best] {
			best = i
		}
	}
	if best < 0 || !(lo[best] > 0) {
		return -1
	}
	for j := range lo {
		if j != best && !(lo[best] > hi[j]) {
			return -1
		}
	}
	return best
}

// decide names the leading domain critical when its interval lies above
// zero and above every other domain's, and otherwise says the run cannot
// tell.
//
// Two things come first. The intervals must hold their medians with at
// least verdictMinConfidence (5 rounds, 10 iterations, give 93.75%; 2
// rounds, 50%: two runs on a starved host separated by chance). And every
// domain's beta probes must have agreed (runctl.Settle): the holds that slow
// a domain are made from its beta, and a beta read under load makes them
// anything (a 4-rank tcp run read tp's alpha at 195 ms). virtual: the
// run is in virtual time (sim), whose rounds repeat exactly.
func (rep *Report) decide(virtual bool) {
	rep.Critical, rep.CannotTell, rep.CannotTellWhy = "", false, ""
	if rep.Leading == "" {
		return
	}
	rep.CannotTell = true
	// In virtual time (sim) every round repeats the same run exactly:
	// its figures need no confidence.
	if !virtual && rep.IntervalConfidencePct < verdictMinConfidence {
		rep.CannotTellWhy = fmt.Sprintf("%s give intervals of only %.0f%% confidence (%d iterations or more give %d rounds and %.0f%%)",
			countRounds(rep.Rounds), rep.IntervalConfidencePct, verdictMinRounds*scenRoundIters, verdictMinRounds, 100*(1-2*binomCDF(verdictMinRounds, 0)))
		return
	}
	var unsettled []string
	for _, d := range rep.Domains {
		if d.Links && !d.BetaAgreed {
			unsettled = append(unsettled, d.Domain)
		}
	}
	if len(unsettled) > 0 {
		rep.CannotTellWhy = fmt.Sprintf("the beta probes of %s did not agree, so the holds that slowed them are uncertain", strings.Join(unsettled, " and "))
		return
	}
	rep.CannotTell = false
	var los, his []float64
	var names []string
	for _, d := range rep.Domains {
		if d.Links {
			los, his, names = append(los, d.ChangeLoPct), append(his, d.ChangeHiPct), append(names, d.Domain)
		}
	}
	if i := separated(los, his); i >= 0 && names[i] == rep.Leading {
		rep.Critical = rep.Leading
		return
	}
	rep.CannotTell = true
}

// verdictMinConfidence is the least confidence, in percent, of the
// intervals a verdict is drawn from; verdictMinRounds the rounds that
// first reach it.
const (
	verdictMinConfidence = 90
	verdictMinRounds     = 5
)

// countRounds says "1 round" or "N rounds".
func countRounds(n int) string {
	if n == 1 {
		return "1 round"
	}
	return fmt.Sprintf("%d rounds", n)
}

// span formats a domain's interval.
func span(d Domain) string {
	return fmt.Sprintf("%+.1f..%+.1f%%", d.ChangeLoPct, d.ChangeHiPct)
}

// writeVerdict writes the line that names the critical domain, or says
// that the run cannot tell, and why.
func (rep *Report) writeVerdict(p func(string, ...any)) {
	if rep.Leading == "" {
		p("# critical domain: none (no domain has links between ranks)\n")
		return
	}
	var lead Domain
	for _, d := range rep.Domains {
		if d.Domain == rep.Leading {
			lead = d
		}
	}
	var others, overlap []string // the other domains with links; those overlapping lead
	for _, d := range rep.Domains {
		if d.Links && d.Domain != rep.Leading {
			others = append(others, d.Domain)
			if d.ChangeHiPct >= lead.ChangeLoPct {
				overlap = append(overlap, fmt.Sprintf("%s's %s", d.Domain, span(d)))
			}
		}
	}
	if rep.Critical != "" {
		above := "above zero"
		if len(others) > 0 {
			above = "above zero and above every other domain's"
		}
		p("# critical domain: %s (a %g%% slower %s link makes the step %.1f%% slower; its interval %s lies %s)\n",
			rep.Critical, rep.SlowdownPct, rep.Critical, rep.CriticalChangePct, span(lead), above)
		return
	}
	if rep.CannotTellWhy != "" {
		p("# critical domain: cannot tell (%s leads at %+.1f%%, but %s)\n", rep.Leading, rep.CriticalChangePct, rep.CannotTellWhy)
		return
	}
	why := "includes no slowdown"
	if lead.ChangeLoPct > 0 && len(overlap) > 0 {
		why = "overlaps " + strings.Join(overlap, ", ")
	}
	p("# critical domain: cannot tell (%s leads at %+.1f%%, but its interval %s %s; more iterations may separate them)\n",
		rep.Leading, rep.CriticalChangePct, span(lead), why)
}
