//go:build !race

package dtype

// raceEnabled reports whether the race detector is on (see race_test.go).
const raceEnabled = false
