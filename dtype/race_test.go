//go:build race

package dtype

// raceEnabled reports whether the race detector is on: it slows the
// portable kernels tenfold, so the exhaustive tests sample more sparsely.
const raceEnabled = true
