// Package wallbound gives tests their wall-clock bounds. A test never
// asserts speed: where it must bound a wait (a failure that ends soon after
// its deadline rather than never, a refusal that comes before any work), it
// measures a baseline on this host, under its present load, from work of
// the same kind done healthy, and allows the promised time plus a multiple
// of that baseline. On a busy host the baseline grows with the load, and
// the bound with it; a wait that hangs still fails.
//
// The package is for tests only: nothing in the program imports it.
package wallbound

import "time"

// Factor is how many baselines a bound allows beyond the promised time.
const Factor = 20

// Floor is the least slack a bound allows beyond the promised time: a
// baseline of microseconds says nothing of the pauses a loaded host's
// scheduler adds (a process starved for a second beside busy loops).
const Floor = 2 * time.Second

// Baseline runs f three times and returns the quickest: how long the work
// takes on this host now. The quickest, not the mean, so that one pause
// in the baseline does not stretch every bound; the factor covers pauses.
func Baseline(f func()) time.Duration {
	quickest := time.Duration(1<<63 - 1)
	for range 3 {
		start := time.Now()
		f()
		quickest = min(quickest, time.Since(start))
	}
	return quickest
}

// Slack is the time a bound allows beyond the promised one, given a
// baseline from Baseline: Factor baselines, and at least Floor.
func Slack(baseline time.Duration) time.Duration {
	return max(Floor, Factor*baseline)
}

// Bound is the wall time a test allows for something promised to take
// promised (0 for "at once"), given a baseline from Baseline.
func Bound(promised, baseline time.Duration) time.Duration {
	return promised + Slack(baseline)
}
