package dtype

import (
	"bytes"
	"fmt"
	"testing"
)

// naiveReduced is Reduced as a fold over every rank, written out apart
// from the code under test: Op over Value(rank, i), MulSum's inputs times
// 1 or 2 (odd ranks), Avg's sum divided as DivideBy divides.
func naiveReduced(p Pattern, i int) float64 {
	acc := p.Value(0, i)
	for r := 1; r < p.Ranks; r++ {
		v := p.Value(r, i)
		switch p.Op {
		case MulSum:
			acc += float64(1+r%2) * v
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
	if p.Op == Avg {
		if !p.DType.IsFloat() {
			return float64(int64(acc) / int64(p.Ranks))
		}
		return roundFloat(p.DType, acc/float64(p.Ranks))
	}
	return acc
}

// TestReducedMatchesNaive: the closed forms and the shared template give
// what a fold over every rank gives, for every type and reduction, on 1
// to 9 ranks, on counts around the types' limits (where the pattern
// switches from hashed values to ones and zeros) and on large worlds,
// where every 17th index of the period is folded.
func TestReducedMatchesNaive(t *testing.T) {
	ranks := []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 16, 17, 127, 128, 255, 256, 257, 2049, 16384}
	for _, dt := range All() {
		for _, op := range AllOps() {
			for _, n := range ranks {
				p := Pattern{dt, op, n}
				t.Run(fmt.Sprintf("%v/%v/ranks=%d", dt, op, n), func(t *testing.T) {
					step := 1
					if n > 300 {
						step = 17
					}
					tmpl := p.Template(-1)
					shared := p.Template(-1) // the second comes from the memo
					s := dt.Size()
					for j := 0; j < Period; j += step {
						w := naiveReduced(p, j)
						if got := p.Reduced(j); got != w {
							t.Fatalf("Reduced(%d) = %v, a fold over the ranks gives %v", j, got, w)
						}
						if got := p.Reduced(j + 5*Period); got != w {
							t.Fatalf("Reduced(%d) = %v, want %v (a period on)", j+5*Period, got, w)
						}
						one := make([]byte, s)
						Encode(dt, one, 0, w)
						for _, at := range []int{j, j + Period} {
							if !bytes.Equal(tmpl[at*s:at*s+s], one) || !bytes.Equal(shared[at*s:at*s+s], one) {
								t.Fatalf("Template(-1) element %d = %x then %x, the fold's %x", at, tmpl[at*s:at*s+s], shared[at*s:at*s+s], one)
							}
						}
					}
				})
			}
		}
	}
}

// TestTemplateOwned: Template(-1) hands each caller a copy of its own,
// though it is computed once.
func TestTemplateOwned(t *testing.T) {
	p := Pattern{FP32, Sum, 5}
	a := p.Template(-1)
	want := bytes.Clone(a)
	clear(a)
	if b := p.Template(-1); !bytes.Equal(b, want) {
		t.Fatal("a caller's change to Template(-1) reached the next caller")
	}
}

// TestPatternCountWrong: the method counts the wrong elements of a block
// against the values of rank src or the reduction, for blocks shorter
// than a period (compared element by element) and longer ones, at any
// phase.
func TestPatternCountWrong(t *testing.T) {
	tests := []struct {
		dt           DType
		op           ReduceOp
		src          int
		first, elems int
		corrupt      []int
	}{
		{FP32, Sum, 3, 0, 1, nil},
		{FP32, Sum, 3, 0, 1, []int{0}},
		{FP16, Max, 0, Period - 2, 5, []int{1, 4}},
		{Int8, Prod, 7, 12345, Period - 1, []int{0, Period - 2}},
		{FP64, MulSum, 2, 3, Period, []int{100}},
		{BF16, Avg, 1, 77, 3*Period + 5, []int{0, Period, 3 * Period}},
		{Int32, Min, -1, 9, 7, []int{6}},
		{Uint8, Sum, -1, 500, 2 * Period, []int{1, 2, 3}},
		{F8E4M3, Sum, 4, 1, 0, nil},
	}
	for _, tc := range tests {
		p := Pattern{tc.dt, tc.op, 9}
		t.Run(fmt.Sprintf("%v/%v/src=%d/first=%d/n=%d", tc.dt, tc.op, tc.src, tc.first, tc.elems), func(t *testing.T) {
			s := tc.dt.Size()
			buf := make([]byte, tc.elems*s)
			for k := range tc.elems {
				v := naiveReduced(p, tc.first+k)
				if tc.src >= 0 {
					v = p.Value(tc.src, tc.first+k)
				}
				Encode(tc.dt, buf, k, v)
			}
			for _, k := range tc.corrupt {
				buf[k*s] ^= 0x10
			}
			if got := p.CountWrong(buf, tc.src, tc.first); got != len(tc.corrupt) {
				t.Errorf("CountWrong = %d, want %d", got, len(tc.corrupt))
			}
		})
	}
}

// BenchmarkReducedTemplate is the expected reduction of a world's check
// as each rank asks for it: ns/rank stays level as the ranks grow (the
// template is computed once per pattern, in O(Period x Ranks) at worst,
// and each rank after takes a copy of one period), where a fold per rank
// made it grow with the ranks.
func BenchmarkReducedTemplate(b *testing.B) {
	for _, op := range []ReduceOp{Sum, Max, Prod} {
		for _, n := range []int{256, 1024, 4096, 16384} {
			b.Run(fmt.Sprintf("op=%v/ranks=%d", op, n), func(b *testing.B) {
				for b.Loop() {
					p := Pattern{FP32, op, n}
					reducedMemo.mu.Lock()
					delete(reducedMemo.m, p) // every world starts afresh
					reducedMemo.mu.Unlock()
					for range n {
						if len(p.Template(-1)) == 0 {
							b.Fatal("empty template")
						}
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/rank")
			})
		}
	}
}

// TestReducedOnce: the reduction's template is computed once per pattern
// and shared (every rank of a world asks for it), and the patterns with a
// closed form take it, so that a check costs time linear in ranks x
// elements rather than a fold over all ranks per rank.
func TestReducedOnce(t *testing.T) {
	p := Pattern{FP32, Max, 1000}
	if a, b := p.reducedTemplate(), p.reducedTemplate(); &a[0] != &b[0] {
		t.Error("the reduced template was computed twice")
	}
	closed := []Pattern{{FP32, Prod, 1000}, {Int8, Sum, 1000}, {FP16, Avg, 4096}, {BF16, MulSum, 300}, {F8E5M2, MulSum, 9}}
	for _, p := range closed {
		for j := range Period {
			if _, ok := p.closedForm(j); !ok {
				t.Fatalf("%+v: index %d has no closed form", p, j)
			}
		}
	}
}
