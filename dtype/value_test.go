package dtype

import (
	"math"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/x448/float16"
)

func TestEncodeDecode(t *testing.T) {
	tests := []struct {
		name  string
		dt    DType
		in    float64
		bits  uint64  // stored element
		value float64 // Decode of it
	}{
		{"int8 negative", Int8, -5, 0xfb, -5},
		{"int8 wraps", Int8, 200, 0xc8, -56},
		{"int8 truncates", Int8, -2.9, 0xfe, -2},
		{"uint8 wraps", Uint8, 300, 44, 44},
		{"uint8 negative", Uint8, -1, 0xff, 255},
		{"int16", Int16, -32768, 0x8000, -32768},
		{"uint16", Uint16, 65535, 0xffff, 65535},
		{"int32", Int32, -1 << 31, 0x80000000, -1 << 31},
		{"uint32", Uint32, 1<<32 - 1, 0xffffffff, 1<<32 - 1},
		{"int64", Int64, -1 << 53, 0xffe0000000000000, -1 << 53},
		{"uint64 above int64", Uint64, 0x1p63, 1 << 63, 0x1p63},
		{"fp16 one", FP16, 1, 0x3c00, 1},
		{"fp16 rounds", FP16, 2049, 0x6800, 2048},
		{"fp16 overflow", FP16, 1e6, 0x7c00, math.Inf(1)},
		{"bf16 257 ties to even", BF16, 257, 0x4380, 256},
		{"bf16 259 ties to even", BF16, 259, 0x4382, 260},
		{"fp32", FP32, 0.1, uint64(math.Float32bits(0.1)), float64(float32(0.1))},
		{"fp32 negative zero", FP32, math.Copysign(0, -1), 0x80000000, math.Copysign(0, -1)},
		{"fp64", FP64, math.Pi, math.Float64bits(math.Pi), math.Pi},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			buf := make([]byte, 3*tc.dt.Size())
			Encode(tc.dt, buf, 1, tc.in)
			if got := load(tc.dt, buf, 1); got != tc.bits {
				t.Errorf("Encode(%v) stored %#x, want %#x", tc.in, got, tc.bits)
			}
			if load(tc.dt, buf, 0) != 0 || load(tc.dt, buf, 2) != 0 {
				t.Errorf("Encode wrote outside element 1")
			}
			got := Decode(tc.dt, buf, 1)
			if got != tc.value || math.Signbit(got) != math.Signbit(tc.value) {
				t.Errorf("Decode = %v, want %v", got, tc.value)
			}
		})
	}
}

// TestEncodeMatchesKernelView checks that Encode's layout is the one the
// kernels see through their unsafe views.
func TestEncodeMatchesKernelView(t *testing.T) {
	buf := make([]byte, 4*8)
	for i, v := range []float64{1, -2, 3.5, 1e300} {
		Encode(FP64, buf, i, v)
		if got := asSlice[float64](buf, len(buf))[i]; got != v {
			t.Errorf("element %d: view reads %v, Encode wrote %v", i, got, v)
		}
	}
	Encode(Int32, buf, 3, -7)
	if got := asSlice[int32](buf, len(buf))[3]; got != -7 {
		t.Errorf("int32 view reads %d, want -7", got)
	}
}

// nearest16 rounds v to nearest-even among the non-negative finite 16-bit
// patterns 0..maxFinite (whose values increase with the pattern), treating
// the step past maxFinite as overflow to Inf at infBits. It is a float64
// reference for f64ToF16 and f64ToBF16, with no float32 step.
func nearest16(v float64, value func(uint16) float64, maxFinite, infBits uint16, top float64) uint16 {
	sign := uint16(0)
	if math.Signbit(v) {
		sign, v = 0x8000, -v
	}
	// First pattern whose value is >= v.
	hi := uint16(sort.Search(int(maxFinite)+1, func(k int) bool { return value(uint16(k)) >= v }))
	if hi == 0 {
		return sign
	}
	lo := hi - 1
	vhi := top // 2^16 or 2^128: the overflow threshold's upper neighbour
	if hi <= maxFinite {
		vhi = value(hi)
	}
	dlo, dhi := v-value(lo), vhi-v
	switch {
	case dlo < dhi || dlo == dhi && lo&1 == 0:
		return sign | lo
	case hi > maxFinite:
		return sign | infBits
	}
	return sign | hi
}

func TestRoundFromFloat64(t *testing.T) {
	f16 := func(h uint16) float64 { return float64(float16.Frombits(h).Float32()) }
	bf16 := func(h uint16) float64 { return float64(math.Float32frombits(uint32(h) << 16)) }
	formats := []struct {
		name      string
		enc       func(float64) uint16
		value     func(uint16) float64
		maxFinite uint16
		top       float64
	}{
		{"fp16", f64ToF16, f16, 0x7bff, 65536},
		{"bf16", f64ToBF16, bf16, 0x7f7f, 0x1p128},
	}
	r := rand.New(rand.NewPCG(7, 8))
	for _, f := range formats {
		t.Run(f.name, func(t *testing.T) {
			// Midpoints and points a hair either side: float32(v) would turn
			// the near-misses into exact ties and round them the wrong way.
			var in []float64
			for h := uint16(0); h < f.maxFinite; h++ {
				mid := (f.value(h) + f.value(h+1)) / 2
				eps := math.Max(mid*0x1p-40, 0x1p-1074)
				in = append(in, mid, mid+eps, mid-eps, -mid-eps)
			}
			for range 200_000 {
				in = append(in, math.Ldexp(r.Float64(), r.IntN(300)-150))
			}
			in = append(in, 0, math.Copysign(0, -1), f.top, f.top*4, 0x1p-200)
			wrong := 0
			for _, v := range in {
				want := nearest16(v, f.value, f.maxFinite, f.maxFinite+1, f.top)
				if got := f.enc(v); got != want {
					if wrong++; wrong <= 10 {
						t.Errorf("round(%x) = %#04x, want %#04x", v, got, want)
					}
				}
			}
		})
	}
}

func TestEncodeDecodeFP8(t *testing.T) {
	tests := []struct {
		dt    DType
		in    float64
		bits  uint8
		value float64
	}{
		{F8E4M3, 1, 0x38, 1},
		{F8E4M3, 17, 0x58, 16}, // 17: tie between 16 and 18, to even
		{F8E4M3, -448, 0xfe, -448},
		{F8E4M3, 1000, 0x7e, 448}, // saturates
		{F8E4M3, math.Inf(-1), 0xfe, -448},
		{F8E5M2, 9, 0x48, 8},
		{F8E5M2, 1e6, 0x7b, 57344},
		{F8E5M2, -0x1p-16, 0x81, -0x1p-16},
	}
	for _, tc := range tests {
		buf := make([]byte, 3)
		Encode(tc.dt, buf, 1, tc.in)
		if buf[1] != tc.bits || buf[0] != 0 || buf[2] != 0 {
			t.Errorf("%v: Encode(%v) stored % x, want 00 %02x 00", tc.dt, tc.in, buf, tc.bits)
		}
		if got := Decode(tc.dt, buf, 1); got != tc.value {
			t.Errorf("%v: Decode = %v, want %v", tc.dt, got, tc.value)
		}
	}
	nan := []byte{0}
	for _, dt := range []DType{F8E4M3, F8E5M2} {
		if Encode(dt, nan, 0, math.NaN()); nan[0] != 0x7f || !math.IsNaN(Decode(dt, nan, 0)) {
			t.Errorf("%v: NaN stored as %#02x", dt, nan[0])
		}
	}
}
