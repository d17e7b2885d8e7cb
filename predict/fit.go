// Package predict fits a cluster's model (clustermodel) from the logs of
// its small runs, predicts larger worlds with it on auto's cost model, and
// exports what it predicts as the tables other tools take (SimAI's busbw
// table, the NCCL tuner plugin's CSV rules).
//
// A fitted model is coll's cost model with the cluster's figures: every
// measured row is predicted with the cost of the algorithm of ours that
// ran (hccl-test's own rows name it) or else the fastest of ours, and the
// figures are those that make these predictions nearest to the measured
// times (least squares on the logarithms of the times: every row counts
// by its relative error, whatever its size).
package predict

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"gonum.org/v1/gonum/optimize"

	"github.com/hccl-test/hccl-test/clustermodel"
	"github.com/hccl-test/hccl-test/coll"
)

// LargeBytes is where a row counts as large: from here a collective's
// time is mostly its bytes, below mostly its latencies. The band of a
// prediction takes the residuals of the fitted rows on its side of it.
const LargeBytes = 1 << 20

// Options are what a fit needs beyond the rows.
type Options struct {
	// Cores is the number of CPUs that the ranks of a server share to move
	// their data; used for hccl-test's own CPU backends (shm, proc, tcp)
	// only, whose ranks copy with the CPU. 0 for none.
	Cores int
	// MinBytes leaves out the rows below this size (0: none): rows that
	// ran from a CPU's cache, which a cluster's large messages do not.
	MinBytes int64
}

// Fit is a fitted model and how it came about.
type Fit struct {
	Model *clustermodel.Model
	// Rows are every fitted row with its prediction under the model, in
	// the order of the files.
	Rows []Residual
	// Skipped counts the rows of the files that fit could not use.
	Skipped int
	// Ports is how the fit chose whose the link between servers is (a
	// rank's or a server's): every choice it tried, with how well it
	// fitted; empty without a world of several servers.
	Ports []PortsTry
	// Cores is every number of shared CPUs the fit tried (CPU backends
	// only), with how well it fitted.
	Cores []CoresTry
	// PortsTold says whether the rows told the choices apart (PortsTold);
	// where they did not, the model keeps a link a rank.
	PortsTold bool
	// Host is how the fit with a host's rate did against the one without
	// (CPU backends only; zero otherwise).
	Host HostTry
}

// Residual is one measured row under the fitted model.
type Residual struct {
	Sample
	PredUS float64 // the model's time, us
	Algo   string  // the algorithm of ours the prediction is of
	ErrPct float64 // (PredUS - TimeUS) / TimeUS, in percent
}

// TransportOf returns what the model assumes of how a cluster's ranks
// move data: hccl-test's shm and proc read the sender's memory (a receive
// and its reduction are one pass) with the receiver's CPU; tcp copies
// every message with the sender's CPU; devices (every other tool's logs)
// move data without the CPUs.
func TransportOf(c Cluster) (fused, senderMoves, cpu bool) {
	switch c.Source {
	case "hccl-test shm", "hccl-test proc":
		return true, false, true
	case "hccl-test tcp":
		return false, true, true
	}
	return false, false, false
}

// FitFiles fits a model to the rows of files, which must all be of one
// cluster.
func FitFiles(files []*File, opt Options) (*Fit, error) {
	if len(files) == 0 {
		return nil, errors.New("no input")
	}
	var samples []Sample
	skipped := 0
	first := files[0]
	for _, f := range files {
		if f.Cluster.Source != first.Cluster.Source ||
			f.Cluster.Device != "" && first.Cluster.Device != "" && f.Cluster.Device != first.Cluster.Device {
			return nil, fmt.Errorf("two clusters mixed: %s is of %s, %s of %s", f.Path, f.Cluster, first.Path, first.Cluster)
		}
		for _, s := range f.Samples {
			if s.Bytes < opt.MinBytes {
				skipped++
				continue
			}
			samples = append(samples, s)
		}
		skipped += f.Skipped
	}
	if len(samples) == 0 {
		return nil, fmt.Errorf("%s: no row fit can use (of %d read: each needs a collective, 2 ranks or more, a time, and a size of --min-size or more)", first.Path, skipped)
	}
	m := &clustermodel.Model{Version: clustermodel.Version, Kind: clustermodel.Kind, Source: first.Cluster.Source}
	for _, f := range files {
		m.Device = cmpOr(m.Device, f.Cluster.Device)
	}
	fused, sender, cpu := TransportOf(first.Cluster)
	m.Fused, m.SenderMoves = fused, sender
	fit := &Fit{Skipped: skipped}
	fit.fitPorts(m, samples, opt.Cores, cpu)
	findOptima(m, samples)
	fitGrowth(m, samples)
	fit.Model = m
	type predicted struct {
		t    float64
		algo string
	}
	done := map[sampleKey]predicted{}
	for _, s := range samples {
		p, ok := done[keyOf(s)]
		if !ok {
			o, _ := m.Op(s.Op.String())
			p.t, p.algo = predictSample(m, o, s)
			done[keyOf(s)] = p
		}
		fit.Rows = append(fit.Rows, Residual{Sample: s, PredUS: p.t * 1e6, Algo: p.algo, ErrPct: 100 * (p.t*1e6 - s.TimeUS) / s.TimeUS})
	}
	if err := m.Validate(); err != nil {
		return nil, fmt.Errorf("the fit made no sense of these rows: %w", err)
	}
	return fit, nil
}

// coreCounts are the numbers of shared CPUs a fit tries: none for
// devices (cpu false), else the powers of two below most, and most.
func coreCounts(most int, cpu bool) []int {
	if !cpu || most < 1 {
		return []int{0}
	}
	var out []int
	for c := 1; c < most; c *= 2 {
		out = append(out, c)
	}
	return append(out, most)
}

// cmpOr returns a unless it is empty, else b.
func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// logLo and logHi bound the logarithm of every figure a fit searches:
// from a nanosecond's latency to 1 PB/s (limits.MaxRate) of bandwidth;
// seconds and bytes per second alike.
var logLo, logHi = math.Log(1e-9), math.Log(1e15)

// params are the global figures a fit searches, as logarithms (so each
// stays positive): latency in seconds, bandwidths in bytes per second.
type params struct {
	intraAlpha, intraBW, reduceBW, interAlpha, interBW float64
}

// fitModel fits m's levels and ops to samples. fixed, when not nil, is a
// model whose figures stand in for those the samples cannot show (a level
// they have no world of, a reduction they have no reducing row of).
func fitModel(m *clustermodel.Model, samples []Sample, fixed *clustermodel.Model) {
	lf := newLevelFit(m, samples, fixed)
	lf.set(lf.search(lf.x0))
	// Then each op's own scales, the levels held.
	for i := range m.Ops {
		o := &m.Ops[i]
		rows := fitScales(m, o, samples)
		describeOp(m, o, rows)
	}
	markInNetwork(m)
	describeLevels(m, lf.single, lf.multi, lf.reducing)
	m.Fitted = spanOf(samples)
}

// ridgeWeight is the weight of the pull toward the start (ridge).
const ridgeWeight = 1e-6

// ridge is the weak pull of x toward x0: ridgeWeight times the squared
// distance of their logarithms.
func ridge(x, x0 []float64) float64 {
	sum := 0.0
	for i := range x {
		d := x[i] - x0[i]
		sum += d * d
	}
	return ridgeWeight * sum
}

// clampScale keeps a scale within what a model may hold (1e-3 to 1e3).
func clampScale(v float64) float64 { return min(max(v, 1e-3), 1e3) }

// minimizeN runs Nelder-Mead on f from x over the coordinates marked
// free, restarting from its result until a restart gains nothing or runs
// ran, each run ending once the best value has not improved for still
// iterations or after evals evaluations of f (0: no limit), and returns
// the best point. The fit's own searches take 4 runs of 150.
func minimizeN(x []float64, free []bool, f func([]float64) float64, runs, still, evals int) []float64 {
	var idx []int
	for i, ok := range free {
		if ok {
			idx = append(idx, i)
		}
	}
	if len(idx) == 0 {
		return x
	}
	full := slices.Clone(x)
	expand := func(y []float64) []float64 {
		for j, i := range idx {
			full[i] = y[j]
		}
		return full
	}
	y := make([]float64, len(idx))
	for j, i := range idx {
		y[j] = x[i]
	}
	prob := optimize.Problem{Func: func(y []float64) float64 { return f(expand(y)) }}
	best := prob.Func(y)
	for range runs {
		res, err := optimize.Minimize(prob, y, &optimize.Settings{
			MajorIterations: 5000,
			FuncEvaluations: evals,
			Converger:       &optimize.FunctionConverge{Absolute: 1e-12, Relative: 1e-10, Iterations: still},
		}, &optimize.NelderMead{SimplexSize: 0.5})
		if res == nil || (err != nil && res.F >= best) {
			break
		}
		gain := best - res.F
		if res.F < best {
			best, y = res.F, slices.Clone(res.X)
		}
		if gain <= 1e-10*max(1, best) {
			break
		}
	}
	return slices.Clone(expand(y))
}

// cost is the sum of the squared logarithms of predicted over measured
// time of samples under m.
//
// The model predicts one time for the repeats of a row (keyOf), so each
// is predicted once: a log of many runs of one sweep costs what one run
// does, and the sum is the same, term by term.
func cost(m *clustermodel.Model, samples []Sample) float64 {
	sum := 0.0
	times := make(map[sampleKey]float64, len(samples))
	for _, s := range samples {
		t, ok := times[keyOf(s)]
		if !ok {
			o, _ := m.Op(s.Op.String())
			t, _ = predictSample(m, o, s)
			times[keyOf(s)] = t
		}
		if !(t > 0) || math.IsInf(t, 0) {
			return math.Inf(1)
		}
		d := math.Log(t * 1e6 / s.TimeUS)
		sum += d * d
	}
	return sum
}

// predictSample is the model's time for s in seconds and the algorithm it
// is of: the one that ran where s names it, else the fastest of ours.
func predictSample(m *clustermodel.Model, o clustermodel.Op, s Sample) (float64, string) {
	cm := m.Coll(o, s.World)
	b := int(s.Bytes / int64(s.Op.Blocks(s.World.Ranks())))
	var t float64
	algo := s.Algo
	if algo != "" {
		t = coll.Predict(s.Op, algo, s.World.Ranks(), max(b, 1), algoModel(m, cm, algo))
	} else {
		t, algo = fastest(m, s.Op, s.World.Ranks(), max(b, 1), cm)
	}
	return hostTime(m, s.Op, s.World, s.Bytes, t), algo
}

// fastest returns the time in seconds of the fastest of our algorithms for
// op on n ranks with blocks of b bytes under cm, and its name; NaN when
// none has a cost.
func fastest(m *clustermodel.Model, op coll.Op, n, b int, cm coll.Model) (float64, string) {
	best, name := math.NaN(), ""
	for _, a := range coll.Names(op) {
		if t := coll.Predict(op, a, n, b, algoModel(m, cm, a)); t > 0 && !(t >= best) {
			best, name = t, a
		}
	}
	return best, name
}

// opsOf returns the collectives of samples in --op's order.
func opsOf(samples []Sample) []coll.Op {
	var ops []coll.Op
	for _, s := range samples {
		if !slices.Contains(ops, s.Op) {
			ops = append(ops, s.Op)
		}
	}
	slices.Sort(ops)
	return ops
}

// spanOf returns the worlds and sizes of samples.
func spanOf(samples []Sample) clustermodel.Span {
	sp := clustermodel.Span{MinBytes: math.MaxInt64}
	for _, s := range samples {
		if !slices.Contains(sp.Worlds, s.World) {
			sp.Worlds = append(sp.Worlds, s.World)
		}
		sp.MinBytes, sp.MaxBytes = min(sp.MinBytes, s.Bytes), max(sp.MaxBytes, s.Bytes)
	}
	sort.SliceStable(sp.Worlds, func(i, j int) bool {
		a, b := sp.Worlds[i], sp.Worlds[j]
		return a.Ranks() < b.Ranks() || a.Ranks() == b.Ranks() && a.Servers < b.Servers
	})
	return sp
}

// worldsOf lists the distinct worlds of samples, as "1x2, 1x4".
func worldsOf(samples []Sample) string {
	var ws []string
	for _, w := range spanOf(samples).Worlds {
		ws = append(ws, w.String())
	}
	return strings.Join(ws, ", ")
}

// sampleKey is what makes two rows repeats of one measurement, which
// the model predicts alike: the collective, the world, the size and the
// algorithm.
type sampleKey struct {
	op    coll.Op
	world clustermodel.World
	bytes int64
	algo  string
}

func keyOf(s Sample) sampleKey { return sampleKey{s.Op, s.World, s.Bytes, s.Algo} }
