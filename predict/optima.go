package predict

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/hccl-test/hccl-test/clustermodel"
)

// The other starts of a fit and what it keeps of their optima.
const (
	// startStep is how far, as a logarithm, each other start moves one
	// figure from the rows' own start: a factor of e^2 (7.4) up or down.
	startStep = 2.0
	// optimaTolerance is how much more summed squared logarithmic error
	// than the model's own an optimum may have and still be recorded as
	// one the rows cannot tell from it: 10%, plus optimaNoise a row.
	optimaTolerance = 0.10
	// optimaNoise is a row's share of that tolerance: a 1% error squared
	// (as a logarithm), so that a fit of noiseless rows (an error near 0)
	// still has room for its optimizer's last digits.
	optimaNoise = 1e-4
	// optimaApart is how far apart, as a logarithm, two optima's
	// predictions must be at some probe row to count as two: 2%.
	optimaApart = 0.02
	// optimaRuns, optimaStill and optimaEvals are the search from each
	// other start: one run of Nelder-Mead, ended once 20 iterations gain
	// nothing or after 150 evaluations (50 for each collective's scales
	// after), where the model's own search takes up to 4 runs of 150
	// iterations: what keeps the fit's time within about twice what it
	// was without other starts. What such a search ends at is a point of
	// like error, if not always an optimum to the last digit: the band
	// covers it all the same.
	optimaRuns, optimaStill, optimaEvals = 1, 20, 150
)

// startsOf returns the other starts of a fit around x0 (params' fields in
// order), each of the free figures moved by startStep up and down: the
// bandwidths inside and between servers and the reduction rate each on
// its own, the two latencies together. A fixed set: the fit stays
// deterministic.
func startsOf(x0 []float64, free []bool) [][]float64 {
	var out [][]float64
	moves := [][]int{{1}, {2}, {4}, {0, 3}}
	for _, mv := range moves {
		for _, d := range []float64{startStep, -startStep} {
			x, any := slices.Clone(x0), false
			for _, i := range mv {
				if free[i] {
					x[i] += d
					any = true
				}
			}
			if any {
				out = append(out, x)
			}
		}
	}
	return out
}

// findOptima searches m's levels (fitted already, from the rows' own
// start) again from each of startsOf's starts, fits each optimum's
// per-collective scales, and records in m.Alternatives every one whose
// summed squared logarithmic error is within optimaTolerance (and
// optimaNoise a row) of m's own and whose predictions differ from m's and
// from every one recorded before (optimaApart), best first. m keeps its
// own figures: see docs/predict.md, "Other optima".
func findOptima(m *clustermodel.Model, samples []Sample) {
	own := cost(m, samples)
	limit := own*(1+optimaTolerance) + optimaNoise*float64(len(samples))
	probe := *m
	probe.Alternatives = nil
	if m.Inter != nil {
		inter := *m.Inter
		probe.Inter = &inter
	}
	lf := newLevelFit(&probe, samples, nil)
	keys := probeKeys(m, samples)
	seen := []map[sampleKey]float64{timesAt(m, keys)}
	var found []clustermodel.Alternative
	for _, st := range startsOf(lf.x0, lf.free) {
		// The levels are searched with the ops at the scales the last
		// start's fit left them (scale 1 at the first): the short searches
		// converge from there. Where every op has scales of its own
		// between servers, the level's latency there and those scales
		// trade against each other, and an optimum may hold a latency far
		// from the model's with scales that undo it: what it predicts is
		// what counts (optimaApart).
		lf.set(lf.searchN(st, optimaRuns, optimaStill, optimaEvals))
		for i := range probe.Ops {
			o := &probe.Ops[i]
			fitScalesN(&probe, o, samples, optimaRuns, optimaStill, optimaEvals/3)
		}
		sse := cost(&probe, samples)
		if !(sse <= limit) {
			continue
		}
		times := timesAt(&probe, keys)
		if slices.ContainsFunc(seen, func(t map[sampleKey]float64) bool { return !apart(t, times) }) {
			continue
		}
		seen = append(seen, times)
		a := clustermodel.Alternative{
			IntraAlphaUS: probe.Intra.AlphaUS, IntraGBps: probe.Intra.GBps, ReduceGBps: probe.ReduceGBps, SqLogErr: sse,
		}
		if probe.Inter != nil {
			a.InterAlphaUS, a.InterGBps = probe.Inter.AlphaUS, probe.Inter.GBps
		}
		for _, o := range probe.Ops {
			a.Ops = append(a.Ops, o.Scales())
		}
		check := *m
		check.Alternatives = []clustermodel.Alternative{a}
		if check.Validate() != nil {
			continue
		}
		found = append(found, a)
	}
	slices.SortStableFunc(found, func(a, b clustermodel.Alternative) int { return cmp.Compare(a.SqLogErr, b.SqLogErr) })
	m.Alternatives = found[:min(len(found), clustermodel.MaxAlternatives)]
}

// probeKeys are the rows two optima are compared at: every fitted
// collective and size on every fitted world and on one 8 times larger
// (8 times the servers, or for one server 8 times its ranks), where
// optima that agree on the fitted rows part.
func probeKeys(m *clustermodel.Model, samples []Sample) []sampleKey {
	var keys []sampleKey
	for _, s := range samples {
		k := keyOf(s)
		k.algo = ""
		big := s.World
		if big.Servers > 1 {
			big.Servers *= 8
		} else {
			big.PerServer *= 8
		}
		for _, w := range []clustermodel.World{s.World, big} {
			k.world = w
			if w.Ranks() <= clustermodel.MaxRanks && !slices.Contains(keys, k) {
				keys = append(keys, k)
			}
		}
	}
	return keys
}

// timesAt is m's time of the fastest of our algorithms at each key.
func timesAt(m *clustermodel.Model, keys []sampleKey) map[sampleKey]float64 {
	out := make(map[sampleKey]float64, len(keys))
	for _, k := range keys {
		o, _ := m.Op(k.op.String())
		b := int(k.bytes / int64(k.op.Blocks(k.world.Ranks())))
		out[k], _ = fastest(m, k.op, k.world.Ranks(), max(b, 1), m.Coll(o, k.world))
	}
	return out
}

// apart reports whether two optima's times differ by more than
// optimaApart at some key.
func apart(a, b map[sampleKey]float64) bool {
	for k, t := range a {
		if d := math.Abs(math.Log(b[k] / t)); d > optimaApart || math.IsNaN(d) {
			return true
		}
	}
	return false
}

// widenByOptima widens r's band (bandRow's) to cover what each of m's
// alternatives predicts for r: the fastest of ours under it, or the
// algorithm asked for (algo, "" for auto). The band is then the larger
// of its two sides from the time, BusLow and BusHigh its ends.
func widenByOptima(m *clustermodel.Model, r Row, algo string) Row {
	if len(m.Alternatives) == 0 {
		return r
	}
	for _, a := range m.Alternatives {
		alt := m.With(a)
		o, _ := alt.Op(r.Op.String())
		t, _ := predictSample(alt, o, Sample{Op: r.Op, World: r.World, Bytes: r.Bytes, Algo: algo})
		if t > 0 && !math.IsInf(t, 0) {
			r.LowUS, r.HighUS = min(r.LowUS, t*1e6), max(r.HighUS, t*1e6)
		}
	}
	r.BandPct = 100 * max(r.HighUS/r.TimeUS-1, r.TimeUS/r.LowUS-1)
	r.BusLow, r.BusHigh = r.BusBW*r.TimeUS/r.HighUS, r.BusBW*r.TimeUS/r.LowUS
	return r
}

// writeOptima lists the model's other optima: each one's levels,
// reduction and error against the model's own, and that the rows cannot
// tell them apart.
func (f *Fit) writeOptima(b *strings.Builder) {
	m := f.Model
	own := 0.0
	for _, r := range f.Rows {
		d := math.Log(r.PredUS / r.TimeUS)
		own += d * d
	}
	if len(m.Alternatives) == 0 {
		fmt.Fprintf(b, "optima: the same from every start of the search (%d others) or none within %.0f%% of the model's error (%.4g, summed squared log error): the rows pin these figures\n",
			len(startsOf(make([]float64, 5), []bool{true, true, true, m.Inter != nil, m.Inter != nil})), 100*optimaTolerance, own)
		return
	}
	fmt.Fprintf(b, "optima: %d other fits of like error (within %.0f%% of the model's %.4g, summed squared log error, plus %.0e a row): the rows cannot tell them apart; "+
		"the model keeps the figures from the rows' own start, and predict's band covers what each of these predicts\n",
		len(m.Alternatives), 100*optimaTolerance, own, optimaNoise)
	for i, a := range m.Alternatives {
		fmt.Fprintf(b, "  optimum %d: error %.4g  intra %.3f us %.3f GB/s", i+1, a.SqLogErr, a.IntraAlphaUS, a.IntraGBps)
		if m.Inter != nil {
			fmt.Fprintf(b, "  inter %.3f us %.3f GB/s", a.InterAlphaUS, a.InterGBps)
		}
		fmt.Fprintf(b, "  reduce %.3f GB/s  scales", a.ReduceGBps)
		for _, s := range a.Ops {
			fmt.Fprintf(b, " %s bw %.3f lat %.3f", s.Name, s.BWScale, s.LatScale)
			if s.InterBWScale > 0 {
				fmt.Fprintf(b, " (between servers bw %.3f lat %.3f)", s.InterBWScale, s.InterLatScale)
			}
		}
		b.WriteString("\n")
	}
}
