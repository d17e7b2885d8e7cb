package results

import (
	"math"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunsToDecide checks RunsToDecide against the exact smallest p-value
// of the two-sided U test with n a side, 2 / (2n choose n), computed here
// apart from benchmath.
func TestRunsToDecide(t *testing.T) {
	exact := func(alpha float64) int {
		for n := int64(1); ; n++ {
			c, _ := new(big.Float).SetInt(new(big.Int).Binomial(2*n, n)).Float64()
			if 2/c <= alpha {
				return int(n)
			}
		}
	}
	for _, alpha := range []float64{0.05, 0.01, 0.001, 1e-6, 1e-9} {
		if got, want := RunsToDecide(alpha), exact(alpha); got != want {
			t.Errorf("RunsToDecide(%v) = %d, want %d", alpha, got, want)
		}
	}
	if got := RunsToDecide(0); got != 4 {
		t.Errorf("RunsToDecide(0) = %d, want 4 (alpha 0.05)", got)
	}
}

// TestUndecided checks which comparisons are undecided: moved for the worse
// past the threshold, not significant, and too few measurements to be.
func TestUndecided(t *testing.T) {
	for _, tc := range []struct {
		name string
		c    Comparison
		want bool
	}{
		{"8x slower, 3 a side", Comparison{Delta: 7, Worse: true, OldN: 3, NewN: 3, P: 0.1}, true},
		{"8x slower, 3 a side, significant", Comparison{Delta: 7, Worse: true, OldN: 3, NewN: 3, Significant: true}, false},
		{"8x slower, 6 a side, not significant: decided", Comparison{Delta: 7, Worse: true, OldN: 6, NewN: 6, P: 0.3}, false},
		{"8x faster, 3 a side", Comparison{Delta: -0.875, Worse: false, OldN: 3, NewN: 3}, false},
		{"2% slower, 3 a side", Comparison{Delta: 0.02, Worse: true, OldN: 3, NewN: 3}, false},
		{"1 measurement a side", Comparison{Delta: 0.5, Worse: true, OldN: 1, NewN: 1}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := len(Undecided([]Comparison{tc.c}, 0.05, 0)) == 1; got != tc.want {
				t.Errorf("undecided %v, want %v", got, tc.want)
			}
		})
	}
}

// TestBusBWBelow checks the --min-busbw gate over a file's medians.
func TestBusBWBelow(t *testing.T) {
	path := filepath.Join(t.TempDir(), "new.txt")
	lines := []string{
		"BenchmarkAllReduce/size=1KiB 20 1000 ns/op 0.5 busbw-GB/s",
		"BenchmarkAllReduce/size=1KiB 20 1000 ns/op 3 busbw-GB/s",
		"BenchmarkAllReduce/size=1KiB 20 1000 ns/op 0.7 busbw-GB/s",
		"BenchmarkAllReduce/size=1MiB 20 1000 ns/op 9 busbw-GB/s",
		"BenchmarkAllReduce/size=2MiB 20 1000 ns/op",
	}
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := ReadSamples(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		min  float64
		want []string
	}{{0.5, nil}, {0.71, []string{"AllReduce/size=1KiB"}}, {9.5, []string{"AllReduce/size=1KiB", "AllReduce/size=1MiB"}}} {
		below, rows := BusBWBelow(s, tc.min)
		var names []string
		for _, r := range below {
			names = append(names, r.Name)
		}
		if rows != 2 || strings.Join(names, ",") != strings.Join(tc.want, ",") {
			t.Errorf("min %v: %v of %d rows, want %v of 2", tc.min, below, rows, tc.want)
		}
		if len(below) > 0 && (below[0].Median != 0.7 || below[0].N != 3 || math.IsNaN(below[0].Median)) {
			t.Errorf("min %v: first %+v, want median 0.7 of 3", tc.min, below[0])
		}
	}
}
