package main

import (
	"math"
	"time"

	"github.com/hccl-test/hccl-test/bench"
)

// The progress bar's time left comes from the sizes still to run, not from
// the rows counted: a sweep runs its small rows first, which take
// microseconds, and its largest last, which take most of the time, so that
// rows done times their mean time reads "0s" with the bulk still to come.
// Each row's wall time is modelled as a + b*bytes (a fixed cost per row:
// its latency, warm-up, check and gathering; b per byte), fitted by least
// squares to the rows done, and summed over the rows left.

// etaLeft estimates the time the rows of leftBytes will take, from the rows
// done so far: doneBytes[i] took doneWall[i]. 0 with no row done.
func etaLeft(doneBytes []int64, doneWall []time.Duration, leftBytes []int64) time.Duration {
	n := min(len(doneBytes), len(doneWall))
	if n == 0 || len(leftBytes) == 0 {
		return 0
	}
	a, b := fitRowCost(doneBytes[:n], doneWall[:n])
	var left float64
	for _, x := range leftBytes {
		left += a + b*float64(max(x, 0))
	}
	return time.Duration(min(left, float64(1<<62)))
}

// fitRowCost fits wall = a + b*bytes (nanoseconds) to the rows done, by
// least squares, with neither coefficient negative: when the fit would
// give one, the other alone explains the rows (a = the mean time of a row,
// or b = the time per byte overall).
func fitRowCost(bytes []int64, wall []time.Duration) (a, b float64) {
	n := float64(len(bytes))
	var sx, sy, sxx, sxy float64
	for i := range bytes {
		x, y := float64(max(bytes[i], 0)), float64(max(wall[i], 0))
		sx, sy, sxx, sxy = sx+x, sy+y, sxx+x*x, sxy+x*y
	}
	if d := n*sxx - sx*sx; d > 0 {
		b = (n*sxy - sx*sy) / d
		a = (sy - b*sx) / n
	}
	switch {
	case b <= 0 || math.IsNaN(b): // one size done, or larger rows not slower
		return sy / n, 0
	case a < 0:
		if sx > 0 {
			return 0, sy / sx
		}
		return sy / n, 0
	}
	return a, b
}

// planRowBytes returns the size of every row the plan measures, in the
// order measured: the sweep's rows, once per run.
func planRowBytes(p bench.Plan) []int64 {
	rows := p.Rows()
	out := make([]int64, 0, len(rows)*max(p.Runs, 1))
	for range max(p.Runs, 1) {
		for _, r := range rows {
			out = append(out, r.Bytes)
		}
	}
	return out
}
