package predict

import (
	"math"
	"slices"

	"github.com/hccl-test/hccl-test/clustermodel"
)

// levelFit is the search of a model's global figures (params) over a
// fit's rows: where it starts, which figures it may move, and how a point
// of it sets the model.
type levelFit struct {
	m                       *clustermodel.Model
	samples                 []Sample
	single, multi, reducing []Sample
	// x0 is the start taken from the rows themselves, as params' fields
	// in order; free marks the figures the rows can move.
	x0   []float64
	free []bool
	// hasInter and ports are what set gives the link between servers.
	hasInter bool
	ports    string
	// hostBW is the host's rate (HostGBps) set gives the model, in B/s,
	// where the caller set one to fit from or the fixed model has one;
	// 0 leaves the model without.
	hostBW float64
}

// newLevelFit prepares the search of m's levels over samples, and sets
// every op of samples on m at scale 1. fixed is as fitModel's.
func newLevelFit(m *clustermodel.Model, samples []Sample, fixed *clustermodel.Model) *levelFit {
	lf := &levelFit{m: m, samples: samples}
	for _, s := range samples {
		if s.World.Servers > 1 {
			lf.multi = append(lf.multi, s)
		} else {
			lf.single = append(lf.single, s)
		}
		if s.Op.Reduces() {
			lf.reducing = append(lf.reducing, s)
		}
	}
	// A start from the rows themselves: the fastest row's busbw as the
	// bandwidth, half the quickest row's time as the latency.
	start := func(rows []Sample) (alpha, bw float64) {
		alpha, bw = math.Inf(1), 0
		for _, s := range rows {
			alpha, bw = min(alpha, s.TimeUS*1e-6/2), max(bw, s.BusBW()*1e9)
		}
		return alpha, bw
	}
	intra := lf.single
	if len(intra) == 0 {
		intra = samples
	}
	a, bw := start(intra)
	p := params{math.Log(a), math.Log(bw), math.Log(bw), 0, 0}
	multi := len(lf.multi) > 0
	lf.free = []bool{true, true, len(lf.reducing) > 0, multi, multi}
	if multi {
		a, bw := start(lf.multi)
		p.interAlpha, p.interBW = math.Log(a), math.Log(bw)
	}
	if fixed != nil {
		if !lf.free[2] {
			p.reduceBW = math.Log(fixed.ReduceGBps * 1e9)
		}
		if !lf.free[3] && fixed.Inter != nil {
			p.interAlpha, p.interBW = math.Log(fixed.Inter.AlphaUS*1e-6), math.Log(fixed.Inter.GBps*1e9)
		}
	}
	lf.hasInter = multi || fixed != nil && fixed.Inter != nil
	// Whose the link between servers is stays what the caller set on m
	// (FitFiles tries each), or the fixed model's.
	if m.Inter != nil {
		lf.ports = m.Inter.Ports
	}
	if fixed != nil && fixed.Inter != nil {
		lf.ports = fixed.Inter.Ports
	}
	// A host's rate (HostGBps) is fitted where the caller set one to
	// start from, or held from the fixed model's.
	lf.hostBW = m.HostGBps * 1e9
	if fixed != nil && fixed.HostGBps > 0 && lf.hostBW == 0 {
		lf.hostBW = fixed.HostGBps * 1e9
	}
	lf.x0 = []float64{p.intraAlpha, p.intraBW, p.reduceBW, p.interAlpha, p.interBW, 0}
	lf.free = append(lf.free, m.HostGBps > 0)
	if lf.hostBW > 0 {
		lf.x0[5] = math.Log(lf.hostBW)
	}
	m.Ops = nil
	for _, op := range opsOf(samples) {
		m.Ops = append(m.Ops, clustermodel.Op{Name: op.String(), BWScale: 1, LatScale: 1})
	}
	return lf
}

// set puts the point x (params' fields in order, then the host's rate,
// clamped to logLo..logHi) on the model as its levels, reduction and
// host's rate.
func (lf *levelFit) set(x []float64) {
	m := lf.m
	x = slices.Clone(x)
	for i := range x {
		x[i] = min(max(x[i], logLo), logHi)
	}
	m.Intra = clustermodel.Level{AlphaUS: math.Exp(x[0]) * 1e6, GBps: math.Exp(x[1]) / 1e9, From: m.Intra.From}
	m.ReduceGBps = math.Exp(x[2]) / 1e9
	m.Inter = nil
	if lf.hasInter {
		m.Inter = &clustermodel.Level{AlphaUS: math.Exp(x[3]) * 1e6, GBps: math.Exp(x[4]) / 1e9, Ports: lf.ports}
	}
	if lf.hostBW > 0 {
		m.HostGBps = math.Exp(x[5]) / 1e9
	}
}

// search fits the levels, with every op at scale 1, from the point start
// and returns the optimum it reaches. A weak pull toward the start keeps
// a figure the rows cannot tell (a reduction rate the links hide) where
// it started rather than drifting to a limit; against rows that show it,
// it moves a figure by about a millionth.
func (lf *levelFit) search(start []float64) []float64 {
	return lf.searchN(start, 4, 150, 0)
}

// searchN is search with minimizeN's runs, still and evals.
func (lf *levelFit) searchN(start []float64, runs, still, evals int) []float64 {
	x0 := slices.Clone(start)
	return minimizeN(slices.Clone(start), lf.free, func(x []float64) float64 {
		lf.set(x)
		return cost(lf.m, lf.samples) + ridge(x, x0)
	}, runs, still, evals)
}

// fitScales fits o's own scales on m to o's rows of samples, the levels
// held, and returns those rows.
func fitScales(m *clustermodel.Model, o *clustermodel.Op, samples []Sample) []Sample {
	return fitScalesN(m, o, samples, 4, 150, 0)
}

// fitScalesN is fitScales with minimizeN's runs, still and evals. Where
// o's rows hold worlds of one server and of several, its scales are
// fitted on the rows of one server and then its scales of the link
// between servers (InterBWScale, InterLatScale) on the rows of several,
// the first held: what a collective does inside a server is not what it
// does between them. Where they hold one kind only, one pair of scales
// fits them all, and OneServer says whether that kind was one server.
func fitScalesN(m *clustermodel.Model, o *clustermodel.Op, samples []Sample, runs, still, evals int) []Sample {
	rows := slices.DeleteFunc(slices.Clone(samples), func(s Sample) bool { return s.Op.String() != o.Name })
	multi := slices.DeleteFunc(slices.Clone(rows), func(s Sample) bool { return s.World.Servers < 2 })
	one := len(multi) == 0
	o.InterBWScale, o.InterLatScale, o.OneServer = 0, 0, one
	if one || len(multi) == len(rows) {
		fitPair(m, rows, &o.LatScale, &o.BWScale, runs, still, evals)
		return rows
	}
	single := slices.DeleteFunc(slices.Clone(rows), func(s Sample) bool { return s.World.Servers > 1 })
	fitPair(m, single, &o.LatScale, &o.BWScale, runs, still, evals)
	fitPair(m, multi, &o.InterLatScale, &o.InterBWScale, runs, still, evals)
	return rows
}

// fitPair fits the scales *lat and *bw of m to rows from 1, the rest of
// m held.
func fitPair(m *clustermodel.Model, rows []Sample, lat, bw *float64, runs, still, evals int) {
	y := minimizeN([]float64{0, 0}, []bool{true, true}, func(y []float64) float64 {
		*lat, *bw = clampScale(math.Exp(y[0])), clampScale(math.Exp(y[1]))
		return cost(m, rows) + ridge(y, []float64{0, 0})
	}, runs, still, evals)
	*lat, *bw = clampScale(math.Exp(y[0])), clampScale(math.Exp(y[1]))
}
