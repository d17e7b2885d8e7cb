package runctl

import (
	"slices"
	"time"
)

// A probe of a link (the sweep's --link-bw auto, a scenario's alpha and
// beta) is repeated until it agrees with itself: on a host that runs other
// work, one repetition read anything from a twentieth of the link to all
// of it (8 ranks on shm: 0.24 to 5.93 GB/s), and every figure derived from
// it followed the host's load. The figure is the median of the SettleBest
// highest readings (the link as the host's other work left it least),
// taken once they lie within SettleAgree of each other, or after
// SettleMaxReps repetitions or SettleMaxTime, whichever comes first; the
// figure is then marked as not agreed.
const (
	SettleBest    = 3
	SettleAgree   = 0.10
	SettleMaxReps = 12
	SettleMaxTime = 3 * time.Second
)

// Reading is one repetition of a probe: its figure (higher is better: a
// rate) and the time since the first repetition started. Every rank must
// see the same readings (one rank's, or a reduction's), so that every rank
// stops at the same repetition.
type Reading struct {
	Value   float64
	Elapsed time.Duration
}

// Settled is what the repetitions of a probe found.
type Settled struct {
	Value  float64 // the median of the best SettleBest readings
	Lo, Hi float64 // the lowest and highest reading
	Reps   int     // repetitions run
	// Agreed: the best SettleBest readings lie within SettleAgree of each
	// other; false when the bounds stopped the repetitions first.
	Agreed bool
	Took   time.Duration // the repetitions' time, as measure reported it
}

// Settle runs measure (rep counts from 0) until its readings agree, and
// returns the figure. It stops at measure's first error.
func Settle(measure func(rep int) (Reading, error)) (Settled, error) {
	var got []float64
	var f Settled
	for rep := 0; ; rep++ {
		r, err := measure(rep)
		if err != nil {
			return Settled{}, err
		}
		got = append(got, r.Value)
		f.Reps, f.Took = len(got), r.Elapsed
		best, agreed := bestAgree(got)
		if agreed || len(got) >= SettleMaxReps || r.Elapsed >= SettleMaxTime {
			f.Value, f.Agreed = best, agreed
			f.Lo, f.Hi = slices.Min(got), slices.Max(got)
			return f, nil
		}
	}
}

// bestAgree returns the median of the SettleBest highest readings (of all
// of them while there are fewer), and whether there are SettleBest and
// they lie within SettleAgree of the highest.
func bestAgree(readings []float64) (float64, bool) {
	s := slices.Clone(readings)
	slices.Sort(s)
	slices.Reverse(s)
	top := s[:min(len(s), SettleBest)]
	med := top[len(top)/2]
	if len(top)%2 == 0 {
		med = (top[len(top)/2-1] + top[len(top)/2]) / 2
	}
	hi, lo := top[0], top[len(top)-1]
	return med, len(top) == SettleBest && hi > 0 && (hi-lo)/hi <= SettleAgree
}
