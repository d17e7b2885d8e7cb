package predict

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/montanaflynn/stats"

	"github.com/hccl-test/hccl-test/clustermodel"
	"github.com/hccl-test/hccl-test/coll"
)

// InNetworkScale is how far above the links a reducing collective's
// bandwidth must be, over the collectives that do not reduce (or over 1
// without them), before fit says the network reduced it: ring and tree
// shapes of ours cannot pass the links by that much.
const InNetworkScale = 1.15

// family says how an algorithm's steps grow with the ranks, for the
// notes of a fit.
func family(algo string) string {
	switch algo {
	case "ring", "multiring", "chain", "pairwise", "pipeline":
		return "ring-like: its steps grow with the ranks"
	case "oneshot", "twoshot", "direct":
		return "direct: every rank sends to every other at once"
	case "":
		return "no algorithm of ours"
	}
	return "tree-like: its steps grow with log2 of the ranks"
}

// describeOp sets o's shape, notes and in-sample residuals from its rows.
func describeOp(m *clustermodel.Model, o *clustermodel.Op, rows []Sample) {
	o.Rows = len(rows)
	wins := map[string]int{}
	var errs, large []float64
	for _, s := range rows {
		t, algo := predictSample(m, *o, s)
		e := math.Abs(100 * (t*1e6 - s.TimeUS) / s.TimeUS)
		errs = append(errs, e)
		if s.Bytes >= LargeBytes {
			large = append(large, e)
		}
		if s.Bytes >= LargeBytes || !hasLarge(rows) {
			wins[algo]++
		}
	}
	o.Shape = ""
	for a, n := range wins {
		if o.Shape == "" || n > wins[o.Shape] || n == wins[o.Shape] && a < o.Shape {
			o.Shape = a
		}
	}
	o.MedianPct, _ = stats.Median(errs)
	o.WorstPct, _ = stats.Max(errs)
	o.LargeP75Pct, _ = stats.Percentile(large, 75)
	o.MedianPct, o.WorstPct, o.LargeP75Pct = round(o.MedianPct), round(o.WorstPct), round(o.LargeP75Pct)
	var notes []string
	ran := "fits best"
	if slices.ContainsFunc(rows, func(s Sample) bool { return s.Algo != "" }) {
		ran = "ran"
	}
	notes = append(notes, fmt.Sprintf("%s %s (%s)", o.Shape, ran, family(o.Shape)))
	switch {
	case o.BWScale > 1.05:
		notes = append(notes, fmt.Sprintf("moves data %.2fx faster than the links' fit", o.BWScale))
	case o.BWScale < 0.95:
		notes = append(notes, fmt.Sprintf("reaches %.0f%% of the links' fit", 100*o.BWScale))
	}
	if o.OneServer && m.Inter != nil && (o.BWScale != 1 || o.LatScale != 1) {
		notes = append(notes, "its scales are of one server's rows: between servers it takes the link's own figures")
	}
	if o.InterBWScale > 0 {
		notes = append(notes, fmt.Sprintf("its scales are of one server's rows; between servers its own, of its rows of several (bw %.3f, lat %.3f)", o.InterBWScale, o.InterLatScale))
	}
	o.Note = strings.Join(notes, "; ")
}

// hasLarge reports whether some row is large (LargeBytes).
func hasLarge(rows []Sample) bool {
	return slices.ContainsFunc(rows, func(s Sample) bool { return s.Bytes >= LargeBytes })
}

// round keeps two decimals.
func round(v float64) float64 { return math.Round(v*100) / 100 }

// markInNetwork marks the reducing collectives whose bandwidth scale
// passes the others' (or 1) by InNetworkScale: their curves exceed what
// the links allow on every algorithm of ours.
func markInNetwork(m *clustermodel.Model) {
	if m.Cores > 0 {
		return // CPUs reduce: no network to reduce in
	}
	ref := 0.0
	for _, o := range m.Ops {
		if op, _ := coll.ParseOp(o.Name); !op.Reduces() {
			ref = max(ref, o.BWScale)
		}
	}
	if ref == 0 {
		ref = 1
	}
	for i := range m.Ops {
		o := &m.Ops[i]
		op, _ := coll.ParseOp(o.Name)
		if !op.Reduces() || o.BWScale < InNetworkScale*ref || o.InNetwork {
			continue
		}
		o.InNetwork = true
		o.Note += fmt.Sprintf("; its busbw exceeds what the links allow (%.2fx the other collectives'): "+
			"a reduction in the network (NVLS- or SHARP-like), predicted with its own measured scale", o.BWScale/ref)
	}
}

// describeLevels says which rows each level was fitted on.
func describeLevels(m *clustermodel.Model, single, multi, reducing []Sample) {
	from := func(rows []Sample) string {
		var ops []string
		for _, op := range opsOf(rows) {
			ops = append(ops, op.String())
		}
		return fmt.Sprintf("%d rows of %s on %s", len(rows), strings.Join(ops, ", "), worldsOf(rows))
	}
	switch {
	case len(single) > 0:
		m.Intra.From = from(single)
	default:
		m.Intra.From = from(multi) + " (no run of one server: inside a server is told from the runs across servers)"
	}
	if m.Inter != nil {
		if len(multi) > 0 {
			m.Inter.From = from(multi)
		} else {
			m.Inter.From = "held from the full fit"
		}
	}
	_ = reducing
}

// fitGrowth measures how fast the model's error grows as it extrapolates,
// leaving one scale out: for each fitted world that lies beyond what the
// others span (Doublings > 0), it fits the rows of the other worlds and
// predicts that world's, and sets each op's GrowthPct to the largest, over
// the worlds left out, of the median error of its large rows there per
// doubling. A world of several servers is left out only where the others
// hold one too: its link between servers would else be the full fit's,
// fitted on the very rows it predicts (which made bands too narrow).
func fitGrowth(m *clustermodel.Model, samples []Sample) {
	for _, out := range spanOf(samples).Worlds {
		var train, test []Sample
		for _, s := range samples {
			if s.World == out {
				test = append(test, s)
			} else {
				train = append(train, s)
			}
		}
		if len(train) == 0 || out.Servers > 1 && !slices.ContainsFunc(train, func(s Sample) bool { return s.World.Servers > 1 }) {
			continue
		}
		span := spanOf(train)
		if Doublings(span, out, span.MaxBytes) == 0 {
			continue // inside what the others span: no extrapolation to measure
		}
		held := &clustermodel.Model{Version: m.Version, Kind: m.Kind, Fused: m.Fused, Cores: m.Cores, SenderMoves: m.SenderMoves, HostGBps: m.HostGBps}
		fitModel(held, train, m)
		for i := range m.Ops {
			o := &m.Ops[i]
			h, ok := held.Op(o.Name)
			if !ok {
				continue
			}
			var errs []float64
			rows := slices.DeleteFunc(slices.Clone(test), func(s Sample) bool { return s.Op.String() != o.Name })
			large := hasLarge(rows)
			for _, s := range rows {
				if large && s.Bytes < LargeBytes {
					continue
				}
				t, _ := predictSample(held, h, s)
				errs = append(errs, math.Abs(100*(t*1e6-s.TimeUS)/s.TimeUS)/Doublings(span, s.World, s.Bytes))
			}
			if med, err := stats.Median(errs); err == nil {
				o.GrowthPct = max(o.GrowthPct, round(min(med, 1e4)))
			}
		}
	}
}
