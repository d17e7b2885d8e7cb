package dtype

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/x448/float16"
)

var ne = binary.NativeEndian

// load and store read and write element i as raw bits, without the unsafe
// views the kernels use.
func load(dt DType, b []byte, i int) uint64 {
	s := dt.Size()
	e := b[i*s : i*s+s]
	switch s {
	case 1:
		return uint64(e[0])
	case 2:
		return uint64(ne.Uint16(e))
	case 4:
		return uint64(ne.Uint32(e))
	}
	return ne.Uint64(e)
}

func store(dt DType, b []byte, i int, v uint64) {
	s := dt.Size()
	e := b[i*s : i*s+s]
	switch s {
	case 1:
		e[0] = byte(v)
	case 2:
		ne.PutUint16(e, uint16(v))
	case 4:
		ne.PutUint32(e, uint32(v))
	default:
		ne.PutUint64(e, v)
	}
}

// refInt applies op to two integers given as bits: sum and prod wrap in 64
// bits and the caller keeps the low bits; max and min compare as signed or
// unsigned values of the type's width.
func refInt(dt DType, op ReduceOp, x, y uint64) uint64 {
	switch op {
	case Sum, Avg, MulSum:
		return x + y
	case Prod:
		return x * y
	}
	less := x < y
	if dt.IsSigned() {
		shift := 64 - 8*dt.Size() // sign-extend
		less = int64(x<<shift)>>shift < int64(y<<shift)>>shift
	}
	if (op == Max) == less {
		return y
	}
	return x
}

// refFloat applies op with Go's max/min semantics spelled out: NaN wins, and
// +0 is larger than -0.
func refFloat[F float32 | float64](op ReduceOp, x, y F) F {
	switch op {
	case Sum, Avg, MulSum:
		return x + y
	case Prod:
		return x * y
	}
	if x != x || y != y {
		return F(math.NaN())
	}
	if x == 0 && y == 0 {
		negX, negY := math.Signbit(float64(x)), math.Signbit(float64(y))
		if (op == Max) == (negX && !negY) {
			return y
		}
		return x
	}
	if (op == Max) == (x < y) {
		return y
	}
	return x
}

// refElem returns op(a[i], b[i]) as bits, and whether the result is a NaN
// (whose payload the kernels need not reproduce).
func refElem(dt DType, op ReduceOp, a, b []byte, i int) (uint64, bool) {
	x, y := load(dt, a, i), load(dt, b, i)
	switch dt {
	case FP16:
		fx, fy := float16.Frombits(uint16(x)).Float32(), float16.Frombits(uint16(y)).Float32()
		r := refFloat(op, fx, fy)
		return uint64(float16.Fromfloat32(r).Bits()), r != r
	case BF16:
		fx, fy := math.Float32frombits(uint32(x)<<16), math.Float32frombits(uint32(y)<<16)
		r := refFloat(op, fx, fy)
		return uint64(refBF16(r)), r != r
	case FP32:
		r := refFloat(op, math.Float32frombits(uint32(x)), math.Float32frombits(uint32(y)))
		return uint64(math.Float32bits(r)), r != r
	case FP64:
		r := refFloat(op, math.Float64frombits(x), math.Float64frombits(y))
		return math.Float64bits(r), r != r
	case F8E4M3, F8E5M2:
		f := fp8RefOf(dt)
		r := refFloat(op, float32(f.value(uint8(x))), float32(f.value(uint8(y))))
		return uint64(f.nearest(float64(r))), r != r
	}
	return refInt(dt, op, x, y) & (1<<(8*dt.Size()) - 1), false
}

func isNaNBits(dt DType, v uint64) bool {
	switch dt {
	case FP16, BF16:
		return isNaN16(dt, uint16(v))
	case FP32:
		f := math.Float32frombits(uint32(v))
		return f != f
	case FP64:
		return math.IsNaN(math.Float64frombits(v))
	case F8E4M3, F8E5M2:
		return math.IsNaN(fp8RefOf(dt).value(uint8(v)))
	}
	return false
}

// fp8RefOf returns the reference of fp8 type dt.
func fp8RefOf(dt DType) fp8Ref {
	if dt == F8E4M3 {
		return fp8Refs[0]
	}
	return fp8Refs[1]
}

// randomElems fills n elements: random bits for integers (so sums and
// products wrap) and for fp16/bf16 (which covers NaN, Inf and subnormals);
// for fp32/fp64 mostly values of mixed sign and magnitude, with some
// specials mixed in.
func randomElems(r *rand.Rand, dt DType, n int) []byte {
	b := make([]byte, n*dt.Size())
	specials := []float64{math.NaN(), math.Inf(1), math.Inf(-1), 0, math.Copysign(0, -1),
		-1, 0x1p-140, -0x1p-1070, 0x1p-20}
	for i := range n {
		switch {
		case dt == FP32 || dt == FP64:
			v := math.Ldexp(r.NormFloat64(), r.IntN(40)-20)
			if r.IntN(8) == 0 {
				v = specials[r.IntN(len(specials))]
			}
			if dt == FP32 {
				store(dt, b, i, uint64(math.Float32bits(float32(v))))
			} else {
				store(dt, b, i, math.Float64bits(v))
			}
		case (dt == FP16 || dt == BF16) && r.IntN(16) == 0:
			store(dt, b, i, uint64(r.IntN(2))<<15) // ±0
		default:
			store(dt, b, i, r.Uint64())
		}
	}
	return b
}

func TestReducerMatchesReference(t *testing.T) {
	lengths := []int{0, 1, 7, 8, 9, 31, 33, 1000}
	layouts := []string{"separate", "dst=a", "dst=b"}
	r := rand.New(rand.NewPCG(5, 6))
	for _, dt := range All() {
		for _, op := range AllOps() {
			for _, n := range lengths {
				for _, layout := range layouts {
					name := fmt.Sprintf("%v/%v/n=%d/%s", dt, op, n, layout)
					t.Run(name, func(t *testing.T) {
						// a and b carry a tail of extra elements that must be ignored.
						a, b := randomElems(r, dt, n+3), randomElems(r, dt, n+3)
						a0, b0 := bytes.Clone(a), bytes.Clone(b)
						dst := make([]byte, n*dt.Size())
						switch layout {
						case "dst=a":
							a = a[:len(dst)]
							dst = a
						case "dst=b":
							b = b[:len(dst)]
							dst = b
						}
						Reducer(dt, op)(dst, a, b)
						for i := range n {
							want, nan := refElem(dt, op, a0, b0, i)
							got := load(dt, dst, i)
							if nan && isNaNBits(dt, got) || !nan && got == want {
								continue
							}
							t.Fatalf("element %d: op(%#x, %#x) = %#x, want %#x",
								i, load(dt, a0, i), load(dt, b0, i), got, want)
						}
						if layout == "separate" && (!bytes.Equal(a, a0) || !bytes.Equal(b, b0)) {
							t.Fatalf("inputs modified")
						}
					})
				}
			}
		}
	}
}

func TestReducerAvgIsSum(t *testing.T) {
	x := []byte{1, 2, 3, 4, 5, 6, 7, 8}
	for _, dt := range All() {
		want, got := make([]byte, len(x)), make([]byte, len(x))
		Reducer(dt, Sum)(want, x, x)
		Reducer(dt, Avg)(got, x, x)
		if !bytes.Equal(got, want) {
			t.Errorf("%v: avg kernel %x, sum kernel %x", dt, got, want)
		}
	}
}

func TestReducerPanics(t *testing.T) {
	tests := []struct {
		name string
		f    func()
	}{
		{"invalid dtype", func() { Reducer(0, Sum) }},
		{"invalid op", func() { Reducer(FP32, 0) }},
		{"partial element", func() { Reducer(FP32, Sum)(make([]byte, 6), make([]byte, 8), make([]byte, 8)) }},
		{"short input", func() { Reducer(FP32, Sum)(make([]byte, 8), make([]byte, 4), make([]byte, 8)) }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Errorf("no panic")
				}
			}()
			tc.f()
		})
	}
}

func TestDivideBy(t *testing.T) {
	minI64 := float64(math.MinInt64)
	tests := []struct {
		dt      DType
		n       int
		in, out []float64 // out: want, computed by hand or by the float reference
	}{
		{Int8, 2, []float64{7, -7, -128, 127, 0}, []float64{3, -3, -64, 63, 0}},
		{Int8, 300, []float64{-128, 127, 1}, []float64{0, 0, 0}},
		{Uint8, 2, []float64{255, 1, 0}, []float64{127, 0, 0}},
		{Uint8, 300, []float64{255}, []float64{0}},
		{Int16, 7, []float64{-32768, 32767, 50}, []float64{-4681, 4681, 7}},
		{Uint16, 3, []float64{65535, 2}, []float64{21845, 0}},
		{Int32, 4096, []float64{-1 << 31, 1<<31 - 1}, []float64{-524288, 524287}},
		{Uint32, 10, []float64{1<<32 - 1}, []float64{429496729}},
		{Int64, 3, []float64{minI64, -10}, []float64{-3074457345618258602, -3}},
		{Uint64, 1, []float64{12345}, []float64{12345}},
		{Uint64, 3, []float64{0x1.8p63}, []float64{0x1p62}}, // beyond int64
		{FP16, 3, []float64{1, 2048, -7}, []float64{0x1.554p-2, 682.5, -2.333984375}},
		{FP16, 2, []float64{0x1p-24, 0x3p-24}, []float64{0, 0x1p-23}}, // ties to even in the subnormals
		{BF16, 3, []float64{1, 256}, []float64{0x1.56p-2, 85.5}},
		{F8E4M3, 3, []float64{1, 16, 448, -2}, []float64{0.34375, 5.5, 144, -0.6875}},
		{F8E4M3, 2, []float64{0x1p-9, 0x3p-9}, []float64{0, 0x1p-8}}, // ties to even in the subnormals
		{F8E5M2, 3, []float64{1, 8, 57344}, []float64{0.3125, 2.5, 20480}},
		{F8E5M2, 5, []float64{math.Inf(1)}, []float64{0x1.8p13}}, // Inf is stored as 57344; 11468.8 rounds to 12288
		{FP32, 3, []float64{1, 16777216}, []float64{float64(float32(1.0 / 3)), float64(float32(16777216.0 / 3))}},
		{FP32, 7, []float64{math.Inf(-1)}, []float64{math.Inf(-1)}},
		{FP64, 3, []float64{1, -1 << 53}, []float64{1.0 / 3, -(1 << 53) / 3.0}},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%v/n=%d", tc.dt, tc.n), func(t *testing.T) {
			buf := make([]byte, len(tc.in)*tc.dt.Size())
			for i, v := range tc.in {
				Encode(tc.dt, buf, i, v)
			}
			DivideBy(tc.dt, buf, tc.n)
			for i, want := range tc.out {
				if got := Decode(tc.dt, buf, i); got != want {
					t.Errorf("%v / %d = %v, want %v", tc.in[i], tc.n, got, want)
				}
			}
		})
	}
	nan := make([]byte, 2)
	Encode(FP16, nan, 0, math.NaN())
	if DivideBy(FP16, nan, 5); !math.IsNaN(Decode(FP16, nan, 0)) {
		t.Errorf("fp16 NaN / 5 is not NaN")
	}
}

// TestPreMultiply checks PreMultiply against the Prod kernel with the
// scalar nccl-tests gives each rank (1 on even ranks, 2 on odd ones).
func TestPreMultiply(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 16))
	for _, dt := range All() {
		for rank := range 4 {
			for _, inPlace := range []bool{false, true} {
				const n = 77
				src := randomElems(r, dt, n)
				scalars := make([]byte, len(src))
				for i := range n {
					Encode(dt, scalars, i, float64(1+rank%2))
				}
				want := make([]byte, len(src))
				Reducer(dt, Prod)(want, src, scalars)
				dst := make([]byte, len(src))
				if inPlace {
					dst = bytes.Clone(src)
					PreMultiply(dt, dst, dst, rank)
				} else {
					PreMultiply(dt, dst, src, rank)
				}
				for i := range n {
					g, w := load(dt, dst, i), load(dt, want, i)
					if g != w && !(isNaNBits(dt, g) && isNaNBits(dt, w)) {
						t.Fatalf("%v rank %d in-place %v: element %d: %#x * %d = %#x, want %#x",
							dt, rank, inPlace, i, load(dt, src, i), PreMulScalar(rank), g, w)
					}
				}
			}
		}
	}
	if PreMulScalar(0) != 1 || PreMulScalar(1) != 2 || PreMulScalar(6) != 1 || PreMulScalar(7) != 2 {
		t.Errorf("PreMulScalar is not 1 on even ranks and 2 on odd ones")
	}
}
