package bench

// How a row's samples, gathered from every rank, become its record.

import (
	"math"

	"github.com/montanaflynn/stats"

	"github.com/hccl-test/hccl-test/results"
)

// The values that follow the iteration times in a rank's samples, by
// their offset from the number of iterations.
const (
	extraWrong     = iota // elements the check found wrong; -1 when not checked
	extraWaited           // seconds spent waiting on peers in the timed iterations
	extraUnchecked        // messages --inject corrupted in calls the check does not see
	extraInCheck          // messages --inject corrupted in the checked call
	extraCPU              // this rank's share of the process's CPU seconds per op (-C); 0 without
	extraReceived         // seconds its variable-size calls took to their last receive (coll.Comm.Received), per op
	sampleExtras          // how many values follow the times
)

// combine turns every rank's samples (rank-major, iters times and the
// sampleExtras each) into the row's record. The row's statistics are of
// one series, picked by avg (Average.series): by default the slowest
// rank's iterations, the rank whose timed loop took longest (the op is
// done when the last rank is done), as nccl-tests' -a 3 takes each rank's
// mean over its loop and then the largest; time is the series' mean, and
// min, p50, p99, max and stddev are of the same series, so min <= time <=
// max. The CPU time per op (-C) is combined over the ranks by avg too.
// The straggler figures (slow, skew) are of per-rank busy time instead;
// for a variable-size collective, of each rank's time from the start of
// its calls to their last receive (coll.Comm.Received).
// With groups, every rank of the world counts (all groups run at once)
// and the bus factor is the group's.
func combine(row Row, all []float64, n, iters int, linkGBps float64, avg Average) results.Record {
	perRank := make([][]float64, n)
	busy := make([]float64, n)
	recv := make([]float64, n)
	cpu := make([]float64, n)
	var wrong, unchecked, inCheck int64
	for rk := range perRank {
		perRank[rk] = all[rk*(iters+sampleExtras) : rk*(iters+sampleExtras)+iters]
	}
	perIter := avg.series(perRank)
	for rk := range n {
		s := all[rk*(iters+sampleExtras) : (rk+1)*(iters+sampleExtras)]
		var total float64
		for _, d := range s[:iters] {
			total += d
		}
		cpu[rk] = s[iters+extraCPU]
		busy[rk] = max(total-s[iters+extraWaited], 0)
		recv[rk] = s[iters+extraReceived]
		if s[iters+extraWrong] < 0 {
			wrong = -1
		} else if wrong >= 0 {
			wrong += int64(s[iters+extraWrong])
		}
		unchecked += int64(s[iters+extraUnchecked])
		inCheck += int64(s[iters+extraInCheck])
	}
	// Corruption the tool injected is always reported: one wrong element
	// per corrupted message that the check did not see, in a call it did
	// not check or in the checked one when it found nothing wrong (a max
	// or min hides a flipped bit of a value that does not win).
	injected := unchecked
	if wrong == 0 {
		injected += inCheck
	}
	if injected > 0 {
		wrong = max(wrong, 0) + injected
	}
	mean, _ := stats.Mean(perIter)
	lo, _ := stats.Min(perIter)
	hi, _ := stats.Max(perIter)
	mean = min(max(mean, lo), hi) // a rounded sum must not step outside
	us := func(f func(stats.Float64Data) (float64, error)) float64 {
		v, _ := f(perIter)
		return v * 1e6
	}
	rec := results.Record{
		Op: row.Op.String(), DType: row.DType.String(), RedOp: redOpName(row.RedOp), Root: row.Root,
		InPlace: row.Place == InPlace, Bytes: row.Bytes, Count: int64(row.Count) * int64(row.Op.Blocks(max(row.GroupSize, 1))) * int64(max(row.Buckets, 1)),
		Iters: iters, TimeUS: mean * 1e6,
		MinUS:    us(stats.Min),
		P50US:    us(func(d stats.Float64Data) (float64, error) { return stats.Percentile(d, 50) }),
		P99US:    us(func(d stats.Float64Data) (float64, error) { return stats.Percentile(d, 99) }),
		MaxUS:    us(stats.Max),
		StdDevUS: us(stats.StandardDeviation),
		Wrong:    wrong, Injected: injected, Util: math.NaN(),
		Group: row.Group, GroupSize: row.GroupSize, Buckets: row.Buckets,
	}
	rec.CPUUS = avg.of(cpu) * 1e6
	if row.Op.Desc().Variable() {
		// The rank whose receives completed last, the one the skew of
		// the counts made everyone wait for: its busy time names no one,
		// as senders wait until the hot receiver has taken their blocks
		// and, on shm, that receiver copies them inside its waits. With
		// even counts the ranks receive alike: the skew is near 1, and
		// slow is the last of equals.
		rec.SlowRank, rec.Skew = straggler(recv, mean*float64(iters))
	} else {
		rec.SlowRank, rec.Skew = straggler(busy, mean*float64(iters))
	}
	if mean > 0 {
		rec.AlgBW = float64(row.Bytes) / mean / 1e9
		rec.BusBW = rec.AlgBW * row.Op.BusFactor(max(row.GroupSize, 1))
	}
	if linkGBps > 0 {
		rec.Util = rec.BusBW / linkGBps
	}
	return rec
}

// straggler names the rank with the most busy time (time in the op not
// spent waiting on a peer: the rank the others waited for; for a
// variable-size collective, time to its last receive) and the ratio of
// its busy time to the least busy rank's. Busy times below a microsecond
// count as one, so that idle ranks do not make the ratio meaningless. The
// skew is 0 (not known) when that rank was busy less than
// results.SkewReadable of total, the row's time over its iterations: the
// ranks spent the op in their waits (on shm a receiver copies inside its
// wait), and the ratio of what is left is noise. No rank is named (-1)
// when no rank's time was measured: a call handed whole to a library's
// own collective (--algo native) has no waits of ours to tell busy time
// from.
func straggler(busy []float64, total float64) (rank int, skew float64) {
	if len(busy) < 2 {
		return 0, 1
	}
	least := math.Inf(1)
	for r, b := range busy {
		if b > busy[rank] {
			rank = r
		}
		least = min(least, b)
	}
	if busy[rank] <= 0 {
		return -1, 0
	}
	if busy[rank] < results.SkewReadable*total {
		return rank, 0
	}
	return rank, max(busy[rank], 1e-6) / max(least, 1e-6)
}

// rankIterUS is every rank's iteration times from the samples combine
// reads (rank-major, iters times and the sampleExtras each), in
// microseconds.
func rankIterUS(all []float64, n, iters int) [][]float64 {
	out := make([][]float64, n)
	for rk := range out {
		s := all[rk*(iters+sampleExtras) : rk*(iters+sampleExtras)+iters]
		out[rk] = make([]float64, iters)
		for i, d := range s {
			out[rk][i] = d * 1e6
		}
	}
	return out
}
