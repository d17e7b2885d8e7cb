package dtype

import "math"

// BF16ToF32 returns the value of the bfloat16 number with bits b. bfloat16 is
// the top half of an IEEE binary32, so the conversion is exact.
func BF16ToF32(b uint16) float32 { return math.Float32frombits(uint32(b) << 16) }

// F32ToBF16 returns the bfloat16 number nearest to f, ties to even, as
// hardware and PyTorch round (truncation, which several Go packages do, is
// biased toward zero). Values at or above the midpoint between the largest
// bfloat16 and 2^128, MaxFloat32 included, become ±Inf. A NaN stays a NaN:
// its top payload bits are kept and the quiet bit is set, so rounding can
// never carry it into an Inf.
func F32ToBF16(f float32) uint16 {
	u := math.Float32bits(f)
	if u&0x7fffffff > 0x7f800000 {
		return uint16(u>>16) | 0x40
	}
	u += 0x7fff + (u>>16)&1
	return uint16(u >> 16)
}
