package bench

import (
	"fmt"
	"slices"
	"time"
)

// The link probe is repeated until it agrees with itself: on a host that
// runs other work, one repetition read anything from a twentieth of the
// link to all of it (8 ranks on shm: 0.24 to 5.93 GB/s), and util, a
// row's busbw over that figure, followed the host's load rather than the
// row. The figure is the median of the probeBest highest readings (the
// link as the host's other work left it least), taken once they lie within
// probeAgree of each other, or after probeMaxReps repetitions or
// probeMaxTime, whichever comes first; then the figure is marked
// uncertain and the header says how far the readings spread.
const (
	probeBest    = 3
	probeAgree   = 0.10
	probeMaxReps = 12
	probeMaxTime = 3 * time.Second
)

// linkFigure is what the repetitions of the link probe found.
type linkFigure struct {
	GBps   float64 // the median of the best probeBest readings, in GB/s
	Lo, Hi float64 // the lowest and highest reading, in GB/s
	Reps   int     // repetitions run
	// Agreed: the best probeBest readings lie within probeAgree of each
	// other; false when the bounds stopped the repetitions first.
	Agreed bool
	Took   time.Duration // the repetitions' time, as measure reported it
}

// probeReading is one repetition of the probe: its figure and the time
// since the first repetition started. Every rank must see the same
// readings (rank 0's, broadcast), so that every rank stops at the same
// repetition.
type probeReading struct {
	GBps    float64
	Elapsed time.Duration
}

// settleProbe runs measure until its readings agree (see probeBest), and
// returns the figure. It stops at measure's first error.
func settleProbe(measure func(rep int) (probeReading, error)) (linkFigure, error) {
	var got []float64
	var f linkFigure
	for rep := 0; ; rep++ {
		r, err := measure(rep)
		if err != nil {
			return linkFigure{}, err
		}
		got = append(got, r.GBps)
		f.Reps, f.Took = len(got), r.Elapsed
		best, agreed := bestAgree(got)
		if agreed || len(got) >= probeMaxReps || r.Elapsed >= probeMaxTime {
			f.GBps, f.Agreed = best, agreed
			f.Lo, f.Hi = slices.Min(got), slices.Max(got)
			return f, nil
		}
	}
}

// bestAgree returns the median of the probeBest highest readings (of all
// of them while there are fewer), and whether there are probeBest and they
// lie within probeAgree of the highest.
func bestAgree(readings []float64) (float64, bool) {
	s := slices.Clone(readings)
	slices.Sort(s)
	slices.Reverse(s)
	top := s[:min(len(s), probeBest)]
	med := top[len(top)/2]
	if len(top)%2 == 0 {
		med = (top[len(top)/2-1] + top[len(top)/2]) / 2
	}
	hi, lo := top[0], top[len(top)-1]
	return med, len(top) == probeBest && hi > 0 && (hi-lo)/hi <= probeAgree
}

// describe says, for the header, how the repetitions went.
func (f linkFigure) describe() string {
	if f.Agreed {
		return fmt.Sprintf("the median of the best %d of %d repetitions, within %.0f%% of each other (all: %.3g..%.3g GB/s)",
			probeBest, f.Reps, 100*probeAgree, f.Lo, f.Hi)
	}
	return fmt.Sprintf("%d repetitions in %v did not agree: the best %d not within %.0f%% of each other (all: %.3g..%.3g GB/s), the median of the best %d taken; util uncertain",
		f.Reps, f.Took.Round(time.Millisecond), probeBest, 100*probeAgree, f.Lo, f.Hi, probeBest)
}
