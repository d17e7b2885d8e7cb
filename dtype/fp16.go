package dtype

import "math"

// f16ToF32Table holds the float32 value of every binary16 bit pattern. A
// load from this 256 KiB table beat the branch-free bit-op decoder in the
// kernels (golibs §3.3: 0.65–1.0 GiB/s against 0.39–0.46 GiB/s for fp16 sum).
var f16ToF32Table [1 << 16]float32

func init() {
	for h := range f16ToF32Table {
		f16ToF32Table[h] = math.Float32frombits(f16BitsToF32Bits(uint16(h)))
	}
}

// f16BitsToF32Bits widens a binary16 pattern to binary32 exactly. A NaN keeps
// its payload and gets the quiet bit set, as F16C's VCVTPH2PS and
// github.com/x448/float16 do.
func f16BitsToF32Bits(h uint16) uint32 {
	sign := uint32(h&0x8000) << 16
	exp := uint32(h>>10) & 0x1f
	mant := uint32(h & 0x3ff)
	switch {
	case exp == 0x1f && mant == 0: // ±Inf
		return sign | 0x7f800000
	case exp == 0x1f: // NaN
		return sign | 0x7fc00000 | mant<<13
	case exp == 0 && mant == 0: // ±0
		return sign
	case exp == 0: // subnormal: mant × 2^-24 is a normal float32
		f := float32(mant) * (1.0 / (1 << 24))
		return sign | math.Float32bits(f)
	}
	return sign | (exp+127-15)<<23 | mant<<13
}

// F16ToF32 returns the value of the IEEE 754 binary16 number with bits h.
// The conversion is exact; a NaN stays a NaN (quieted, payload kept).
func F16ToF32(h uint16) float32 { return f16ToF32Table[h] }

// Constants of the magic-number encoder (F. Giesen, float_to_half_fast3_rtne).
const (
	f16Overflow = (127 + 16) << 23                   // 65536.0: here and above is Inf (or NaN)
	f16MinNorm  = (127 - 14) << 23                   // 2^-14: smallest normal binary16
	denormMagic = ((127 - 15) + (23 - 10) + 1) << 23 // 0.5: aligns subnormal results at bit 0
)

// F32ToF16 returns the IEEE 754 binary16 number nearest to f, ties to even.
// Values of magnitude 65520 and above become ±Inf; results below 2^-14 are
// rounded to subnormals or ±0. A NaN becomes a quiet NaN that keeps the top
// ten payload bits (bit-identical to github.com/x448/float16).
func F32ToF16(f float32) uint16 {
	u := math.Float32bits(f)
	if f16IsNormal(u) {
		return f16RoundNormal(u)
	}
	return f32ToF16Rare(u)
}

// f16IsNormal reports whether the float32 bits u give a normal binary16
// (after rounding, possibly Inf): 2^-14 <= |f| < 65536, in one unsigned
// compare.
func f16IsNormal(u uint32) bool {
	return u&0x7fffffff-f16MinNorm < f16Overflow-f16MinNorm
}

// f16RoundNormal encodes the float32 bits u for which f16IsNormal holds. It
// rebiases the exponent and rounds: adding 0xfff plus the lowest kept bit
// carries into bit 13 exactly when the dropped bits are over half, or half
// with an odd result. A carry out of the mantissa bumps the exponent, up to
// 0x7c00 (Inf) from 65520.
func f16RoundNormal(u uint32) uint16 {
	a := u & 0x7fffffff
	a = a - (127-15)<<23 + 0xfff + (a>>13)&1
	return uint16(u>>16)&0x8000 | uint16(a>>13)
}

// f32ToF16Rare encodes the float32 bits u whose binary16 result is ±0, a
// subnormal, ±Inf or NaN. It is kept out of line so that the encoding
// loops stay small for the common case.
//
//go:noinline
func f32ToF16Rare(u uint32) uint16 {
	sign := uint16(u>>16) & 0x8000
	a := u & 0x7fffffff
	if a >= f16Overflow {
		if a > 0x7f800000 { // NaN
			return sign | 0x7e00 | uint16(a>>13)&0x3ff
		}
		return sign | 0x7c00
	}
	// Adding 0.5 lines the 10 subnormal bits up at the bottom of the
	// float32 mantissa, and the FPU's own round-to-nearest-even does the
	// rounding; removing the magic's bits leaves the result.
	v := math.Float32frombits(a) + math.Float32frombits(denormMagic)
	return sign | uint16(math.Float32bits(v)-denormMagic)
}
