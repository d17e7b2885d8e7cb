package traffic

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"
)

func gen(t testing.TB, spec string, ranks int) *Generator {
	t.Helper()
	sp, err := ParseSpec(spec)
	if err != nil {
		t.Fatal(err)
	}
	g, err := NewGenerator(sp, ranks)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// weightsOf is the chance of each expert, written from the definitions in
// the package doc rather than from expertWeights.
func weightsOf(kind string, e int, s float64, hot int, share float64) []float64 {
	w := make([]float64, e)
	var sum float64
	for i := range w {
		switch kind {
		case "uniform":
			w[i] = 1
		case "zipf":
			w[i] = math.Pow(float64(i+1), -s)
		case "hot":
			if i < hot {
				w[i] = share / float64(hot)
			} else {
				w[i] = (1 - share) / float64(e-hot)
			}
		}
		sum += w[i]
	}
	for i := range w {
		w[i] /= sum
	}
	return w
}

// pChi2 is the chance that counts drawn from expected give a chi-square
// statistic at least as large as obs's.
func pChi2(obs, expected []float64) float64 {
	return distuv.ChiSquared{K: float64(len(obs) - 1)}.Survival(stat.ChiSquare(obs, expected))
}

// draws counts the experts topK picks over n tokens with a fixed seed, so
// the test gives the same answer on every run.
func draws(g *Generator, n int) []float64 {
	rng := rand.New(rand.NewPCG(42, 7))
	counts := make([]float64, len(g.weights))
	chosen := make([]int, 0, g.spec.TopK)
	var rest *sumTree
	for i := 0; i < n; i++ {
		chosen = g.topK(rng, chosen[:0], &rest)
		for _, e := range chosen {
			counts[e]++
		}
	}
	return counts
}

// A p-value below this fails; with the seeds fixed the tests are
// deterministic, and a correct sampler's p-values sit far above it.
const alpha = 1e-4

func TestTopOneDistribution(t *testing.T) {
	const n = 200000
	for _, tc := range []struct {
		spec  string
		kind  string
		e     int
		s     float64
		hot   int
		share float64
	}{
		{"uniform:experts=16", "uniform", 16, 0, 0, 0},
		{"zipf:s=1,experts=16", "zipf", 16, 1, 0, 0},
		{"zipf:s=1.5,experts=64", "zipf", 64, 1.5, 0, 0},
		{"zipf:s=0,experts=8", "uniform", 8, 0, 0, 0},
		{"hot:hot=1,share=0.5,experts=8", "hot", 8, 0, 1, 0.5},
		{"hot:hot=3,share=0.9,experts=20", "hot", 20, 0, 3, 0.9},
	} {
		t.Run(tc.spec, func(t *testing.T) {
			g := gen(t, tc.spec, 4)
			obs := draws(g, n)
			want := weightsOf(tc.kind, tc.e, tc.s, tc.hot, tc.share)
			exp := make([]float64, len(want))
			for i, p := range want {
				exp[i] = p * n
			}
			t.Logf("p = %.3g", pChi2(obs, exp))
			if p := pChi2(obs, exp); p < alpha {
				t.Errorf("chi-square p = %.3g: counts %v, expected %v", p, obs, exp)
			}
			// The test can fail: the same counts against a neighbouring
			// distribution are refused.
			other := weightsOf("zipf", tc.e, tc.s+0.1, 0, 0)
			if tc.kind == "zipf" {
				other = weightsOf("zipf", tc.e, tc.s*1.1, 0, 0)
			}
			for i, p := range other {
				exp[i] = p * n
			}
			if p := pChi2(obs, exp); p >= alpha {
				t.Errorf("counts of %s pass as another distribution (p = %.3g)", tc.spec, p)
			}
		})
	}
}

// With top-2 drawn without replacement, expert e is among a token's two
// with chance p_e + sum over i != e of p_i p_e / (1 - p_i).
func TestTopTwoDistribution(t *testing.T) {
	const n = 100000
	for _, tc := range []struct {
		spec string
		w    []float64
	}{
		{"zipf:s=1,experts=6,topk=2", weightsOf("zipf", 6, 1, 0, 0)},
		{"hot:hot=1,share=0.8,experts=5,topk=2", weightsOf("hot", 5, 0, 1, 0.8)},
		// The second draw falls on the hot expert 16 times in a row with
		// chance 0.999^16: almost every second expert comes from the tree.
		{"hot:hot=1,share=0.999,experts=5,topk=2", weightsOf("hot", 5, 0, 1, 0.999)},
	} {
		t.Run(tc.spec, func(t *testing.T) {
			obs := draws(gen(t, tc.spec, 2), n)
			exp := make([]float64, len(tc.w))
			for e, pe := range tc.w {
				in := pe
				for i, pi := range tc.w {
					if i != e {
						in += pi * pe / (1 - pi)
					}
				}
				exp[e] = in * n
			}
			t.Logf("p = %.3g", pChi2(obs, exp))
			if p := pChi2(obs, exp); p < alpha {
				t.Errorf("chi-square p = %.3g: counts %v, expected %v", p, obs, exp)
			}
			// Drawn with replacement instead, the counts would be 2 n p_e.
			for e, pe := range tc.w {
				exp[e] = 2 * n * pe
			}
			if p := pChi2(obs, exp); p >= alpha {
				t.Errorf("top-2 counts pass as draws with replacement (p = %.3g)", p)
			}
		})
	}
}

func TestTopKDistinct(t *testing.T) {
	for _, spec := range []string{
		"uniform:experts=8,topk=8",            // every expert, every token
		"hot:hot=8,share=1,experts=64,topk=8", // only the hot can be chosen: the walk runs
		"zipf:s=3,experts=32,topk=6",
		"hot:hot=2,share=0,experts=10,topk=8", // never a hot one
	} {
		t.Run(spec, func(t *testing.T) {
			g := gen(t, spec, 4)
			rng := rand.New(rand.NewPCG(3, 4))
			var chosen []int
			var rest *sumTree
			for i := 0; i < 20000; i++ {
				chosen = g.topK(rng, chosen[:0], &rest)
				if len(chosen) != g.spec.TopK {
					t.Fatalf("%d experts, want %d", len(chosen), g.spec.TopK)
				}
				seen := map[int]bool{}
				for _, e := range chosen {
					if seen[e] || g.weights[e] == 0 {
						t.Fatalf("token %d: experts %v: a repeat or an expert of no chance", i, chosen)
					}
					seen[e] = true
				}
			}
		})
	}
}

// With s=100 the third expert weighs 3^-100 of the first, 1e-48: the
// rest of a token's choices must still come in the order of the weights,
// which a sum kept by subtracting the chosen would lose in rounding.
func TestTopKTinyWeights(t *testing.T) {
	g := gen(t, "zipf:s=100,experts=1024,topk=4", 4)
	rng := rand.New(rand.NewPCG(5, 6))
	var rest *sumTree
	for i := 0; i < 1000; i++ {
		chosen := g.topK(rng, nil, &rest)
		if chosen[0] != 0 || chosen[1] != 1 || chosen[2] != 2 || chosen[3] != 3 {
			t.Fatalf("token %d: experts %v, want 0 1 2 3 in order", i, chosen)
		}
	}
	if rest == nil {
		t.Error("the sum tree was never used")
	}
}

func TestPlacement(t *testing.T) {
	for _, tc := range []struct {
		place          Place
		experts, ranks int
		want           []int
	}{
		{PlaceBlock, 8, 4, []int{0, 0, 1, 1, 2, 2, 3, 3}},
		{PlaceBlock, 4, 4, []int{0, 1, 2, 3}},
		{PlaceBlock, 3, 2, []int{0, 0, 1}},
		{PlaceBlock, 2, 4, []int{0, 2}},
		{PlaceCyclic, 8, 3, []int{0, 1, 2, 0, 1, 2, 0, 1}},
	} {
		for e, want := range tc.want {
			if got := placeExpert(tc.place, e, tc.experts, tc.ranks); got != want {
				t.Errorf("%s, %d experts on %d ranks: expert %d on rank %d, want %d", tc.place, tc.experts, tc.ranks, e, got, want)
			}
		}
	}
}

func TestRoutingMatrix(t *testing.T) {
	const spec = "zipf:s=1.2,tokens=300,hidden=64,experts=16,topk=3,seed=5"
	g := gen(t, spec, 8)
	m0, err := g.Matrix(0, 0)
	if err != nil {
		t.Fatal(err)
	}
	for src := 0; src < 8; src++ {
		if got := m0.Sent(src); got != 300*3*64 {
			t.Errorf("rank %d sends %d, want tokens x topk x hidden = %d", src, got, 300*3*64)
		}
	}
	// Rows drawn alone, in another order, by another generator: the same.
	row := make([]int64, 8)
	g2 := gen(t, spec, 8)
	for src := 7; src >= 0; src-- {
		if err := g2.Row(0, 0, src, row); err != nil {
			t.Fatal(err)
		}
		for dst, b := range row {
			if b != m0.At(src, dst) {
				t.Fatalf("row %d drawn alone differs at %d", src, dst)
			}
		}
	}
	m1, _ := g.Matrix(1, 0)
	if m1.Equal(m0) {
		t.Error("draw=iter: iterations 0 and 1 drew the same matrix")
	}
	other, _ := gen(t, strings.Replace(spec, "seed=5", "seed=6", 1), 8).Matrix(0, 0)
	if other.Equal(m0) {
		t.Error("seeds 5 and 6 drew the same matrix")
	}
	fixed := gen(t, spec+",draw=fixed", 8)
	f0, _ := fixed.Matrix(0, 0)
	f9, _ := fixed.Matrix(9, 0)
	if !f0.Equal(f9) || !fixed.Fixed() || g.Fixed() {
		t.Error("draw=fixed: iterations 0 and 9 differ, or Fixed is wrong")
	}
}

func TestHotExpertSummary(t *testing.T) {
	// One hot expert of 8 takes half the tokens: its rank, 0, receives
	// half of everything, 4 times the mean.
	g := gen(t, "hot:hot=1,share=0.5,tokens=20000,hidden=16,experts=8,topk=1,seed=9", 8)
	s, err := g.Summary(0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if s.HotRank != 0 || math.Abs(s.Imbalance-4) > 0.1 || s.SentMin != 20000*16 || s.SentMax != 20000*16 {
		t.Errorf("summary %+v: want rank 0 hot, imbalance near 4, every rank sending %d", s, 20000*16)
	}
	m, _ := g.Matrix(0, 0)
	if Summarize(m) != s {
		t.Errorf("Summary row by row %+v, Summarize %+v", s, Summarize(m))
	}
	// Cyclic placement on 4 ranks: experts 0 and 4 on rank 0, which then
	// receives half plus one of the other seven's shares.
	g = gen(t, "hot:hot=1,share=0.5,tokens=20000,hidden=16,experts=8,place=cyclic,seed=9", 4)
	if s, _ = g.Summary(0, 0); s.HotRank != 0 || math.Abs(s.Imbalance-4*(0.5+0.5/7)) > 0.1 {
		t.Errorf("cyclic: %+v", s)
	}
}

func TestSizedRouting(t *testing.T) {
	g := gen(t, "uniform:tokens=0,hidden=1K,topk=2", 4)
	if !g.Sized() {
		t.Fatal("tokens=0 is not sized")
	}
	m, err := g.Matrix(0, 1<<20) // 1 MiB a rank: 512 tokens x 2 x 1 KiB
	if err != nil {
		t.Fatal(err)
	}
	if got := m.Sent(3); got != 1<<20 {
		t.Errorf("rank 3 sends %d, want 1 MiB", got)
	}
	if err := g.Check(MaxRankBytes); err == nil || !strings.Contains(err.Error(), "draws a rank") {
		t.Errorf("Check of the largest size: %v", err)
	}
	if err := g.Check(-1); err == nil {
		t.Error("Check(-1) passed")
	}
}

func TestSpread(t *testing.T) {
	for _, tc := range []struct {
		spec  string
		ranks int
		size  int64
		row0  []int64
	}{
		// spread=0: total/n each. spread=1 on 4 ranks of 384 bytes: the
		// distances 0..3 over their sum 6 give 0, 64, 128, 192.
		{"spread:spread=0", 4, 400, []int64{96, 96, 96, 96}},
		{"spread", 4, 384, []int64{0, 64, 128, 192}},
		{"spread:spread=0.5", 4, 384, []int64{48, 80, 112, 144}},
		{"spread:bytes=384", 4, 99999, []int64{0, 64, 128, 192}},
		{"spread", 1, 100, []int64{96}},
	} {
		t.Run(tc.spec, func(t *testing.T) {
			g := gen(t, tc.spec, tc.ranks)
			m, err := g.Matrix(0, tc.size)
			if err != nil {
				t.Fatal(err)
			}
			for dst, want := range tc.row0 {
				if got := m.At(0, dst); got != want {
					t.Errorf("rank 0 to %d: %d, want %d", dst, got, want)
				}
				// The pattern turns with the sender.
				if got := m.At(1%tc.ranks, (dst+1)%tc.ranks); got != want {
					t.Errorf("rank 1 to %d: %d, want %d", (dst+1)%tc.ranks, got, want)
				}
			}
		})
	}
}

func BenchmarkMatrix1024(b *testing.B) {
	for _, spec := range []string{
		"zipf:s=1.2,tokens=512,hidden=14336,experts=1024,topk=8",
		"uniform:tokens=512,hidden=14336,experts=1024,topk=8",
		"hot:hot=1,share=0.5,tokens=512,hidden=14336,experts=1024,topk=8",
		"spread",
	} {
		b.Run(strings.SplitN(spec, ":", 2)[0], func(b *testing.B) {
			g := gen(b, spec, 1024)
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				if _, err := g.Matrix(i, 1<<30); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// Rows drawn at once by several goroutines (run with -race) are the rows
// of the matrix drawn alone.
func TestRowsConcurrently(t *testing.T) {
	g := gen(t, "zipf:s=1.5,tokens=200,hidden=32,experts=32,topk=4,seed=11", 16)
	want, err := g.Matrix(3, 0)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := NewMatrix(16)
	done := make(chan error, 16)
	for src := 0; src < 16; src++ {
		go func() { done <- g.Row(3, 0, src, got.Row(src)) }()
	}
	for range 16 {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	if !got.Equal(want) {
		t.Error("rows drawn concurrently differ from the matrix")
	}
	if err := g.Row(0, 0, 16, make([]int64, 16)); err == nil {
		t.Error("Row of rank 16 of 16 passed")
	}
	if err := g.Row(0, 0, 0, make([]int64, 15)); err == nil {
		t.Error("Row into 15 cells of 16 ranks passed")
	}
}
