package scenario

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/hccl-test/hccl-test/runctl"
	"github.com/hccl-test/hccl-test/traffic"
	"github.com/hccl-test/hccl-test/units"
)

// Report is what a scenario run found, as rank 0 writes it. Times
// are in milliseconds: the step's is the mean over the timed iterations of
// the slowest rank, whose steps took longest in all; every other time is
// that same rank's, so that compute, the domains' exposed times and other
// add up to the step.
type Report struct {
	Scenario   string `json:"scenario"`
	Backend    string `json:"backend"`
	Ranks      int    `json:"ranks"`
	Groups     string `json:"groups"`
	Iterations int    `json:"iterations"`
	Warmup     int    `json:"warmup"`
	// Rounds is how many turns every run took, its iterations split
	// between them.
	Rounds int `json:"rounds"`
	// Faults are the --inject faults of every run, "" for none.
	Faults string `json:"faults,omitempty"`
	// Simulated describes the simulated links on --backend sim, whose
	// times are virtual; "" on other backends.
	Simulated string `json:"simulated,omitempty"`
	// Unchecked says that the collectives ran without payload
	// (--sim-data=false), so no result was checked and Wrong is 0.
	Unchecked bool `json:"unchecked,omitempty"`
	// ComputeUnitsPerMS is the calibrated speed of the compute loop on
	// each rank, with every rank computing; 0 without compute phases.
	ComputeUnitsPerMS float64 `json:"compute_units_per_ms"`
	StepMS            float64 `json:"step_ms"`
	StepMinMS         float64 `json:"step_min_ms"`
	StepMaxMS         float64 `json:"step_max_ms"`
	ComputeMS         float64 `json:"compute_ms"`
	ComputeSharePct   float64 `json:"compute_share_pct"`
	// OtherMS is the rest of the step: starting overlapped collectives
	// and the harness's own bookkeeping.
	OtherMS       float64  `json:"other_ms"`
	OtherSharePct float64  `json:"other_share_pct"`
	SlowdownPct   float64  `json:"slowdown_pct"`
	Domains       []Domain `json:"domains"`
	// Leading is the domain whose slowdown moved the step most, "" when
	// no domain has links; Critical is the same domain when the
	// intervals of the domains' changes separate it from the others
	// (interval.go), else "" and CannotTell is true.
	Leading           string  `json:"leading_domain"`
	Critical          string  `json:"critical_domain"`
	CriticalChangePct float64 `json:"critical_change_pct"`
	CannotTell        bool    `json:"critical_cannot_tell"`
	// CannotTellWhy says why, when it is not the intervals' overlap: too
	// few rounds, or beta probes that did not agree.
	CannotTellWhy string `json:"cannot_tell_why,omitempty"`
	// IntervalConfidencePct is the confidence of the domains' intervals,
	// in percent (below 95 when too few rounds ran for more).
	IntervalConfidencePct float64 `json:"interval_confidence_pct"`
	// Wrong counts wrong elements in the checked iteration of every run,
	// every rank's together; WrongBySteps says where.
	Wrong        int64       `json:"wrong"`
	WrongBySteps []WrongStep `json:"wrong_by_step"`
	// Injected is how many of Wrong are messages --inject corrupted where
	// the check could not see them (a warm-up or timed iteration, or the
	// checked one when it found nothing), one each.
	Injected int64 `json:"injected_wrong"`
}

// Domain is one domain's figures: in the baseline run, and with
// its links slowed.
type Domain struct {
	Domain     string  `json:"domain"`
	Groups     int     `json:"groups"`
	GroupSize  int     `json:"group_size"`
	OpsPerStep int     `json:"ops_per_step"`
	CommMS     float64 `json:"comm_ms"`
	ExposedMS  float64 `json:"exposed_ms"`
	SharePct   float64 `json:"share_pct"`
	// Links is false for groups of one rank, which have nothing to slow;
	// the fields below are then zero.
	Links    bool    `json:"links"`
	AlphaUS  float64 `json:"alpha_us"`
	BetaGBps float64 `json:"beta_GBps"`
	DelayUS  float64 `json:"injected_delay_us"`
	RateGBps float64 `json:"injected_bw_GBps"`
	// BetaLoGBps and BetaHiGBps are the lowest and highest of the beta
	// probe's repetitions; BetaAgreed says that its best agreed, else
	// the domain's holds, made from beta, are uncertain.
	BetaLoGBps   float64 `json:"beta_lo_GBps"`
	BetaHiGBps   float64 `json:"beta_hi_GBps"`
	BetaAgreed   bool    `json:"beta_agreed"`
	SlowedStepMS float64 `json:"slowed_step_ms"`
	ChangePct    float64 `json:"change_pct"`
	// ChangeLoPct and ChangeHiPct bound the median of the rounds' changes
	// (each round's slowed step against its baseline), with the report's
	// IntervalConfidencePct.
	ChangeLoPct float64 `json:"change_lo_pct"`
	ChangeHiPct float64 `json:"change_hi_pct"`
	// Imbalance is the skew of the domain's routed steps (alltoallv,
	// allgatherv, reducescatterv with a traffic spec) as drawn: the most
	// any rank of a group sends or receives over what a rank moves on
	// average (a dispatch's hot expert receives most, a combine's sends
	// most), averaged over the baseline's timed calls; Draws is how many
	// distinct draws those calls took, over the domain's routed steps.
	// Both are 0 for a domain without routed steps. The timing on a
	// backend that does not charge a receiver its bytes (sim) can hide a
	// hot expert; this figure shows it whatever the backend.
	Imbalance float64 `json:"imbalance,omitempty"`
	Draws     int     `json:"draws,omitempty"`
}

// WrongStep is the wrong-element count of one collective step (from
// 1), over every run and rank.
type WrongStep struct {
	Step  int    `json:"step"`
	Name  string `json:"name"`
	Wrong int64  `json:"wrong"`
}

// report builds the report from the baseline and each domain's slowed run
// (nil for domains without links).
func (r *scenRank) report(base *scenResult, slowed []*scenResult) *Report {
	sc := r.sc
	rep := &Report{
		Scenario: sc.Name, Ranks: sc.Ranks, Groups: sc.LayoutString(), Iterations: sc.Iterations, Warmup: sc.Warmup,
		Rounds:            scenRoundsOf(sc.Iterations),
		ComputeUnitsPerMS: r.load.perSec / 1e3,
		StepMS:            1e3 * base.mean(base.step), StepMinMS: 1e3 * base.stepMin, StepMaxMS: 1e3 * base.stepMax,
		ComputeMS: 1e3 * base.mean(base.compute), SlowdownPct: sc.Slowdown, WrongBySteps: []WrongStep{},
	}
	share := func(ms float64) float64 { return 100 * ms / max(rep.StepMS, 1e-9) }
	rep.ComputeSharePct = share(rep.ComputeMS)
	rep.OtherMS = rep.StepMS - rep.ComputeMS
	best := 0.0
	for d, dom := range r.domains {
		n := sc.GroupSize(dom)
		sd := Domain{Domain: dom, Groups: sc.Ranks / n, GroupSize: n, Links: r.links[d],
			CommMS: 1e3 * base.mean(base.comm[d]), ExposedMS: 1e3 * base.mean(base.exposed[d])}
		for _, st := range sc.Steps {
			if !st.IsCompute() && st.Group == dom {
				sd.OpsPerStep += st.Calls
			}
		}
		sd.Imbalance, sd.Draws = r.drawnSkew(dom)
		sd.SharePct = share(sd.ExposedMS)
		rep.OtherMS -= sd.ExposedMS
		if s := slowed[d]; s != nil {
			delay, rate := r.slowFaults(d)
			sd.AlphaUS, sd.BetaGBps = 1e6*r.alpha[d], r.beta[d]/1e9
			f := r.betaFig[d]
			sd.BetaLoGBps, sd.BetaHiGBps, sd.BetaAgreed = f.Lo/1e9, f.Hi/1e9, f.Agreed
			sd.DelayUS, sd.RateGBps = float64(delay.Nanoseconds())/1e3, rate/1e9
			sd.SlowedStepMS = 1e3 * s.mean(s.step)
			sd.ChangePct = 100 * (sd.SlowedStepMS - rep.StepMS) / max(rep.StepMS, 1e-9)
			if rep.Leading == "" || sd.ChangePct > best {
				rep.Leading, best = dom, sd.ChangePct
			}
			_, sd.ChangeLoPct, sd.ChangeHiPct, rep.IntervalConfidencePct = medianInterval(roundChanges(base.rounds, s.rounds))
			rep.IntervalConfidencePct *= 100
		}
		rep.Domains = append(rep.Domains, sd)
	}
	rep.CriticalChangePct = best
	rep.decide(r.virtual())
	if math.Abs(rep.OtherMS) < 1e-9 {
		rep.OtherMS = 0 // rounding of the sums, in virtual time exact
	}
	rep.OtherSharePct = share(rep.OtherMS)
	for i, st := range sc.Steps {
		if st.IsCompute() {
			continue
		}
		var w int64
		w += base.wrong[i]
		for _, s := range slowed {
			if s != nil {
				w += s.wrong[i]
			}
		}
		rep.Wrong += w
		rep.WrongBySteps = append(rep.WrongBySteps, WrongStep{Step: i + 1, Name: st.Name, Wrong: w})
	}
	rep.Injected = base.injected
	for _, s := range slowed {
		if s != nil {
			rep.Injected += s.injected
		}
	}
	rep.Wrong += rep.Injected
	return rep
}

// drawnSkew returns the imbalance of domain dom's routed steps, averaged
// over the calls of the baseline's timed iterations, and how many distinct
// draws those took (Domain.Imbalance, Draws); 0, 0 without routed steps.
func (r *scenRank) drawnSkew(dom string) (imbalance float64, draws int) {
	var calls float64
	for _, c := range r.colls {
		if c == nil || c.step.Group != dom || c.step.Draws == nil {
			continue
		}
		for i, k := range c.taken {
			if k > 0 {
				draws++
				w := float64(k * c.step.Calls)
				imbalance += w * Busiest(c.step.Draws[i].Traffic)
				calls += w
			}
		}
	}
	if calls == 0 {
		return 0, draws
	}
	return imbalance / calls, draws
}

// Busiest is a draw's skew as Domain.Imbalance counts it: the most any
// rank sends or receives over the mean a rank sends (and receives); 1 for
// a draw that moves nothing.
func Busiest(s traffic.Summary) float64 {
	if s.RecvMean <= 0 {
		return 1
	}
	return float64(s.MaxBytes) / s.RecvMean
}

// WriteJSON writes the report as one JSON object on one line.
func (rep *Report) WriteJSON(w io.Writer) error {
	return json.NewEncoder(w).Encode(rep)
}

// WriteText writes the report as the commented table hccl-test prints.
func (rep *Report) WriteText(w io.Writer) error {
	var b strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	p("# hccl-test scenario %q: %d ranks on %s, groups %s, %d timed iterations per run after %d warm-up\n",
		rep.Scenario, rep.Ranks, rep.Backend, rep.Groups, rep.Iterations, rep.Warmup)
	rounds := "in 1 round"
	if rep.Rounds > 1 {
		rounds = fmt.Sprintf("taking turns in %d rounds of up to %d iterations", rep.Rounds, scenRoundIters)
		if rep.Warmup > 0 {
			rounds += " (1 more warm-up in each later round)"
		}
	}
	p("# runs: the baseline, then each domain with its links slowed, %s\n", rounds)
	if rep.Simulated != "" {
		p("# simulated: %s; times are virtual: compute phases hold each rank's clock, slowed links hold each message on its sender's port\n", rep.Simulated)
	}
	if rep.ComputeUnitsPerMS > 0 {
		p("# compute: a multiply-add loop, %.0f units per ms on each rank (calibrated with every rank computing at once)\n", rep.ComputeUnitsPerMS)
	}
	if rep.Faults != "" {
		p("# faults in every run, the baseline included: %s\n", rep.Faults)
	}
	p("# step time %.2f ms (mean of the slowest rank's iterations, whose steps took longest in all; min %.2f, max %.2f)\n", rep.StepMS, rep.StepMinMS, rep.StepMaxMS)
	p("# domain   groups  ops/step   comm (ms)  exposed (ms)   share\n")
	for _, d := range rep.Domains {
		p("  %-7s %7s %9d %11.2f %13.2f %6.1f%%\n", d.Domain, fmt.Sprintf("%d x %d", d.Groups, d.GroupSize), d.OpsPerStep, d.CommMS, d.ExposedMS, d.SharePct)
	}
	p("  %-7s %29.2f %21.1f%%\n", "compute", rep.ComputeMS, rep.ComputeSharePct)
	p("  %-7s %29.2f %21.1f%%\n", "other", rep.OtherMS, rep.OtherSharePct)
	p("# comm: time in the domain's collectives, start to end; exposed: time the step was blocked on them\n")
	for _, d := range rep.Domains {
		if d.Draws > 0 {
			p("# %s traffic as drawn: imbalance %.2f (the most a rank sends or receives over the mean, averaged over %d draws)\n", d.Domain, d.Imbalance, d.Draws)
		}
	}
	p("# sensitivity: each domain's links slowed by %g%% in turn, through the fault injector: on every link of the domain,\n", rep.SlowdownPct)
	p("#   delay = %g%% of its alpha and bw = its beta / %g, so a message of s bytes is held %g%% of (alpha + s/beta) longer;\n",
		rep.SlowdownPct, rep.SlowdownPct/100, rep.SlowdownPct)
	p("#   alpha and beta: the slowest group's, --inject faults included, from ring exchanges of %d B and %s in every group at once,\n",
		scenProbeSmall, units.FormatSize(scenProbeSize(rep.Ranks)))
	if rep.Simulated != "" {
		p("#   measured once: virtual time reads the same every time\n")
	} else {
		p("#   repeated until the best %d betas agree within %.0f%% (at most %d times and %v): beta their median, alpha the least\n",
			runctl.SettleBest, 100*runctl.SettleAgree, runctl.SettleMaxReps, runctl.SettleMaxTime)
	}
	for _, d := range rep.Domains {
		if d.Links && !d.BetaAgreed {
			p("#   %s: its beta probes did not agree (%.3g..%.3g GB/s): its holds, and its change, are uncertain\n", d.Domain, d.BetaLoGBps, d.BetaHiGBps)
		}
	}
	if rep.Leading != "" {
		p("#   change: of the step's mean; interval: of the median of the %d rounds' changes (each round's slowed run against its baseline), %.0f%% confidence\n",
			rep.Rounds, rep.IntervalConfidencePct)
	}
	p("# domain   alpha (us)  beta (GB/s)  delay (us)  bw (GB/s)   step (ms)   change   interval\n")
	for _, d := range rep.Domains {
		if !d.Links {
			p("  %-7s %11s %12s %11s %10s %11s   no links (groups of 1 rank)\n", d.Domain, "-", "-", "-", "-", "-")
			continue
		}
		p("  %-7s %11.1f %12.3f %11.1f %10.3f %11.2f %+7.1f%%   %s\n", d.Domain, d.AlphaUS, d.BetaGBps, d.DelayUS, d.RateGBps, d.SlowedStepMS, d.ChangePct, span(d))
	}
	rep.writeVerdict(p)
	switch {
	case rep.Unchecked:
		p("# wrong elements: not checked (--sim-data=false: the collectives carried no payload)\n")
	case rep.Wrong == 0:
		p("# wrong elements: 0 OK\n")
	default:
		var where []string
		for _, s := range rep.WrongBySteps {
			if s.Wrong > 0 {
				where = append(where, fmt.Sprintf("%s: %d", stepLabel(s.Step-1, s.Name), s.Wrong))
			}
		}
		if rep.Injected > 0 {
			where = append(where, fmt.Sprintf("messages corrupted by --inject where the check could not see them: %d", rep.Injected))
		}
		p("# wrong elements: %d (%s)\n", rep.Wrong, strings.Join(where, ", "))
	}
	_, err := io.WriteString(w, b.String())
	return err
}
