package traffic

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// Generator gives the matrix of each iteration of one spec on one number
// of ranks. Every answer is a function of the spec, the iteration and the
// size alone, so processes that build the same generator agree on every
// matrix without talking. A Generator is safe for concurrent use.
type Generator struct {
	spec  Spec
	ranks int
	file  *Matrix // File's matrix, cut to ranks
	// fileDim is the rows of File's file, for nccl-tests' summary.
	fileDim int
	// Routing: the experts' weights, their alias table for the draw, and
	// the rank of each expert.
	weights []float64
	alias   aliasTable
	home    []int
}

// Validate checks sp against a world of ranks: the limits that depend on
// it (experts, top-k against the experts that can be chosen, the hot
// experts against all), without reading a file.
func (sp Spec) Validate(ranks int) error {
	if ranks < 1 || ranks > MaxRanks {
		return fmt.Errorf("traffic %s: %d ranks: want 1 to %d", sp, ranks, MaxRanks)
	}
	switch sp.Kind {
	case File, Spread:
		return nil
	case Uniform, Zipf, Hot:
	default:
		return fmt.Errorf("traffic: unknown kind %q", sp.Kind)
	}
	e := sp.experts(ranks)
	if e > MaxExperts {
		return fmt.Errorf("traffic %s: %d experts, more than the limit of %d", sp, e, MaxExperts)
	}
	if sp.Kind == Hot && sp.HotExperts >= e {
		return fmt.Errorf("traffic %s: %d hot experts of %d: want fewer hot experts than experts", sp, sp.HotExperts, e)
	}
	if c := choosable(sp, e); sp.TopK > c {
		return fmt.Errorf("traffic %s: top-%d of %d experts that can be chosen: want topk at most %d", sp, sp.TopK, c, c)
	}
	if sp.Tokens*int64(sp.TopK) > MaxRowDraws {
		return fmt.Errorf("traffic %s: %d tokens x top-%d, more than the limit of %d draws a rank", sp, sp.Tokens, sp.TopK, MaxRowDraws)
	}
	if b := sp.Tokens * int64(sp.TopK) * sp.Hidden; b > MaxRankBytes {
		return fmt.Errorf("traffic %s: each rank sends %d bytes, more than the limit of %d", sp, b, int64(MaxRankBytes))
	}
	return nil
}

func (sp Spec) experts(ranks int) int {
	if sp.Experts == 0 {
		return ranks
	}
	return sp.Experts
}

// choosable is the number of experts with a chance above zero: with
// share=1 only the hot ones, with a large s only those whose weight does
// not underflow.
func choosable(sp Spec, e int) int {
	c := 0
	for _, w := range expertWeights(sp, e) {
		if w > 0 {
			c++
		}
	}
	return c
}

// NewGenerator validates sp against ranks and prepares its draws; a File
// spec reads its file here, once, and needs at least ranks rows.
func NewGenerator(sp Spec, ranks int) (*Generator, error) {
	if err := sp.Validate(ranks); err != nil {
		return nil, err
	}
	g := &Generator{spec: sp, ranks: ranks}
	switch sp.Kind {
	case File:
		m, err := ReadFile(sp.Path, sp.Scale)
		if err != nil {
			return nil, err
		}
		if ranks > m.n {
			return nil, fmt.Errorf("traffic matrix %s: %d rows, fewer than the %d ranks", sp.Path, m.n, ranks)
		}
		g.fileDim = m.n
		if g.file, err = m.Sub(ranks); err != nil {
			return nil, err
		}
	case Uniform, Zipf, Hot:
		g.weights = expertWeights(sp, sp.experts(ranks))
		g.alias = newAliasTable(g.weights)
		g.home = make([]int, len(g.weights))
		for e := range g.home {
			g.home[e] = placeExpert(sp.Place, e, len(g.weights), ranks)
		}
	}
	return g, nil
}

// expertWeights returns each expert's chance, up to a common factor.
func expertWeights(sp Spec, e int) []float64 {
	w := make([]float64, e)
	for i := range w {
		switch sp.Kind {
		case Uniform:
			w[i] = 1
		case Zipf:
			w[i] = 1 / math.Pow(float64(i+1), sp.S)
		case Hot:
			if i < sp.HotExperts {
				w[i] = sp.Share / float64(sp.HotExperts)
			} else {
				w[i] = (1 - sp.Share) / float64(e-sp.HotExperts)
			}
		}
	}
	return w
}

// placeExpert returns the rank expert e of experts lives on.
func placeExpert(p Place, e, experts, ranks int) int {
	if p == PlaceCyclic {
		return e % ranks
	}
	return int(int64(e) * int64(ranks) / int64(experts))
}

// Spec returns the generator's spec.
func (g *Generator) Spec() Spec { return g.spec }

// Ranks returns the number of ranks.
func (g *Generator) Ranks() int { return g.ranks }

// Fixed reports whether every iteration has the same matrix for a given
// size: a file, nccl-tests' spread pattern, or a routing drawn once.
func (g *Generator) Fixed() bool {
	return g.spec.Kind == File || g.spec.Kind == Spread || g.spec.Draw == DrawFixed
}

// Sized reports whether the matrix depends on the row's size: the spread
// pattern without bytes=, a routing without tokens=. A matrix file's sizes
// are its own, whatever the row's size (nccl-tests then wants -b = -e).
func (g *Generator) Sized() bool {
	switch g.spec.Kind {
	case File:
		return false
	case Spread:
		return g.spec.Bytes == 0
	}
	return g.spec.Tokens == 0
}

// Check refuses a row's size the spec cannot draw for: over MaxRankBytes,
// or, for a routing that takes its tokens from the size, more draws than
// MaxRowDraws. A caller checks its largest size before any rank starts.
func (g *Generator) Check(size int64) error {
	if size < 0 || size > MaxRankBytes {
		return fmt.Errorf("traffic %s: size %d: want 0 to %d bytes", g.spec, size, int64(MaxRankBytes))
	}
	if g.Sized() && g.spec.Kind != Spread {
		if d := g.tokens(size) * int64(g.spec.TopK); d > MaxRowDraws {
			return fmt.Errorf("traffic %s: size %d is %d tokens x top-%d, more than the limit of %d draws a rank: give larger hidden= or tokens=",
				g.spec, size, g.tokens(size), g.spec.TopK, MaxRowDraws)
		}
	}
	return nil
}

// tokens returns the tokens each rank routes at size.
func (g *Generator) tokens(size int64) int64 {
	if g.spec.Tokens > 0 || !g.Sized() {
		return g.spec.Tokens
	}
	return size / (g.spec.Hidden * int64(g.spec.TopK))
}

// Row fills row (of Ranks() cells) with the bytes src sends to each rank
// in iteration iter (from 0) at the row's size. It takes memory linear in
// the ranks, so it serves worlds whose whole matrix is past MaxCells.
func (g *Generator) Row(iter int, size int64, src int, row []int64) error {
	if len(row) != g.ranks || src < 0 || src >= g.ranks {
		return fmt.Errorf("traffic: Row(src %d) into %d cells of %d ranks", src, len(row), g.ranks)
	}
	if err := g.Check(size); err != nil {
		return err
	}
	clear(row)
	switch g.spec.Kind {
	case File:
		copy(row, g.file.Row(src))
	case Spread:
		total := g.spreadTotal(size)
		for dst := range row {
			row[dst] = spreadBytes(src, dst, g.ranks, total, g.spec.Spread)
		}
	default:
		g.route(g.rng(iter, src), g.tokens(size), row)
	}
	return nil
}

// Matrix returns the whole matrix of iteration iter at the row's size; it
// refuses a world past MaxCells (use Row).
func (g *Generator) Matrix(iter int, size int64) (*Matrix, error) {
	m, err := NewMatrix(g.ranks)
	if err != nil {
		return nil, err
	}
	for src := 0; src < g.ranks; src++ {
		if err := g.Row(iter, size, src, m.Row(src)); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// Summary returns the figures of iteration iter's matrix, drawn row by
// row in memory linear in the ranks, for a world of any size.
func (g *Generator) Summary(iter int, size int64) (Summary, error) {
	var acc accumulator
	acc.init(g.ranks)
	row := make([]int64, g.ranks)
	for src := 0; src < g.ranks; src++ {
		if err := g.Row(iter, size, src, row); err != nil {
			return Summary{}, err
		}
		acc.add(src, row)
	}
	return acc.summary(), nil
}

// spreadTotal is what each rank sends in the spread pattern at size:
// nccl-tests takes the per-peer count of the size, aligned down to 16
// bytes, times the ranks.
func (g *Generator) spreadTotal(size int64) int64 {
	total := g.spec.Bytes
	if total == 0 {
		total = size
	}
	return (total / int64(g.ranks)) &^ (Align - 1) * int64(g.ranks)
}

// spreadBytes is nccl-tests 2.19's AlltoAllvGetPeerBytesDistanceWeighted:
// a blend of total/n and a share of total growing with the distance from
// src to dst in rank ids, aligned down to 16 bytes.
func spreadBytes(src, dst, n int, total int64, spread float64) int64 {
	if n == 1 {
		return total &^ (Align - 1)
	}
	distance := (dst - src + n) % n
	sumDistances := int64(n) * int64(n-1) / 2
	uniform := float64(total) / float64(n)
	dist := float64(distance) * float64(total) / float64(sumDistances)
	return int64((1-spread)*uniform+spread*dist) &^ (Align - 1)
}

// rng returns the random stream of src's row in iteration iter: its own
// for each (seed, iteration, sender), so rows are drawn in any order, by
// any process.
func (g *Generator) rng(iter, src int) *rand.Rand {
	if g.spec.Draw == DrawFixed {
		iter = 0
	}
	a := splitmix(g.spec.Seed)
	b := splitmix(a ^ splitmix(uint64(iter)+1) ^ splitmix(uint64(src)+1<<40))
	return rand.New(rand.NewPCG(a, b))
}

// splitmix is SplitMix64's finalizer: a bijection that scatters seeds
// that differ in a bit into unrelated states.
func splitmix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}

// route draws the experts of tokens tokens and adds Hidden bytes to row
// for each (token, expert) pair at the expert's rank.
func (g *Generator) route(rng *rand.Rand, tokens int64, row []int64) {
	chosen := make([]int, 0, g.spec.TopK)
	var rest *sumTree // built at the first draw that needs it
	for t := int64(0); t < tokens; t++ {
		chosen = g.topK(rng, chosen[:0], &rest)
		for _, e := range chosen {
			row[g.home[e]] += g.spec.Hidden
		}
	}
}

// maxRejects is how many draws topK tries before it draws from the
// experts not yet chosen directly: a few when no expert dominates, and a
// bounded cost when one does (hot share=0.99).
const maxRejects = 16

// topK appends TopK distinct experts to chosen, drawn one after another,
// each with a chance proportional to its weight among those not yet
// chosen: a router's top-k of noisy scores. A draw from all experts that
// falls on a chosen one is drawn again, which gives exactly that chance;
// after maxRejects such draws it draws from a sum tree of the experts not
// chosen, built in *rest the first time.
func (g *Generator) topK(rng *rand.Rand, chosen []int, rest **sumTree) []int {
	for len(chosen) < g.spec.TopK {
		e := -1
		for try := 0; try < maxRejects && e < 0; try++ {
			if c := g.alias.draw(rng); !has(chosen, c) {
				e = c
			}
		}
		if e < 0 {
			if *rest == nil {
				*rest = newSumTree(g.weights)
			}
			e = (*rest).drawExcept(rng, chosen, g.weights)
		}
		chosen = append(chosen, e)
	}
	return chosen
}

// sumTree is a complete binary tree whose leaves are the experts' weights
// and whose nodes are the sums of their children, each recomputed from
// the children (never by subtracting), so that once the heavy experts are
// taken out the sums of the light ones keep their precision: with zipf
// s=100 the rest weighs 1e-30 of the whole.
type sumTree struct {
	leaves int // a power of two
	node   []float64
}

func newSumTree(weights []float64) *sumTree {
	m := 1
	for m < len(weights) {
		m *= 2
	}
	t := &sumTree{leaves: m, node: make([]float64, 2*m)}
	copy(t.node[m:], weights)
	for k := m - 1; k >= 1; k-- {
		t.node[k] = t.node[2*k] + t.node[2*k+1]
	}
	return t
}

func (t *sumTree) set(i int, w float64) {
	k := t.leaves + i
	t.node[k] = w
	for k /= 2; k >= 1; k /= 2 {
		t.node[k] = t.node[2*k] + t.node[2*k+1]
	}
}

// drawExcept draws an expert not in chosen, with a chance proportional to
// its weight among those, and leaves the tree as it found it.
func (t *sumTree) drawExcept(rng *rand.Rand, chosen []int, weights []float64) int {
	for _, c := range chosen {
		t.set(c, 0)
	}
	x := rng.Float64() * t.node[1]
	k := 1
	for k < t.leaves {
		l, r := t.node[2*k], t.node[2*k+1]
		if r == 0 || (x < l && l > 0) {
			k = 2 * k
		} else {
			x -= l
			k = 2*k + 1
		}
	}
	for _, c := range chosen {
		t.set(c, weights[c])
	}
	return k - t.leaves
}

func has(list []int, x int) bool {
	for _, y := range list {
		if y == x {
			return true
		}
	}
	return false
}
