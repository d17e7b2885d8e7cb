// Package isolate finds the bad node or link of a cluster from pairwise
// measurements: given one log per pair of hosts (nccl-tests, rccl-tests,
// hccl_test, hccl-test's CSV), it compares every pair's bandwidth with the
// cluster's median, counts each host's slow and failed pairs, and names
// the hosts that are slow or failed with most of their peers, and the
// pairs that are bad between good hosts.
package isolate

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
)

// Config is the verdict rule.
type Config struct {
	// K: a pair is slow when its figure is more than K median absolute
	// deviations below the median, on a logarithmic scale (of the hosts'
	// medians, see Report.MAD) ...
	K float64
	// ... and below Floor x the median. Both must hold: the deviation
	// says the pair is unlike the others, the floor that the difference
	// matters (with identical healthy pairs the deviation is 0).
	Floor float64
}

// DefaultConfig is K 3, Floor 0.8.
func DefaultConfig() Config { return Config{K: 3, Floor: 0.8} }

// Validate says what is wrong with c.
func (c Config) Validate() error {
	if !(c.K >= 0) || math.IsInf(c.K, 0) {
		return fmt.Errorf("k %v: want a number of median absolute deviations, 0 or more", c.K)
	}
	if !(c.Floor > 0 && c.Floor <= 1) {
		return fmt.Errorf("floor %v: want a share of the median above 0 and at most 1", c.Floor)
	}
	return nil
}

// Verdicts of a pair.
const (
	OK     = "ok"
	Slow   = "slow"
	Failed = "failed" // every log of the pair failed
	Flaky  = "flaky"  // some logs of the pair failed, others did not
)

// Pair is the verdict on one pair of hosts, from all its logs.
type Pair struct {
	A, B    string   // hosts, A < B
	Logs    []string // paths
	Figure  float64  // median over the logs that measured Report.Size; NaN if none did
	Ratio   float64  // Figure / Report.Median
	Verdict string
	// Failures says, per failed log, why: "a.log:12: Test NCCL failure ...",
	// "b.log: 3 of 10 sizes missing, up to 1048576".
	Failures []string
	Named    bool // named in its own right, its hosts not named
}

// Bad reports whether the pair is slow, failed or flaky.
func (p *Pair) Bad() bool { return p.Verdict != OK }

// Host is the verdict on one host, from its pairs.
type Host struct {
	Name   string
	Pairs  int     // pairs measured with it
	Bad    int     // of them slow, failed or flaky
	Failed int     // of them failed or flaky
	Median float64 // median figure of its pairs that have one
	Ratio  float64 // Median / Report.Median
	// Named: bad with most of its peers once its bad pairs with hosts
	// named on stronger evidence are taken out (see nameHosts), with 3
	// hosts or more.
	Named bool
	// Rest counts its pairs less its bad pairs with hosts named before it
	// (when it is named) or named at all (when it is not), RestBad the
	// bad ones of them: the evidence it was judged on.
	Rest, RestBad int
	// Unexplained counts its bad pairs with hosts that are not named (the
	// pairs named in their own right), when it is not named itself.
	Unexplained int
	// Evidence lists its bad pairs, worst first: "node2 failed (...)",
	// "node3 1.02 GB/s 0.09x".
	Evidence []string
}

// Report is what Analyze found.
type Report struct {
	Op     string
	Unit   string // busbw or algbw
	Size   int64  // the size compared: the largest that at least half the logs measured
	Sizes  int    // sizes measured by at least half the logs (a log missing one is failed)
	Logs   int
	Median float64 // median of the hosts' medians
	// MAD is the median absolute deviation of the natural logarithms of
	// the hosts' medians from that of Median: 0.1 is a typical spread of
	// about 10%, whatever the bandwidth.
	MAD float64
	// Threshold: a pair below it is slow, min(Median / e^(K MAD), Floor x Median).
	Threshold float64
	Config    Config
	// Live says the pairs were measured by a live search (LiveReport),
	// one "log" a pair of hosts, not read from logs.
	Live  bool
	Hosts []*Host // named first, in the order they were named; then worst first
	Pairs []*Pair // by hosts
}

// Named returns the hosts and pairs the report names.
func (r *Report) Named() (hosts []*Host, pairs []*Pair) {
	for _, h := range r.Hosts {
		if h.Named {
			hosts = append(hosts, h)
		}
	}
	for _, p := range r.Pairs {
		if p.Named {
			pairs = append(pairs, p)
		}
	}
	return hosts, pairs
}

// Analyze gives the verdicts on the logs' pairs and hosts for op, by c.
func Analyze(logs []*Log, op string, c Config) *Report {
	r := &Report{Op: op, Unit: "busbw", Logs: len(logs), Config: c}
	// The sizes at least half the logs measured; the largest of them is
	// compared, so that a log that failed early does not lower it.
	count := map[int64]int{}
	for _, l := range logs {
		if l.Unit == "algbw" && len(l.Figure) > 0 {
			r.Unit = "algbw"
		}
		for s := range l.Figure {
			count[s]++
		}
	}
	var sizes []int64
	for s, n := range count {
		if 2*n >= len(logs) {
			sizes = append(sizes, s)
		}
	}
	slices.Sort(sizes)
	r.Sizes = len(sizes)
	if len(sizes) > 0 {
		r.Size = sizes[len(sizes)-1]
	}
	pairs := map[[2]string]*Pair{}
	figures := map[*Pair][]float64{}
	fails := map[*Pair]int{}
	for _, l := range logs {
		a, b := min(l.Hosts[0], l.Hosts[1]), max(l.Hosts[0], l.Hosts[1])
		p := pairs[[2]string{a, b}]
		if p == nil {
			p = &Pair{A: a, B: b}
			pairs[[2]string{a, b}] = p
			r.Pairs = append(r.Pairs, p)
		}
		p.Logs = append(p.Logs, l.Path)
		if why := logFailure(l, op, sizes); why != "" {
			p.Failures = append(p.Failures, why)
			fails[p]++
		}
		if v, ok := l.Figure[r.Size]; ok && r.Size > 0 {
			figures[p] = append(figures[p], v)
		}
	}
	slices.SortFunc(r.Pairs, func(x, y *Pair) int { return cmp.Or(cmp.Compare(x.A, y.A), cmp.Compare(x.B, y.B)) })
	hosts := map[string]*Host{}
	var hostFigures = map[string][]float64{}
	for _, p := range r.Pairs {
		p.Figure = median(figures[p])
		for _, name := range []string{p.A, p.B} {
			if hosts[name] == nil {
				hosts[name] = &Host{Name: name}
				r.Hosts = append(r.Hosts, hosts[name])
			}
			hosts[name].Pairs++
			if !math.IsNaN(p.Figure) {
				hostFigures[name] = append(hostFigures[name], p.Figure)
			}
		}
	}
	var medians []float64
	for _, h := range r.Hosts {
		h.Median = median(hostFigures[h.Name])
		if !math.IsNaN(h.Median) {
			medians = append(medians, h.Median)
		}
	}
	// The baseline is the median of the hosts' medians, not of the pairs:
	// one bad host of n spoils 2/n of the pairs (half of them with four
	// hosts) but only one host's median.
	r.Median, r.MAD, r.Threshold = c.threshold(medians)
	for _, p := range r.Pairs {
		p.Ratio = p.Figure / r.Median
		switch {
		case fails[p] == len(p.Logs):
			p.Verdict = Failed
		case fails[p] > 0:
			p.Verdict = Flaky
		case p.Figure < r.Threshold:
			p.Verdict = Slow
		default:
			p.Verdict = OK
		}
	}
	for _, h := range r.Hosts {
		h.Ratio = h.Median / r.Median
		var bad []*Pair
		for _, p := range r.Pairs {
			if (p.A == h.Name || p.B == h.Name) && p.Bad() {
				bad = append(bad, p)
			}
		}
		h.Bad = len(bad)
		for _, p := range bad {
			if p.Verdict == Failed || p.Verdict == Flaky {
				h.Failed++
			}
		}
		slices.SortStableFunc(bad, worse)
		for i, p := range bad {
			if i == maxEvidence {
				h.Evidence = append(h.Evidence, fmt.Sprintf("and %d more", len(bad)-i))
				break
			}
			peer := p.A
			if peer == h.Name {
				peer = p.B
			}
			if p.Verdict == Failed || p.Verdict == Flaky {
				h.Evidence = append(h.Evidence, fmt.Sprintf("%s %s (%s)", peer, p.Verdict, p.Failures[0]))
			} else {
				h.Evidence = append(h.Evidence, fmt.Sprintf("%s %.3g GB/s %.2fx", peer, p.Figure, p.Ratio))
			}
		}
	}
	order := map[*Host]int{}
	for i, h := range nameHosts(r.Hosts, r.Pairs) {
		order[h] = i + 1
	}
	for _, p := range r.Pairs {
		p.Named = p.Bad() && !hosts[p.A].Named && !hosts[p.B].Named
		if p.Named {
			hosts[p.A].Unexplained++
			hosts[p.B].Unexplained++
		}
	}
	slices.SortStableFunc(r.Hosts, func(x, y *Host) int {
		return cmp.Or(
			-cmp.Compare(boolInt(x.Named), boolInt(y.Named)),
			cmp.Compare(order[x], order[y]),
			-cmp.Compare(float64(x.Bad)/float64(x.Pairs), float64(y.Bad)/float64(y.Pairs)),
			-cmp.Compare(x.Failed, y.Failed),
			cmp.Compare(nanLast(x.Ratio), nanLast(y.Ratio)),
			cmp.Compare(x.Name, y.Name))
	})
	return r
}

// threshold returns the median of vs, the median absolute deviation of
// their logarithms from its logarithm, and the figure below which a value
// is slow by c: min(median / e^(K MAD), Floor x median). The deviations
// are taken on a logarithmic scale because bandwidths vary by factors:
// between network namespaces of one loaded machine, healthy pairs ranged
// from 0.33 to 1.2 GB/s, a spread that put median - 3 MAD below zero, and
// so called nothing slow, not even a host at 0.005 GB/s.
func (c Config) threshold(vs []float64) (med, mad, below float64) {
	med = median(vs)
	dev := make([]float64, len(vs))
	for i, v := range vs {
		dev[i] = math.Abs(math.Log(max(v, math.SmallestNonzeroFloat64)) - math.Log(med))
	}
	mad = median(dev)
	return med, mad, min(med*math.Exp(-c.K*mad), c.Floor*med)
}

// maxEvidence is the most bad pairs a host's evidence lists.
const maxEvidence = 4

// worse orders bad pairs: failed, flaky, then slow by figure.
func worse(x, y *Pair) int {
	rank := map[string]int{Failed: 0, Flaky: 1, Slow: 2, OK: 3}
	return cmp.Or(cmp.Compare(rank[x.Verdict], rank[y.Verdict]), cmp.Compare(nanLast(x.Figure), nanLast(y.Figure)))
}

// logFailure says why the log failed, "" if it did not: a failure line,
// wrong elements, a failed check, or sizes of sizes missing.
func logFailure(l *Log, op string, sizes []int64) string {
	name := l.Path
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		name = name[i+1:]
	}
	switch {
	case l.Failure != "" && l.FailureLine == 0:
		return fmt.Sprintf("%s: %s", name, l.Failure)
	case l.Failure != "":
		return fmt.Sprintf("%s:%d: %s", name, l.FailureLine, l.Failure)
	case l.Wrong > 0:
		return fmt.Sprintf("%s: %d wrong elements", name, l.Wrong)
	case l.CheckFailed > 0:
		return fmt.Sprintf("%s: the check failed in %d rows", name, l.CheckFailed)
	}
	var missing []int64
	for _, s := range sizes {
		if _, ok := l.Figure[s]; !ok {
			missing = append(missing, s)
		}
	}
	switch {
	case len(l.Figure) == 0:
		return fmt.Sprintf("%s: no rows of %s in its %d lines", name, op, l.Lines)
	case len(missing) > 0:
		return fmt.Sprintf("%s: %d of %d sizes missing, %d to %d bytes", name, len(missing), len(sizes), missing[0], missing[len(missing)-1])
	}
	return ""
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// nanLast makes NaN sort after every number.
func nanLast(v float64) float64 {
	if math.IsNaN(v) {
		return math.Inf(1)
	}
	return v
}
