//go:build race

package bench

// raceEnabled reports whether the tests run under the race detector, whose
// instrumentation deepens every frame.
const raceEnabled = true
