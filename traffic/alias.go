package traffic

import "math/rand/v2"

// aliasTable draws an index with a chance proportional to its weight in
// constant time, by Walker's alias method as Vose arranged it (M. D. Vose,
// "A linear algorithm for generating random numbers with a given
// distribution", IEEE Trans. Software Eng. 17(9), 1991): index i is kept
// with chance prob[i], else its alias is taken. An index of weight 0 is
// never drawn.
type aliasTable struct {
	prob  []float64
	alias []int32
}

// newAliasTable builds the table of weights, at least one of them above 0.
func newAliasTable(weights []float64) aliasTable {
	n := len(weights)
	t := aliasTable{prob: make([]float64, n), alias: make([]int32, n)}
	var sum float64
	heaviest := 0
	for i, w := range weights {
		sum += w
		if w > weights[heaviest] {
			heaviest = i
		}
	}
	scaled := make([]float64, n)
	var small, large []int
	for i, w := range weights {
		scaled[i] = w * float64(n) / sum
		if scaled[i] < 1 {
			small = append(small, i)
		} else {
			large = append(large, i)
		}
	}
	for len(small) > 0 && len(large) > 0 {
		s, l := small[len(small)-1], large[len(large)-1]
		small = small[:len(small)-1]
		t.prob[s], t.alias[s] = scaled[s], int32(l)
		scaled[l] -= 1 - scaled[s]
		if scaled[l] < 1 {
			large, small = large[:len(large)-1], append(small, l)
		}
	}
	// What is left is 1 up to rounding; an index of weight 0 left over
	// by rounding is sent to the heaviest rather than kept.
	for _, rest := range [][]int{small, large} {
		for _, i := range rest {
			t.prob[i], t.alias[i] = 1, int32(i)
			if weights[i] == 0 {
				t.prob[i], t.alias[i] = 0, int32(heaviest)
			}
		}
	}
	return t
}

// draw returns an index.
func (t aliasTable) draw(rng *rand.Rand) int {
	i := rng.IntN(len(t.prob))
	if rng.Float64() < t.prob[i] {
		return i
	}
	return int(t.alias[i])
}
