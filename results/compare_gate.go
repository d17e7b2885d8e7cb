package results

import (
	"math"
	"slices"
)

// maxRunsToDecide bounds RunsToDecide's search: at any alpha above about
// 1e-300 the U test of two samples this large that do not overlap reaches
// it.
const maxRunsToDecide = 1 << 10

// RunsToDecide returns the smallest number of measurements a side with
// which the two-sided Mann-Whitney U test can reach alpha (0 for 0.05):
// the n at which Detectable(n, n, alpha) first holds, found by asking
// benchmath rather than from a table. It is 0 when no n up to 1024 does.
func RunsToDecide(alpha float64) int {
	// Detectable is monotonic in n: search for its first true.
	lo, hi := 1, maxRunsToDecide
	if !Detectable(hi, hi, alpha) {
		return 0
	}
	for lo < hi {
		mid := (lo + hi) / 2
		if Detectable(mid, mid, alpha) {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return lo
}

// Undecided returns the comparisons of cs whose medians moved for the
// worse by more than threshold (a fraction) but that were measured too few
// times for the U test to reach alpha (0 for 0.05) however far apart
// their measurements: not significant, and not a pass either. More
// measurements (RunsToDecide a side) would decide them.
func Undecided(cs []Comparison, threshold, alpha float64) []Comparison {
	var u []Comparison
	for _, c := range cs {
		if !c.Significant && c.Worse && math.Abs(c.Delta) > threshold && !Detectable(c.OldN, c.NewN, alpha) {
			u = append(u, c)
		}
	}
	return u
}

// RowValue is one row's median in one unit.
type RowValue struct {
	Name   string
	Median float64
	N      int // measurements the median is over
}

// BusBWBelow returns the rows of s whose median bus bandwidth
// (busbw-GB/s) is below min GB/s, in file order: the absolute gate of
// `compare --min-busbw`, as nccl-tests' NCCL_TESTS_MIN_BW. rows is the
// number of rows that had a bus bandwidth at all.
func BusBWBelow(s *Samples, min float64) (below []RowValue, rows int) {
	for _, k := range s.keys {
		if k.unit != unitBusBW {
			continue
		}
		v := slices.Sorted(slices.Values(s.values[k]))
		med := v[len(v)/2]
		if len(v)%2 == 0 {
			med = (v[len(v)/2-1] + v[len(v)/2]) / 2
		}
		rows++
		if med < min {
			below = append(below, RowValue{Name: k.name, Median: med, N: len(v)})
		}
	}
	return below, rows
}
