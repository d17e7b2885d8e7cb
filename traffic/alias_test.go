package traffic

import (
	"math"
	"testing"
)

// The table's chance of each index, read off the table itself: kept with
// prob[i] from its own column, plus the rest of every column aliased to it.
func TestAliasTableChances(t *testing.T) {
	for _, w := range [][]float64{
		{1},
		{1, 1, 1, 1},
		{0, 3, 0, 1},
		{0.5, 0.5 / 7, 0.5 / 7, 0.5 / 7, 0.5 / 7, 0.5 / 7, 0.5 / 7, 0.5 / 7},
		weightsOf("zipf", 1000, 1.2, 0, 0),
		{1e-300, 1, 0, 1e300},
	} {
		tab := newAliasTable(w)
		n := len(w)
		got := make([]float64, n)
		for i := range tab.prob {
			got[i] += tab.prob[i] / float64(n)
			got[tab.alias[i]] += (1 - tab.prob[i]) / float64(n)
		}
		var sum float64
		for _, x := range w {
			sum += x
		}
		for i := range w {
			if want := w[i] / sum; math.Abs(got[i]-want) > 1e-12 || (w[i] == 0 && got[i] != 0) {
				t.Errorf("%d weights: index %d drawn with chance %g, want %g", n, i, got[i], want)
			}
		}
	}
}
