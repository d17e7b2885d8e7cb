package predict

import (
	"fmt"
	"math"
	"strings"

	"github.com/hccl-test/hccl-test/clustermodel"
	"github.com/hccl-test/hccl-test/coll"
	"github.com/hccl-test/hccl-test/internal/limits"
)

// DefaultGrowth is the error a prediction's band adds per doubling of
// ranks beyond the fitted worlds when the fit could not measure it (its
// logs held one number of ranks): 10%.
const DefaultGrowth = 0.10

// MinBand is the narrowest half-width of a band, as a fraction: no
// prediction is surer than 2%.
const MinBand = 0.02

// SizeWeight is how much a doubling of the size beyond the fitted sizes
// widens a band, against a doubling of ranks: a quarter (beyond the fitted
// sizes a collective's time grows with its bytes, which the fit saw).
const SizeWeight = 0.25

// MaxRows is the most rows one predict makes (ops x sizes).
const MaxRows = 100000

// elemBytes is the element a predicted size is a multiple of per block:
// fp32's 4 bytes, nccl-tests' default float.
const elemBytes = 4

// Query is what to predict: every collective of Ops at every size of
// Sizes on World.
type Query struct {
	World clustermodel.World
	Ops   []coll.Op
	Sizes []int64
	// Algo is the algorithm to predict, "" (or auto) for the fastest of
	// ours at each size.
	Algo string
}

// Row is one predicted row. Nothing in it was measured.
type Row struct {
	Op    coll.Op
	World clustermodel.World
	// Bytes is the size as nccl-tests and hccl-test define it, rounded
	// down to a whole number of 4-byte elements per block (at least one).
	Bytes int64
	// Algo is the algorithm of ours the model predicts fastest.
	Algo string
	// TimeUS is the predicted time of one call; LowUS and HighUS the band.
	TimeUS, LowUS, HighUS float64
	// AlgBW and BusBW are in GB/s, as a sweep's; BusLow and BusHigh the
	// band of BusBW (BusLow from HighUS).
	AlgBW, BusBW, BusLow, BusHigh float64
	// Doublings is how far the row extrapolates from what was fitted: in
	// doublings of ranks and of servers beyond the fitted worlds, plus
	// SizeWeight per doubling of size beyond the fitted sizes.
	Doublings float64
	// BandPct is the band's half-width, in percent: the time lies within
	// TimeUS/(1+BandPct/100) and TimeUS*(1+BandPct/100); where the model
	// records other optima (clustermodel.Alternative) LowUS and HighUS
	// also cover what each predicts, and BandPct is the wider side.
	BandPct float64
}

// Sizes returns the sizes from lo to hi by factor f, as a sweep takes
// them: lo, lo*f, ... up to hi, with hi itself last.
func Sizes(lo, hi int64, f int) ([]int64, error) {
	switch {
	case lo < 1 || hi > limits.MaxSize:
		return nil, fmt.Errorf("sizes %d..%d: the limits are 1 to %d bytes", lo, hi, int64(limits.MaxSize))
	case hi < lo:
		return nil, fmt.Errorf("-e %d is below -b %d", hi, lo)
	case f < 2 && lo != hi:
		return nil, fmt.Errorf("-f %d: the step factor must be 2 or more", f)
	}
	var out []int64
	for s := lo; s <= hi; s *= int64(f) {
		out = append(out, s)
		if len(out) > MaxRows || s > hi/int64(max(f, 2)) {
			break
		}
	}
	if out[len(out)-1] != hi {
		out = append(out, hi)
	}
	return out, nil
}

// Predict predicts q's rows under m. It refuses a world beyond MaxRanks,
// a world of several servers for a model fitted on one server (it has no
// link between servers), a collective the model has no fit of, and more
// than MaxRows rows.
func Predict(m *clustermodel.Model, q Query) ([]Row, error) {
	w := q.World
	if err := checkWorld(w); err != nil {
		return nil, err
	}
	if w.Servers > 1 && m.Inter == nil {
		return nil, fmt.Errorf("%d servers: the model was fitted on one server only and knows no link between servers (fit logs of two servers or more)", w.Servers)
	}
	if n := len(q.Ops) * len(q.Sizes); n > MaxRows {
		return nil, fmt.Errorf("%d rows (%d collectives x %d sizes): the limit is %d", n, len(q.Ops), len(q.Sizes), MaxRows)
	}
	n := w.Ranks()
	var rows []Row
	for _, op := range q.Ops {
		o, ok := m.Op(op.String())
		if !ok {
			var have []string
			for _, x := range m.Ops {
				have = append(have, x.Name)
			}
			return nil, fmt.Errorf("the model has no fit of %v (it has %s): fit logs of %v too", op, strings.Join(have, ", "), op)
		}
		if q.Algo != "" && q.Algo != coll.Auto && !coll.Supports(op, q.Algo) {
			return nil, fmt.Errorf("--algo %s does not serve %v (it has: %s)", q.Algo, op, strings.Join(coll.Names(op), ", "))
		}
		cm := m.Coll(o, w)
		if !cm.Valid() {
			return nil, fmt.Errorf("%v: the model's figures make no cost model", op)
		}
		for _, size := range q.Sizes {
			unit := int64(op.Blocks(n)) * elemBytes
			bytes := max(size-size%unit, unit)
			asked := ""
			if q.Algo != "" && q.Algo != coll.Auto {
				asked = q.Algo
			}
			t, algo := predictSample(m, o, Sample{Op: op, World: w, Bytes: bytes, Algo: asked})
			if !(t > 0) || math.IsInf(t, 0) {
				return nil, fmt.Errorf("%v on %d ranks, %d bytes: no algorithm of ours asked for has a cost there", op, n, bytes)
			}
			rows = append(rows, widenByOptima(m, bandRow(m, o, Row{Op: op, World: w, Bytes: bytes, Algo: algo, TimeUS: t * 1e6}), asked))
		}
	}
	return rows, nil
}

// Doublings is how far a row of bytes on w extrapolates from what span
// holds: the doublings of ranks beyond its largest world, of servers
// beyond its most servers, and SizeWeight per doubling of size beyond its
// sizes.
func Doublings(span clustermodel.Span, w clustermodel.World, bytes int64) float64 {
	largest, servers := span.Largest()
	up := func(x, of float64) float64 { return max(0, math.Log2(x/of)) }
	return up(float64(w.Ranks()), float64(largest.Ranks())) + up(float64(w.Servers), float64(servers)) +
		SizeWeight*(up(float64(bytes), float64(span.MaxBytes))+up(float64(span.MinBytes), float64(bytes)))
}

// unseenServers is the doublings of servers of w beyond the most servers
// of span's worlds when the span could not show how the error grows with
// servers: its worlds of several servers all have the same number of
// them (or there is none). 0 otherwise.
func unseenServers(span clustermodel.Span, w clustermodel.World) float64 {
	counts := map[int]bool{}
	most := 1
	for _, x := range span.Worlds {
		if x.Servers > 1 {
			counts[x.Servers] = true
		}
		most = max(most, x.Servers)
	}
	if len(counts) > 1 || w.Servers <= most {
		return 0
	}
	return math.Log2(float64(w.Servers) / float64(most))
}

// bandRow fills r's bandwidths and band from its time, under m's fit o.
func bandRow(m *clustermodel.Model, o clustermodel.Op, r Row) Row {
	r.Doublings = Doublings(m.Fitted, r.World, r.Bytes)
	in := o.WorstPct / 100
	if r.Bytes >= LargeBytes && o.LargeP75Pct > 0 {
		in = o.LargeP75Pct / 100
	}
	growth := DefaultGrowth
	if o.GrowthPct > 0 {
		growth = o.GrowthPct / 100
	}
	w := max(in, MinBand) + growth*r.Doublings
	if d := unseenServers(m.Fitted, r.World); d > 0 && growth < DefaultGrowth {
		// No two fitted worlds of several servers differ in their
		// servers: the growth measured says nothing of more of them
		// (a fabric's tiers beyond one switch), so their doublings
		// take the default.
		w += (DefaultGrowth - growth) * d
	}
	r.BandPct = 100 * w
	r.LowUS, r.HighUS = r.TimeUS/(1+w), r.TimeUS*(1+w)
	r.AlgBW = float64(r.Bytes) / (r.TimeUS * 1e3)
	r.BusBW = r.AlgBW * r.Op.BusFactor(r.World.Ranks())
	r.BusLow, r.BusHigh = r.BusBW/(1+w), r.BusBW*(1+w)
	return r
}
