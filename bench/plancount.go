package bench

import (
	"fmt"
	"math"
	"slices"

	"github.com/hccl-test/hccl-test/coll"
	"github.com/hccl-test/hccl-test/fielderr"
	"github.com/hccl-test/hccl-test/internal/limits"
	"github.com/hccl-test/hccl-test/results"
)

// Limits on the size of a plan, checked by counting before anything is
// listed: a sweep of more sizes, or a plan of more rows (all runs
// together), is refused, naming the count. A million rows of the shortest
// kind take minutes to measure and hundreds of MiB to hold; more is a
// mistyped flag, not a benchmark.
const (
	// MaxSizes is the most sizes one sweep may have.
	MaxSizes = 100_000
	// MaxRows is the most rows a plan may have, every run counted.
	MaxRows = 1_000_000
)

// validateCounts refuses a plan with more than MaxSizes sizes or MaxRows
// rows, in time and memory that do not grow with either count.
func (p *Plan) validateCounts() error {
	n, exact := p.sizeCount()
	if n > MaxSizes {
		about := "about "
		if exact {
			about = ""
		}
		return fielderr.FieldErrorf("MinBytes", " %d %s %d: the sweep has %s%d sizes, at most %d (use a larger %s or %s)",
			p.MinBytes, fielderr.Field("MaxBytes"), p.MaxBytes, about, n, MaxSizes, fielderr.Field("StepFactor"), fielderr.Field("StepBytes"))
	}
	if rows := p.rowCount(); rows > MaxRows {
		return fmt.Errorf("the plan has %d rows (%s), at most %d: sweep fewer sizes, collectives, data types, reductions or roots",
			rows, p.rowFactors(), MaxRows)
	}
	return nil
}

// sizeCount returns how many sizes the sweep has (see Sizes), without
// listing them, and whether the count is exact. Past MaxSizes a sweep by a
// factor is estimated (estimateSteps).
func (p *Plan) sizeCount() (n int64, exact bool) {
	if p.MinBytes > p.MaxBytes {
		return 0, true
	}
	if p.StepBytes > 0 {
		return (p.MaxBytes-p.MinBytes)/p.StepBytes + 1, true
	}
	if !(p.StepFactor > 1) || math.IsInf(p.StepFactor, 0) {
		return 0, true
	}
	last := p.MinBytes
	p.eachSize(func(s int64) bool {
		n++
		last = s
		return n <= MaxSizes
	})
	if n <= MaxSizes {
		return n, true
	}
	return n + estimateSteps(float64(last), float64(p.MaxBytes), p.StepFactor), false
}

// estimateSteps returns about how many steps by factor f lead from size s
// past end: a step adds round(s*(f-1)) bytes, at least one, so the sizes
// where it adds k bytes, about [k-1/2, k+1/2]/(f-1), take their width over
// k steps; past 1000 bytes a step, rounding hardly matters and the rest is
// log(end/s)/log(f).
func estimateSteps(s, end, f float64) int64 {
	const bands = 1000
	var n float64
	for k := 1.0; k <= bands && s < end; k++ {
		hi := math.Min(end, (k+0.5)/(f-1))
		if hi > s {
			n += (hi - s) / k
			s = hi
		}
	}
	if s < end {
		n += math.Log(end/s) / math.Log(f)
	}
	return int64(n)
}

// rowCount returns how many rows the plan has, every run counted (what
// len(p.Rows()) times the runs would be), without listing them; past
// MaxRows it may stop early and return MaxRows+1 or more. It assumes the
// sizes were counted first (validateCounts).
func (p *Plan) rowCount() int64 {
	var perRun int64
	buckets := p.bucketList()
	for _, g := range p.groupList() {
		n := p.GroupSize(g)
		distinct := map[int64][]int64{} // by the unit a size rounds to
		for _, op := range p.Ops {
			places := len(p.Placements)
			if op.Desc().InPlace == coll.NoInPlace && slices.Contains(p.Placements, InPlace) {
				places-- // alltoallv: no in-place rows (groupRows)
			}
			shapes := int64(len(p.AlgosFor(op)) * places)
			if op.Reduces() {
				shapes *= int64(len(p.RedOps))
			}
			if op.Rooted() && p.Root < 0 {
				shapes *= int64(n)
			}
			for _, dt := range p.DTypes {
				unit := int64(max(op.Blocks(n), 1) * dt.Size())
				c, ok := distinct[unit]
				if !ok {
					c = p.distinctRows(unit, buckets)
					distinct[unit] = c
				}
				for i, k := range c {
					if i > 0 && op.Desc().Variable() {
						break // counts do not split into buckets (groupRows)
					}
					perRun = limits.SatAdd(perRun, limits.SatMul(k, shapes))
				}
			}
		}
	}
	return limits.SatMul(perRun, int64(max(p.Runs, 1)))
}

// distinctRows returns, for each of buckets, how many rows one shape has
// whose elements are unit bytes (see groupRows): a size that rounds to the
// row before it is dropped, and a bucketed row (--fusion) needs at least
// one element per collective.
func (p *Plan) distinctRows(unit int64, buckets []int) []int64 {
	out := make([]int64, len(buckets))
	last := int64(-1)
	p.eachSize(func(s int64) bool {
		if s/unit == last {
			return true
		}
		last = s / unit
		for i, b := range buckets {
			if b <= 1 || s/int64(b) >= unit {
				out[i]++
			}
		}
		return true
	})
	return out
}

// rowFactors names what the row count multiplies, for the message.
func (p *Plan) rowFactors() string {
	n, _ := p.sizeCount()
	roots := "1 root"
	if p.Root < 0 {
		roots = "up to " + results.Count(p.minGroupSize(), "root")
		if len(p.groupList()) == 1 {
			roots = results.Count(p.GroupSize(p.groupList()[0]), "root")
		}
	}
	reds := len(p.RedOps)
	s := fmt.Sprintf("%s x %s x %s x up to %s x %s", results.Count(n, "size"), results.Count(len(p.Ops), "collective"),
		results.Count(len(p.DTypes), "data type"), results.Count(reds, "reduction"), roots)
	if p.Compares() {
		s += " x their algorithms"
	}
	if len(p.Placements) > 1 {
		s += " x " + results.Count(len(p.Placements), "placement")
	}
	if b := len(p.bucketList()); b > 1 {
		s += " x " + results.Count(b, "fusion")
	}
	if g := len(p.groupList()); g > 1 {
		s += " x " + results.Count(g, "domain")
	}
	if p.Runs > 1 {
		s += " x " + results.Count(p.Runs, "run")
	}
	return s
}
