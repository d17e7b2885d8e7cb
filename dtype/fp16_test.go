package dtype

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/x448/float16"
)

// x448F16 is the oracle encoder: IEEE round-to-nearest-even, verified by its
// author on all 2^32 inputs.
func x448F16(f float32) uint16 { return float16.Fromfloat32(f).Bits() }

// f16Inputs returns float32 inputs for the encoder: every binary16 value,
// every midpoint between neighbours (the ties) and the float32 values just
// either side of each midpoint, 10^6 random bit patterns and 10^6 random
// values whose exponents lie around the binary16 range.
func f16Inputs() []float32 {
	var in []float32
	for h := range 1 << 16 {
		in = append(in, float16.Frombits(uint16(h)).Float32())
	}
	for h := uint16(0); h < 0x7c00; h++ { // each positive finite and its successor
		lo, hi := float64(float16.Frombits(h).Float32()), float64(float16.Frombits(h+1).Float32())
		if h+1 == 0x7c00 {
			hi = 65536 // the overflow threshold is the midpoint to 2^16
		}
		mid := float32((lo + hi) / 2) // exact: needs 12 significant bits
		for _, f := range []float32{mid, math.Nextafter32(mid, 0), math.Nextafter32(mid, math.MaxFloat32)} {
			in = append(in, f, -f)
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 1_000_000 {
		in = append(in, math.Float32frombits(r.Uint32()))
	}
	for range 1_000_000 {
		exp := uint32(127-30) + r.Uint32N(50) // 2^-30 .. 2^19
		in = append(in, math.Float32frombits(r.Uint32()&0x807fffff|exp<<23))
	}
	return in
}

func TestF32ToF16MatchesX448(t *testing.T) {
	wrong := 0
	for _, f := range f16Inputs() {
		got, want := F32ToF16(f), x448F16(f)
		if got != want {
			if wrong++; wrong <= 10 {
				t.Errorf("F32ToF16(%g = %#08x) = %#04x, want %#04x", f, math.Float32bits(f), got, want)
			}
		}
	}
	if wrong > 10 {
		t.Errorf("... %d mismatches in all", wrong)
	}
}

func TestF16ToF32MatchesX448(t *testing.T) {
	for h := range 1 << 16 {
		got := math.Float32bits(F16ToF32(uint16(h)))
		want := math.Float32bits(float16.Frombits(uint16(h)).Float32())
		if got != want {
			t.Errorf("F16ToF32(%#04x) = %#08x, want %#08x", h, got, want)
		}
	}
}

func TestF16Cases(t *testing.T) {
	tests := []struct {
		name string
		in   float32
		want uint16
	}{
		{"one", 1, 0x3c00},
		{"minus two", -2, 0xc000},
		{"max", 65504, 0x7bff},
		{"tie below overflow", 65519.996, 0x7bff},
		{"overflow tie", 65520, 0x7c00},
		{"max float32", math.MaxFloat32, 0x7c00},
		{"inf", float32(math.Inf(-1)), 0xfc00},
		{"tie to even down", 1 + 1.0/2048, 0x3c00},
		{"tie to even up", 1 + 3.0/2048, 0x3c02},
		{"smallest subnormal", 0x1p-24, 0x0001},
		{"half smallest subnormal", 0x1p-25, 0x0000},
		{"just over half smallest", 0x1.000002p-25, 0x0001},
		{"subnormal tie up", 0x3p-25, 0x0002},
		{"subnormal tie up to normal", 0x1.ffcp-15, 0x0400},
		{"negative zero", float32(math.Copysign(0, -1)), 0x8000},
	}
	for _, tc := range tests {
		if got := F32ToF16(tc.in); got != tc.want {
			t.Errorf("%s: F32ToF16(%g) = %#04x, want %#04x", tc.name, tc.in, got, tc.want)
		}
	}
	nan := math.Float32frombits(0x7f800001) // signalling, payload only in low bits
	if h := F32ToF16(nan); h&0x7c00 != 0x7c00 || h&0x3ff == 0 {
		t.Errorf("F32ToF16(NaN %#08x) = %#04x, not a NaN", math.Float32bits(nan), h)
	}
}

// refBF16 rounds f to bfloat16 by comparing float64 distances to the two
// candidates, independently of the bit trick in F32ToBF16. Past the largest
// finite bfloat16 the upper candidate is 2^128 (IEEE's overflow rule).
func refBF16(f float32) uint16 {
	u := math.Float32bits(f)
	if f != f {
		return 0x7fc0 // any NaN; callers compare NaN-ness
	}
	sign, mag := uint16(u>>16)&0x8000, u&0x7fffffff
	lo := uint16(mag >> 16)
	if lo == 0x7f80 { // ±Inf
		return sign | lo
	}
	x := float64(math.Float32frombits(mag))
	vlo := float64(math.Float32frombits(uint32(lo) << 16))
	vhi := float64(math.Float32frombits(uint32(lo+1) << 16))
	if lo+1 == 0x7f80 {
		vhi = math.Ldexp(1, 128)
	}
	switch dlo, dhi := x-vlo, vhi-x; {
	case dlo < dhi:
		return sign | lo
	case dlo > dhi:
		return sign | (lo + 1)
	case lo&1 == 0:
		return sign | lo
	}
	return sign | (lo + 1)
}

func isNaN16(dt DType, h uint16) bool {
	if dt == FP16 {
		return h&0x7c00 == 0x7c00 && h&0x3ff != 0
	}
	return h&0x7f80 == 0x7f80 && h&0x7f != 0
}

func TestF32ToBF16(t *testing.T) {
	tests := []struct {
		name string
		in   uint32 // float32 bits
		want uint16
	}{
		{"one", 0x3f800000, 0x3f80},
		{"tie to even down", 0x3f808000, 0x3f80},
		{"tie to even up", 0x3f818000, 0x3f82},
		{"above tie", 0x3f808001, 0x3f81},
		{"max float32 to inf", math.Float32bits(math.MaxFloat32), 0x7f80},
		{"minus max float32", math.Float32bits(-math.MaxFloat32), 0xff80},
		{"largest finite tie", 0x7f7f8000, 0x7f80},
		{"inf", 0x7f800000, 0x7f80},
		{"subnormal tie down", 0x00008000, 0x0000},
		{"subnormal tie up", 0x00018000, 0x0002},
		{"negative zero", 0x80000000, 0x8000},
	}
	for _, tc := range tests {
		f := math.Float32frombits(tc.in)
		if got := F32ToBF16(f); got != tc.want {
			t.Errorf("%s: F32ToBF16(%#08x) = %#04x, want %#04x", tc.name, tc.in, got, tc.want)
		}
		if ref := refBF16(f); ref != tc.want {
			t.Errorf("%s: reference gives %#04x, want %#04x (broken reference)", tc.name, ref, tc.want)
		}
	}
	for _, nan := range []uint32{0x7f800001, 0x7fffffff, 0xff800001, 0x7fc00000, 0x7f80ffff} {
		if got := F32ToBF16(math.Float32frombits(nan)); !isNaN16(BF16, got) {
			t.Errorf("F32ToBF16(NaN %#08x) = %#04x, not a NaN", nan, got)
		}
	}

	// Every bf16 value round-trips; ties and their neighbours; random bits.
	var in []float32
	for b := range 1 << 16 {
		f := BF16ToF32(uint16(b))
		if math.Float32bits(f) != uint32(b)<<16 {
			t.Fatalf("BF16ToF32(%#04x) = %#08x", b, math.Float32bits(f))
		}
		in = append(in, f)
		if b&0x7fff < 0x7f80 {
			mid := math.Float32frombits(uint32(b)<<16 | 0x8000)
			in = append(in, mid, math.Nextafter32(mid, 0), math.Nextafter32(mid, float32(math.Inf(1))))
		}
	}
	r := rand.New(rand.NewPCG(3, 4))
	for range 1_000_000 {
		in = append(in, math.Float32frombits(r.Uint32()))
	}
	wrong := 0
	for _, f := range in {
		got, want := F32ToBF16(f), refBF16(f)
		if f != f {
			if !isNaN16(BF16, got) || got>>15 != uint16(math.Float32bits(f)>>31) {
				t.Errorf("F32ToBF16(NaN %#08x) = %#04x", math.Float32bits(f), got)
			}
			continue
		}
		if got != want {
			if wrong++; wrong <= 10 {
				t.Errorf("F32ToBF16(%#08x) = %#04x, want %#04x", math.Float32bits(f), got, want)
			}
		}
	}
}
