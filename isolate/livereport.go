package isolate

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
)

// LiveReport is what a live search found: the verdicts on its pairs and
// hosts (Report, as for logs) and on the groups of its bisection.
type LiveReport struct {
	*Report
	Ranks  int
	Rounds int // slots of pairs
	// Groups are the allreduce measurements over halves, quarters, ...
	Groups []*Group
	// GroupBaseline is the ratio (Group.Ratio) that groups are judged
	// against: the median of the ratios of the groups with no bad host or
	// pair, or the larger of two, at most 1 (NaN with fewer than two);
	// GroupMAD the median absolute deviation of their logarithms (with 3
	// groups or more); GroupThreshold the ratio below which a group is
	// slow, by the pairs' rule.
	GroupBaseline, GroupMAD, GroupThreshold float64
	// Unreported lists the ranks rank 0 did not hear from at the end, and
	// why: "rank 9 (10.0.0.5): timed out".
	Unreported []string
	// Ran is how many slots of the plan (rounds, then levels of groups)
	// ran to their end, Slots how many it has: fewer when the search was
	// stopped (Stopped says why), and the pairs and groups of the slots
	// not run are left out of the report, neither good nor bad.
	Ran, Slots int
	Stopped    string
	Wall       time.Duration // set by RunLive
}

// Group is the verdict on one group of hosts measured together.
type Group struct {
	Level int // 1 halves, 2 quarters, ...
	Hosts []string
	Ranks int
	// Figure is the allreduce's busbw in GB/s (the slowest rank's fastest
	// iteration), NaN when it failed.
	Figure float64
	// PairMedian is the median figure of the pairs of its hosts; Ratio
	// Figure / PairMedian: what the group loses by running together.
	PairMedian, Ratio float64
	Verdict           string // OK, Slow or Failed
	Failure           string
	// Explained names what already accounts for a bad group: a named
	// host or a bad pair among its hosts.
	Explained string
	Named     bool // bad, and nothing among its hosts explains it
}

// Named returns the hosts, pairs and groups the report names.
func (r *LiveReport) Named() (hosts []*Host, pairs []*Pair, groups []*Group) {
	hosts, pairs = r.Report.Named()
	for _, g := range r.Groups {
		if g.Named {
			groups = append(groups, g)
		}
	}
	return hosts, pairs, groups
}

// slowest merges the ranks' views of one measurement: the slowest time
// (the measurement is done when its last rank is), the first failure.
type merged struct {
	seconds float64
	err     string
	wrong   int64
	reports int
}

func (m *merged) add(res result) {
	m.reports++
	m.seconds = max(m.seconds, res.Seconds)
	m.wrong += res.Wrong
	if res.Err != "" && m.err == "" {
		m.err = res.Err
	}
}

// liveReport turns the ranks' results into the report: a Log per pair of
// hosts, analysed as a directory of logs is, and the groups.
func liveReport(o LiveOptions, p *plan, all []result, ran int, missing map[int]string) *LiveReport {
	type key struct{ m, rail int }
	views := map[key]*merged{}
	for _, res := range all {
		k := key{res.M, res.Rail}
		if views[k] == nil {
			views[k] = &merged{}
		}
		views[k].add(res)
	}
	lr := &LiveReport{Ranks: len(p.hostOf), Rounds: len(Rounds(len(p.hosts))), Ran: ran, Slots: p.slots}
	// A stopped search's gathers are cut short too: rank 0 stopped early
	// meets, on its links, messages of measurements its peers went on
	// to, and cannot read their reports. A measurement no rank reported
	// is then not known, and left out as the slots not run are; in a
	// search that was not stopped it failed.
	stopped := ran < p.slots
	unknown := func(mi int, rails int) bool {
		for i := range rails {
			if views[key{mi, i}] == nil {
				return true
			}
		}
		return false
	}
	var logs []*Log
	for mi, m := range p.meas {
		if m.Level > 0 || m.Slot >= ran || stopped && unknown(mi, len(m.Rails)) {
			continue
		}
		l := &Log{Path: fmt.Sprintf("round %d", m.Slot+1), Hosts: [2]string{p.hosts[m.Hosts[0]], p.hosts[m.Hosts[1]]},
			HostsFrom: "the world", Tool: "hccl-test isolate", Ops: []string{"sendrecv"}, Unit: "busbw", Figure: map[int64]float64{}}
		figure := math.Inf(1)
		for i, rail := range m.Rails {
			v := views[key{mi, i}]
			why := ""
			switch {
			case v == nil:
				why = "no report from either rank"
			case v.err != "":
				why = v.err
			case v.wrong > 0:
				why = fmt.Sprintf("%d wrong bytes", v.wrong)
				l.Wrong += v.wrong
			default:
				figure = min(figure, float64(o.Bytes)/v.seconds/1e9)
			}
			if why != "" && l.Failure == "" {
				l.Failure = fmt.Sprintf("rail %d (ranks %d - %d): %s", i, rail[0], rail[1], why)
			}
		}
		if l.Failure == "" && !math.IsInf(figure, 1) {
			l.Figure[o.Bytes] = figure
		}
		logs = append(logs, l)
	}
	lr.Report = Analyze(logs, "sendrecv", o.Rule)
	lr.Report.Live = true
	for r := range len(p.hostOf) {
		if why, ok := missing[r]; ok {
			lr.Unreported = append(lr.Unreported, fmt.Sprintf("rank %d (%s): %s", r, p.hosts[p.hostOf[r]], oneLine(why)))
		}
	}
	for mi, m := range p.meas {
		if m.Level == 0 || m.Slot >= ran || stopped && views[key{mi, -1}] == nil {
			continue
		}
		g := &Group{Level: m.Level, Ranks: len(m.Ranks), Figure: math.NaN()}
		for _, h := range m.Hosts {
			g.Hosts = append(g.Hosts, p.hosts[h])
		}
		v := views[key{mi, -1}]
		switch {
		case v == nil:
			g.Failure = "no report from any of its ranks"
		case v.err != "":
			g.Failure = v.err
		case v.wrong > 0:
			g.Failure = fmt.Sprintf("%d wrong elements", v.wrong)
		default:
			k := float64(g.Ranks)
			g.Figure = float64(o.Bytes) / v.seconds / 1e9 * 2 * (k - 1) / k
		}
		lr.Groups = append(lr.Groups, g)
	}
	lr.judgeGroups()
	return lr
}

// judgeGroups gives each group its ratio to its pairs, what among its
// hosts would explain it being bad (a named host, a bad pair), and its
// verdict by the rule of pairs (K MADs below the baseline and below
// Floor x it), the baseline taken from the groups nothing explains.
func (r *LiveReport) judgeGroups() {
	named := map[string]bool{}
	for _, h := range r.Hosts {
		named[h.Name] = h.Named
	}
	var ratios []float64
	for _, g := range r.Groups {
		var figs []float64
		var why []string
		for _, h := range g.Hosts {
			if named[h] {
				why = append(why, "host "+h+" named")
			}
		}
		for _, p := range r.Pairs {
			if !slices.Contains(g.Hosts, p.A) || !slices.Contains(g.Hosts, p.B) {
				continue
			}
			if !math.IsNaN(p.Figure) {
				figs = append(figs, p.Figure)
			}
			if p.Bad() && !named[p.A] && !named[p.B] {
				why = append(why, fmt.Sprintf("pair %s - %s %s", p.A, p.B, p.Verdict))
			}
		}
		g.Explained = strings.Join(why, ", ")
		g.PairMedian = median(figs)
		g.Ratio = g.Figure / g.PairMedian
		if !math.IsNaN(g.Ratio) && g.Explained == "" {
			ratios = append(ratios, g.Ratio)
		}
	}
	// Groups run an allreduce, pairs a sendrecv: a group's ratio is below
	// 1 by what the allreduce costs besides the links (0.26 to 0.7 seen
	// between namespaces of one loaded machine), the same for every
	// healthy group. So groups are judged against each other, those with
	// a bad host or pair left out: with two, the faster stands for
	// healthy (a shared switch or route slows a group, it does not speed
	// one up); with one, nothing is compared. The baseline is at most 1:
	// a ring's busbw crosses the same links as its pairs' sendrecv and
	// cannot beat them, so a ratio above 1 says its pairs were measured
	// low, not that the others are slow.
	switch {
	case len(ratios) >= 3:
		r.GroupBaseline, r.GroupMAD, _ = r.Config.threshold(ratios)
		r.GroupBaseline = min(r.GroupBaseline, 1)
		r.GroupThreshold = min(r.GroupBaseline*math.Exp(-r.Config.K*r.GroupMAD), r.Config.Floor*r.GroupBaseline)
	case len(ratios) == 2:
		r.GroupBaseline = min(slices.Max(ratios), 1)
		r.GroupThreshold = r.Config.Floor * r.GroupBaseline
	default:
		r.GroupBaseline, r.GroupThreshold = math.NaN(), math.NaN()
	}
	for _, g := range r.Groups {
		switch {
		case g.Failure != "":
			g.Verdict = Failed
		case g.Ratio < r.GroupThreshold:
			g.Verdict = Slow
		default:
			g.Verdict = OK
		}
		if g.Verdict == OK {
			g.Explained = ""
		}
		g.Named = g.Verdict != OK && g.Explained == ""
	}
	slices.SortStableFunc(r.Groups, func(x, y *Group) int { return cmp.Compare(x.Level, y.Level) })
}

// oneLine keeps the first line of s.
func oneLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
