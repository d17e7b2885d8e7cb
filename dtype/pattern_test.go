package dtype

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

var patternRanks = []int{1, 2, 3, 7, 8, 64, 300}

// limits restates L for every type, independently of exactLimit.
var limits = map[DType]float64{
	Int8: 127, Uint8: 255, Int16: 32767, Uint16: 65535,
	Int32: 1 << 24, Uint32: 1 << 24, Int64: 1 << 24, Uint64: 1 << 24,
	FP16: 2048, BF16: 256, FP32: 1 << 24, FP64: 1 << 53,
	F8E4M3: 16, F8E5M2: 8,
}

// TestPatternValueRules checks the value rules over one period. Values are
// non-negative integers, so if the sum (product) over all ranks is at most
// L, so is every partial sum (product) in any order, and each is exact.
func TestPatternValueRules(t *testing.T) {
	for _, dt := range All() {
		lim := limits[dt]
		for _, op := range AllOps() {
			for _, ranks := range append(patternRanks, 4096) {
				if ranks == 4096 && (lim > 1<<16 || op == Max || op == Min) {
					continue // nothing that 300 ranks did not cover, and slow
				}
				p := Pattern{dt, op, ranks}
				t.Run(fmt.Sprintf("%v/%v/ranks=%d", dt, op, ranks), func(t *testing.T) {
					reduced := map[float64]bool{}
					rankVaries := ranks == 1
					for j := range Period {
						sum, prod, twos, v0, weighted := 0.0, 1.0, 0, 0.0, 0.0
						for r := range ranks {
							v := p.Value(r, j)
							weighted += float64(1+r%2) * v // odd ranks pre-multiply by 2
							if v != math.Trunc(v) || v < 0 || v > lim {
								t.Fatalf("Value(%d, %d) = %v, not an integer in [0, %v]", r, j, v, lim)
							}
							if r < 8 && p.Value(r, j+3*Period) != v {
								t.Fatalf("Value(%d, %d) = %v but Value(%d, %d) differs", r, j, v, r, j+3*Period)
							}
							if r == 0 {
								v0 = v
							} else if v != v0 {
								rankVaries = true
							}
							sum, prod = sum+v, prod*v
							if v == 2 {
								twos++
							}
						}
						switch op {
						case Sum, Avg:
							if sum > lim {
								t.Fatalf("index %d: sum %v > L = %v", j, sum, lim)
							}
						case MulSum:
							if weighted > lim {
								t.Fatalf("index %d: sum of pre-multiplied inputs %v > L = %v", j, weighted, lim)
							}
						case Prod:
							if prod > lim || twos > int(math.Log2(lim)) || prod != math.Ldexp(1, twos) {
								t.Fatalf("index %d: product %v of %d twos, L = %v", j, prod, twos, lim)
							}
						}
						got := p.Reduced(j)
						if (op == Max || op == Min) && got > min(lim, 1000) {
							t.Fatalf("index %d: %v > %v", j, got, min(lim, 1000))
						}
						buf := make([]byte, dt.Size())
						if Encode(dt, buf, 0, got); Decode(dt, buf, 0) != got {
							t.Fatalf("Reduced(%d) = %v is not exact in %v", j, got, dt)
						}
						reduced[got] = true
					}
					// A truncated integer average of many small values can
					// be the same everywhere; anything else must vary.
					intAvgFlat := op == Avg && !dt.IsFloat() && lim/float64(ranks) < 2
					if len(reduced) < 2 && !intAvgFlat {
						t.Errorf("Reduced is the same at every index: %v", reduced)
					}
					if !rankVaries {
						t.Errorf("Value does not depend on the rank")
					}
				})
			}
		}
	}
}

// foldSequential reduces bufs in the given order into a new buffer,
// alternating which operand the accumulator aliases.
func foldSequential(dt DType, op ReduceOp, bufs [][]byte, order []int) []byte {
	red := Reducer(dt, op)
	acc := bytes.Clone(bufs[order[0]])
	for k, r := range order[1:] {
		if k%2 == 0 {
			red(acc, acc, bufs[r])
		} else {
			red(acc, bufs[r], acc)
		}
	}
	return acc
}

// foldTree reduces bufs by combining random pairs into fresh buffers until
// one is left: a reduction tree of random shape.
func foldTree(r *rand.Rand, dt DType, op ReduceOp, bufs [][]byte) []byte {
	red := Reducer(dt, op)
	live := append([][]byte(nil), bufs...)
	for len(live) > 1 {
		i := r.IntN(len(live))
		live[i], live[len(live)-1] = live[len(live)-1], live[i]
		j := r.IntN(len(live) - 1)
		out := make([]byte, len(live[j]))
		red(out, live[j], live[len(live)-1])
		live[j], live = out, live[:len(live)-1]
	}
	return live[0]
}

func TestPatternReducedMatchesKernels(t *testing.T) {
	const first, n = 1234, Period + 200
	r := rand.New(rand.NewPCG(9, 10))
	for _, dt := range All() {
		for _, op := range AllOps() {
			for _, ranks := range patternRanks {
				p := Pattern{dt, op, ranks}
				t.Run(fmt.Sprintf("%v/%v/ranks=%d", dt, op, ranks), func(t *testing.T) {
					bufs := make([][]byte, ranks)
					for rank := range bufs {
						bufs[rank] = make([]byte, n*dt.Size())
						p.Fill(bufs[rank], rank, first)
						if op == MulSum {
							PreMultiply(dt, bufs[rank], bufs[rank], rank)
						}
					}
					results := map[string][]byte{
						"sequential": foldSequential(dt, op, bufs, r.Perm(ranks)),
						"tree":       foldTree(r, dt, op, bufs),
					}
					want := p.Template(-1)
					var reduced [Period]float64
					for j := range reduced {
						reduced[j] = p.Reduced(j)
					}
					for name, got := range results {
						if op == Avg {
							DivideBy(dt, got, ranks)
						}
						for k := range n {
							if g, w := Decode(dt, got, k), reduced[(first+k)%Period]; g != w {
								t.Fatalf("%s fold: element %d = %v, Reduced = %v", name, k, g, w)
							}
						}
						if c := CountWrong(dt, got, want, first); c != 0 {
							t.Fatalf("%s fold: CountWrong = %d against Template(-1)", name, c)
						}
					}
				})
			}
		}
	}
}

func TestPatternFill(t *testing.T) {
	tests := []struct {
		dt           DType
		op           ReduceOp
		ranks, rank  int
		first, elems int
	}{
		{Int8, Sum, 300, 299, 0, 1},
		{Uint8, Prod, 7, 3, 508, 5000},
		{FP16, Max, 64, 10, 1 << 20, 3 * Period},
		{BF16, Avg, 3, 2, 7, 100_000}, // past fillChunk
		{FP32, Min, 8, 0, Period - 1, 2},
		{FP64, Sum, 2, 1, 123_456_789, 50_000},
		{Int64, Avg, 4096, 4095, 3, 0},
	}
	for _, tc := range tests {
		p := Pattern{tc.dt, tc.op, tc.ranks}
		t.Run(fmt.Sprintf("%v/%v/first=%d/n=%d", tc.dt, tc.op, tc.first, tc.elems), func(t *testing.T) {
			s := tc.dt.Size()
			buf := make([]byte, tc.elems*s)
			p.Fill(buf, tc.rank, tc.first)
			one := make([]byte, s)
			for k := range tc.elems {
				Encode(tc.dt, one, 0, p.Value(tc.rank, tc.first+k))
				if !bytes.Equal(buf[k*s:k*s+s], one) {
					t.Fatalf("element %d = %x, want %x", k, buf[k*s:k*s+s], one)
				}
			}
			tmpl := p.Template(tc.rank)
			if c := CountWrong(tc.dt, buf, tmpl, tc.first); c != 0 {
				t.Fatalf("CountWrong on the filled buffer = %d", c)
			}
			if tc.elems > 1 {
				if c := CountWrong(tc.dt, buf, tmpl, tc.first+1); c == 0 {
					t.Errorf("CountWrong at the wrong phase = 0")
				}
			}
		})
	}
}

func TestCountWrong(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	tests := []struct {
		dt      DType
		elems   int
		corrupt []int // element indices to corrupt; -1 picks a random one
	}{
		{FP32, 3*Period + 17, nil},
		{FP32, 3*Period + 17, []int{0}},
		{FP32, 3*Period + 17, []int{3*Period + 16}},               // in the partial last block
		{Int8, 10 * Period, []int{5, 6, 7, Period, 2*Period - 1}}, // neighbours and block edges
		{FP16, 5000, []int{-1, -1, -1, -1, -1, -1, -1, -1, -1, -1}},
		{FP64, 1 << 16, []int{-1, -1, -1}},
		{Uint16, 0, nil},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%v/n=%d/corrupt=%d", tc.dt, tc.elems, len(tc.corrupt)), func(t *testing.T) {
			p := Pattern{tc.dt, Sum, 5}
			const first = 777
			s := tc.dt.Size()
			buf := make([]byte, tc.elems*s)
			p.Fill(buf, -1+1, first) // rank 0
			bad := map[int]bool{}
			for _, k := range tc.corrupt {
				for k < 0 || bad[k] {
					k = r.IntN(tc.elems)
				}
				bad[k] = true
				buf[k*s+r.IntN(s)] ^= 1 << r.IntN(8) // one flipped bit
			}
			if got := CountWrong(tc.dt, buf, p.Template(0), first); got != len(bad) {
				t.Errorf("CountWrong = %d, want %d", got, len(bad))
			}
		})
	}
}

func TestTemplatePhases(t *testing.T) {
	for _, dt := range []DType{Int8, Uint32, FP16, BF16, FP64} {
		p := Pattern{dt, Sum, 3}
		for _, src := range []int{-1, 0, 2} {
			tmpl := p.Template(src)
			s := dt.Size()
			if len(tmpl) != 2*Period*s {
				t.Fatalf("%v: Template(%d) has %d bytes, want %d", dt, src, len(tmpl), 2*Period*s)
			}
			one := make([]byte, s)
			for _, ph := range []int{0, 1, 254, Period - 1} {
				win := tmpl[ph*s:][:Period*s]
				for k := range Period {
					v := p.Reduced(ph + k)
					if src >= 0 {
						v = p.Value(src, ph+k)
					}
					Encode(dt, one, 0, v)
					if !bytes.Equal(win[k*s:k*s+s], one) {
						t.Fatalf("%v: Template(%d) phase %d element %d = %x, want %x", dt, src, ph, k, win[k*s:k*s+s], one)
					}
				}
			}
		}
	}
}
