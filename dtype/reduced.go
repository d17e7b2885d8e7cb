package dtype

import (
	"fmt"
	"math/bits"
	"sync"
)

// The expected reduction of a Pattern over its ranks. A collective's
// check compares every rank's output with it, so on a world of n ranks it
// is wanted n times: computed afresh each time, as a fold over all ranks
// of every element of a period, it cost n x Period x n, quadratic in the
// ranks (28 CPU-seconds to check a 1 KiB allreduce at 2048 ranks). So:
//
//   - where the pattern puts a known number of ones or twos on each index
//     (Prod; Sum, Avg and MulSum when L < Ranks) the reduction has a
//     closed form, O(1) per element;
//   - elsewhere (hashed values: Sum, Avg and MulSum when L >= Ranks, Max,
//     Min) it is a fold over the ranks, O(Ranks) per element, and the
//     encoded period is computed once per Pattern in the process
//     (reducedTemplate) and shared: O(Ranks x Period) per pattern, not
//     per rank.

// Reduced returns the expected result element i: Op over ranks 0..Ranks-1
// of Value(rank, i), computed in float64 without the kernels. For MulSum
// it is the sum of PreMulScalar(rank) × Value(rank, i). For Avg it is
// the sum divided by Ranks as DivideBy defines it: truncated for integers,
// rounded to nearest-even in DType for floats (the value Encode would
// store). The result is exact in DType. It costs O(1) where the pattern's
// reduction has a closed form and O(Ranks) elsewhere (see above).
// Reduced panics if Ranks < 1.
func (p Pattern) Reduced(i int) float64 {
	if p.Ranks < 1 {
		panic(fmt.Sprintf("dtype.Pattern: %d ranks", p.Ranks))
	}
	j := phase(i)
	acc, ok := p.closedForm(j)
	if !ok {
		acc = p.fold(j)
	}
	if p.Op == Avg {
		if !p.DType.IsFloat() {
			return float64(int64(acc) / int64(p.Ranks))
		}
		return roundFloat(p.DType, acc/float64(p.Ranks))
	}
	return acc
}

// fold returns Op over every rank of Value(rank, j) (MulSum's inputs
// pre-multiplied, Avg's sum not yet divided), one rank after another.
func (p Pattern) fold(j int) float64 {
	acc := p.Value(0, j)
	for r := 1; r < p.Ranks; r++ {
		v := p.Value(r, j)
		switch p.Op {
		case MulSum:
			acc += float64(PreMulScalar(r)) * v
		case Prod:
			acc *= v
		case Max:
			acc = max(acc, v)
		case Min:
			acc = min(acc, v)
		default:
			acc += v
		}
	}
	return acc
}

// closedForm returns what fold returns for index j (0 <= j < Period) in
// O(1), and true, where the pattern has a closed form; else false. Both
// cases are a rank holding a non-zero value exactly when
// (a*j + rank) mod Ranks < c for some c <= Ranks (see Value): as rank runs
// over 0..Ranks-1, (a*j + rank) mod Ranks runs over every residue once, so
// exactly c ranks hold it, the ranks of the cyclic interval that starts at
// (-a*j) mod Ranks.
func (p Pattern) closedForm(j int) (float64, bool) {
	lim := exactLimit(p.DType)
	n := int64(p.Ranks)
	switch p.Op {
	case Prod:
		// c ranks hold a 2, the rest a 1.
		twos := int64(bits.Len64(uint64(lim)) - 1)
		c := int64(j) % (min(twos, n) + 1)
		return float64(int64(1) << c), true
	case Max, Min:
		return 0, false
	}
	w := n
	if p.Op == MulSum {
		w = mulSumWeight(p.Ranks)
	}
	if lim/w >= 1 {
		return 0, false // hashed values
	}
	// c ranks hold a 1, the rest a 0; c < Ranks since L < w.
	c := lim - int64(j)%(lim/2+1)
	if p.Op != MulSum {
		return float64(c), true
	}
	c /= 2
	// The odd ranks among them pre-multiply it by 2.
	s := (n - int64(j)%n) % n
	odd := oddIn(s, min(s+c, n))
	if s+c > n {
		odd += oddIn(0, s+c-n)
	}
	return float64(c + odd), true
}

// oddIn returns how many odd integers lie in [a, b), for 0 <= a <= b.
func oddIn(a, b int64) int64 { return b/2 - a/2 }

// reducedMemo holds the encoded reduced templates of the patterns checked
// lately, each computed once however many ranks ask for it.
var reducedMemo struct {
	mu sync.Mutex // guards m
	m  map[Pattern]*memoEntry
}

// memoEntry is one pattern's reduced template, made by the first rank to
// ask for it while the others wait.
type memoEntry struct {
	once sync.Once
	t    []byte
}

// reducedMemoCap bounds reducedMemo: a sweep checks one pattern per data
// type, reduction and group size at a time, and an entry is at most two
// periods of 8-byte elements (8 KiB). Past it the memo starts afresh.
const reducedMemoCap = 256

// reducedTemplate returns Template(-1), shared: the caller must not
// modify it. The first call for a Pattern computes it, in O(Period) where
// the reduction has a closed form and O(Period x Ranks) elsewhere; later
// calls return it in O(1).
func (p Pattern) reducedTemplate() []byte {
	if p.Ranks < 1 || p.DType.Size() == 0 {
		panic(fmt.Sprintf("dtype.Pattern: %d ranks of %v", p.Ranks, p.DType))
	}
	reducedMemo.mu.Lock()
	e, ok := reducedMemo.m[p]
	if !ok {
		if len(reducedMemo.m) >= reducedMemoCap || reducedMemo.m == nil {
			reducedMemo.m = map[Pattern]*memoEntry{}
		}
		e = &memoEntry{}
		reducedMemo.m[p] = e
	}
	reducedMemo.mu.Unlock()
	e.once.Do(func() {
		s := p.DType.Size()
		t := make([]byte, 2*Period*s)
		for k := range Period {
			Encode(p.DType, t, k, p.Reduced(k))
		}
		copy(t[Period*s:], t[:Period*s])
		e.t = t
	})
	return e.t
}
