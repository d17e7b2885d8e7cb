package dtype

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/x448/float16"
)

// fp8Ref is the reference for one fp8 format, built without fp8.go: values
// from the fields of the OCP specification, and narrowing by search.
type fp8Ref struct {
	dt      DType
	expBits int
	maxCode uint8 // largest finite magnitude
	toF32   func(uint8) float32
	fromF32 func(float32) uint8
}

var fp8Refs = []fp8Ref{
	{F8E4M3, 4, 0x7e, F8E4M3ToF32, F32ToF8E4M3},
	{F8E5M2, 5, 0x7b, F8E5M2ToF32, F32ToF8E5M2},
}

// value returns the value of code b from the specification's fields, or NaN.
func (f fp8Ref) value(b uint8) float64 {
	mantBits := 7 - f.expBits
	bias := 1<<(f.expBits-1) - 1
	e := int(b>>mantBits) & (1<<f.expBits - 1)
	m := float64(b & (1<<mantBits - 1))
	s := 1.0
	if b&0x80 != 0 {
		s = -1
	}
	switch {
	case f.dt == F8E4M3 && b&0x7f == 0x7f:
		return math.NaN() // E4M3FN: S.1111.111 only
	case f.dt == F8E5M2 && e == 31 && m == 0:
		return math.Inf(int(s))
	case f.dt == F8E5M2 && e == 31:
		return math.NaN()
	case e == 0:
		return s * m * math.Pow(2, float64(1-bias-mantBits))
	}
	return s * (1 + m/float64(int(1)<<mantBits)) * math.Pow(2, float64(e-bias))
}

// fp8Values caches value over all codes, per format.
var fp8Values sync.Map // DType -> *[256]float64

// values returns value(b) for every code b.
func (f fp8Ref) values() *[256]float64 {
	if v, ok := fp8Values.Load(f.dt); ok {
		return v.(*[256]float64)
	}
	var t [256]float64
	for b := range t {
		t[b] = f.value(uint8(b))
	}
	v, _ := fp8Values.LoadOrStore(f.dt, &t)
	return v.(*[256]float64)
}

// nearest returns the finite code nearest to v, ties to the even code, by
// trying every code: saturation (SATFINITE) falls out, as no code beyond
// the largest finite one is a candidate.
func (f fp8Ref) nearest(v float64) uint8 {
	if v != v {
		return 0x7f
	}
	sign := uint8(0)
	if math.Signbit(v) {
		sign, v = 0x80, -v
	}
	vals := f.values()
	if v >= vals[f.maxCode] {
		return sign | f.maxCode // Inf too; and no rounding of v-max into a false tie
	}
	best, bestDist := uint8(0), math.Inf(1)
	for c := uint8(0); c <= f.maxCode; c++ {
		d := math.Abs(vals[c] - v)
		if d < bestDist || d == bestDist && c&1 == 0 {
			best, bestDist = c, d
		}
	}
	return sign | best
}

func TestFP8Decode(t *testing.T) {
	for _, f := range fp8Refs {
		for b := range 256 {
			got, want := f.toF32(uint8(b)), f.value(uint8(b))
			if want != want {
				if got == got {
					t.Errorf("%v: decode(%#02x) = %v, want NaN", f.dt, b, got)
				}
				continue
			}
			if float64(got) != want || math.Signbit(float64(got)) != math.Signbit(want) {
				t.Errorf("%v: decode(%#02x) = %v, want %v", f.dt, b, got, want)
			}
		}
	}
	// E5M2 is the top byte of a binary16.
	for b := range 256 {
		got, want := F8E5M2ToF32(uint8(b)), float16.Frombits(uint16(b)<<8).Float32()
		if got != want && (got == got || want == want) {
			t.Errorf("e5m2 %#02x = %v, binary16 %#04x = %v", b, got, b<<8, want)
		}
	}
	// Landmarks of the specification.
	for _, tc := range []struct {
		dt   DType
		code uint8
		want float64
	}{
		{F8E4M3, 0x7e, 448}, {F8E4M3, 0xfe, -448}, {F8E4M3, 0x01, 0x1p-9}, {F8E4M3, 0x08, 0x1p-6},
		{F8E4M3, 0x38, 1}, {F8E4M3, 0x80, math.Copysign(0, -1)}, {F8E4M3, 0x78, 256},
		{F8E5M2, 0x7b, 57344}, {F8E5M2, 0x7c, math.Inf(1)}, {F8E5M2, 0xfc, math.Inf(-1)},
		{F8E5M2, 0x01, 0x1p-16}, {F8E5M2, 0x04, 0x1p-14}, {F8E5M2, 0x3c, 1},
	} {
		if got := Decode(tc.dt, []byte{tc.code}, 0); got != tc.want || math.Signbit(got) != math.Signbit(tc.want) {
			t.Errorf("%v %#02x = %v, want %v", tc.dt, tc.code, got, tc.want)
		}
	}
}

// TestFP8RoundTrip: every code that is a finite value narrows back to
// itself; every NaN to the canonical 0x7f; E5M2's infinities saturate.
func TestFP8RoundTrip(t *testing.T) {
	for _, f := range fp8Refs {
		for b := range 256 {
			v := f.toF32(uint8(b))
			want := uint8(b)
			switch {
			case v != v:
				want = 0x7f
			case math.IsInf(float64(v), 0):
				want = uint8(b)&0x80 | f.maxCode
			}
			if got := f.fromF32(v); got != want {
				t.Errorf("%v: %#02x -> %v -> %#02x, want %#02x", f.dt, b, v, got, want)
			}
		}
	}
}

// TestFP8Rounding checks narrowing at every midpoint between neighbouring
// codes (ties to even), a hair either side of it, past the largest finite
// value, and at random float32 values, against the search reference.
func TestFP8Rounding(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	for _, f := range fp8Refs {
		t.Run(f.dt.String(), func(t *testing.T) {
			var in []float32
			for c := uint8(0); c < f.maxCode; c++ {
				lo, hi := f.value(c), f.value(c+1)
				mid := float32((lo + hi) / 2) // exact: fp8 midpoints have few bits
				if float64(mid) != (lo+hi)/2 {
					t.Fatalf("midpoint of %#02x and %#02x not exact in float32", c, c+1)
				}
				up, down := math.Nextafter32(mid, 1e30), math.Nextafter32(mid, -1e30)
				in = append(in, mid, up, down, -mid, -up, -down, float32(lo), float32(hi))
				// The tie goes to the even code of the two.
				even := c
				if c&1 == 1 {
					even = c + 1
				}
				if got := f.fromF32(mid); got != even {
					t.Errorf("midpoint %v of %#02x and %#02x -> %#02x, want %#02x", mid, c, c+1, got, even)
				}
				if got := f.fromF32(up); got != c+1 {
					t.Errorf("just above midpoint %v -> %#02x, want %#02x", up, got, c+1)
				}
				if got := f.fromF32(down); got != c {
					t.Errorf("just below midpoint %v -> %#02x, want %#02x", down, got, c)
				}
			}
			top := f.value(f.maxCode)
			in = append(in, float32(top)*1.01, float32(top)*1.5, float32(top)*2, 1e30, math.MaxFloat32,
				float32(math.Inf(1)), float32(math.Inf(-1)), -math.MaxFloat32, 0x1p-149, -0x1p-149, 0, float32(math.Copysign(0, -1)))
			for range 200_000 {
				in = append(in, math.Float32frombits(r.Uint32()))
			}
			wrong := 0
			for _, v := range in {
				want := f.nearest(float64(v))
				if got := f.fromF32(v); got != want {
					if wrong++; wrong <= 10 {
						t.Errorf("narrow(%v = %#08x) = %#02x, want %#02x", v, math.Float32bits(v), got, want)
					}
				}
			}
		})
	}
}

// TestFP8Saturation spells out the saturation rules CUDA's SATFINITE
// conversion has, which nccl-tests' fp8 arithmetic uses.
func TestFP8Saturation(t *testing.T) {
	tests := []struct {
		dt   DType
		in   float32
		want uint8
	}{
		{F8E4M3, 448, 0x7e},
		{F8E4M3, 464, 0x7e}, // the tie between 448 and (NaN's) 480 goes to the even 448
		{F8E4M3, 465, 0x7e},
		{F8E4M3, 480, 0x7e},
		{F8E4M3, 1e9, 0x7e},
		{F8E4M3, -1e9, 0xfe},
		{F8E4M3, float32(math.Inf(1)), 0x7e},
		{F8E4M3, float32(math.Inf(-1)), 0xfe},
		{F8E4M3, float32(math.NaN()), 0x7f},
		{F8E4M3, -float32(math.NaN()), 0x7f},
		{F8E4M3, 0x1p-10, 0x00},  // half the smallest subnormal: tie to even zero
		{F8E4M3, 0x1.8p-9, 0x02}, // 1.5 subnormal steps: tie to even 2
		{F8E4M3, -0x1p-11, 0x80}, // underflow keeps the sign
		{F8E4M3, 0x1.fp-7, 0x08}, // rounds up out of the subnormals
		{F8E5M2, 57344, 0x7b},    // largest finite
		{F8E5M2, 61439, 0x7b},    // below the midpoint to 65536
		{F8E5M2, 61440, 0x7b},    // the midpoint: would be Inf, saturates
		{F8E5M2, 65536, 0x7b},    // would be Inf
		{F8E5M2, float32(math.Inf(1)), 0x7b},
		{F8E5M2, float32(math.Inf(-1)), 0xfb},
		{F8E5M2, float32(math.NaN()), 0x7f},
		{F8E5M2, 0x1p-17, 0x00},
		{F8E5M2, 0x1.8p-16, 0x02},
		{F8E5M2, 9, 0x48}, // 9 is between 8 and 10: tie to even 8 (0x48)
		{F8E5M2, 11, 0x4a},
	}
	for _, tc := range tests {
		name := fmt.Sprintf("%v/%v", tc.dt, tc.in)
		var got uint8
		if tc.dt == F8E4M3 {
			got = F32ToF8E4M3(tc.in)
		} else {
			got = F32ToF8E5M2(tc.in)
		}
		if got != tc.want {
			t.Errorf("%s: %#02x, want %#02x", name, got, tc.want)
		}
	}
}

// TestFP8FromFloat64 checks Encode's one rounding of a float64 near every
// midpoint, where float32(v) would make a near-miss a tie.
func TestFP8FromFloat64(t *testing.T) {
	for _, f := range fp8Refs {
		buf := []byte{0}
		for c := uint8(0); c < f.maxCode; c++ {
			mid := (f.value(c) + f.value(c+1)) / 2
			eps := mid * 0x1p-40
			for _, v := range []float64{mid + eps, mid - eps, -mid - eps, mid} {
				Encode(f.dt, buf, 0, v)
				if want := f.nearest(v); buf[0] != want {
					t.Errorf("%v: Encode(%x) = %#02x, want %#02x", f.dt, v, buf[0], want)
				}
			}
		}
	}
}
