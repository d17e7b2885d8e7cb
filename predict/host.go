package predict

import (
	"math"

	"github.com/hccl-test/hccl-test/clustermodel"
	"github.com/hccl-test/hccl-test/coll"
)

// HostTry is how a fit with a host's rate shared by the ranks of a
// server (clustermodel's HostGBps) did against one without, at the
// count of CPUs and the ports of the model kept.
type HostTry struct {
	Cores int
	Ports string
	// GBps is the host's rate fitted; RMSPct the fit's error with it and
	// NoneRMSPct without it (as PortsTry's).
	GBps, RMSPct, NoneRMSPct float64
	// Told says that the rate lowered the sum of squared logarithmic
	// errors by hostTold or more, and the model has it.
	Told bool
}

// hostTold is how much lower, relatively, the sum of squared logarithmic
// errors must be with a host's rate than without it for the model to keep
// one: as portsTold, 5%. A rate the rows do not call for (they are as
// well fitted by the links and the shared CPUs alone) is left out.
const hostTold = portsTold

// hostStarts are the multiples of hostRate a fit of a host's rate starts
// from, keeping the best: from the tightest rate alone the search can
// stay where the bound holds every row, from the loosest where it holds
// none.
var hostStarts = []float64{1, 1.5, 2.5}

// fitHost fits m with a host's rate to samples from each of hostStarts
// times start, and returns the best fit and its cost.
func fitHost(m clustermodel.Model, samples []Sample, start float64) (clustermodel.Model, float64) {
	best, sum := m, math.Inf(1)
	for _, k := range hostStarts {
		try := m
		try.HostGBps = start * k
		fitModel(&try, samples, nil)
		if c := cost(&try, samples); c < sum {
			best, sum = try, c
		}
	}
	return best, sum
}

// hostRate is where a fit of a host's rate starts: the fastest rate at
// which any row's server wrote its results (PerServer times HostBytes
// over its time), the least rate under which no row ran faster than the
// bound.
func hostRate(samples []Sample) float64 {
	best := 0.0
	for _, s := range samples {
		if s.TimeUS > 0 {
			best = max(best, float64(s.World.PerServer)*clustermodel.HostBytes(s.Op, s.World.Ranks(), s.Bytes)/(s.TimeUS*1e3))
		}
	}
	return best
}

// hostTime is t, the cost model's time of a call of op of size bytes on
// w, or the least time the ranks of a server take to write its results
// through their host's memory (clustermodel's HostBound), whichever is
// longer; NaN stays NaN.
func hostTime(m *clustermodel.Model, op coll.Op, w clustermodel.World, size int64, t float64) float64 {
	if h := m.HostBound(op, w, size); h > t {
		return h
	}
	return t
}
