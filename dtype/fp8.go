package dtype

import "math"

// OCP 8-bit floating point (OFP8, the Open Compute Project's "OCP 8-bit
// Floating Point Specification", 2023): the two formats nccl-tests sweeps.
//
//	        bias  largest finite      smallest subnormal  Inf         NaN
//	E4M3     7    0x7e = 448          0x01 = 2^-9         none        0x7f, 0xff
//	E5M2    15    0x7b = 57344        0x01 = 2^-16        0x7c, 0xfc  0x7d..0x7f, 0xfd..0xff
//
// Widening to float32 is exact. Narrowing from float32 rounds to nearest,
// ties to even, subnormals included, and saturates: a value whose rounding
// would exceed the largest finite number, an infinity included, becomes the
// largest finite number of its sign. That is the conversion nccl-tests'
// fp8 arithmetic goes through (CUDA's __nv_cvt_float_to_fp8 with
// __NV_SATFINITE, the mode of __nv_fp8_e4m3's and __nv_fp8_e5m2's
// constructors, and the PTX cvt.rn.satfinite that implements it on the
// GPU), so a reduction that overflows gives the same bits here as there.
// The OCP specification leaves the choice between saturating and not to the
// implementation; we take the one the GPUs nccl-tests runs on take. E4M3
// has no infinity anyway, and without saturation its overflow would be a
// NaN. A NaN becomes the canonical NaN 0x7f in both formats, its sign and
// payload dropped, as CUDA's conversion does.

// The two formats' decoding tables: 256 entries each, exact.
var (
	f8e4m3ToF32Table [256]float32
	f8e5m2ToF32Table [256]float32
)

func init() {
	for b := range 256 {
		f8e4m3ToF32Table[b] = f8Decode(uint8(b), e4m3)
		f8e5m2ToF32Table[b] = f8Decode(uint8(b), e5m2)
	}
}

// f8Format is the layout of one fp8 format.
type f8Format struct {
	mant    uint  // mantissa bits
	bias    int   // exponent bias
	maxCode uint8 // largest finite magnitude
	hasInf  bool  // E5M2: the code above maxCode is Inf
}

// f8NaN is the NaN that narrowing gives, in both formats.
const f8NaN = 0x7f

var (
	e4m3 = &f8Format{mant: 3, bias: 7, maxCode: 0x7e}
	e5m2 = &f8Format{mant: 2, bias: 15, maxCode: 0x7b, hasInf: true}
)

// f8Decode returns the value of code b in format f, from its fields.
func f8Decode(b uint8, f *f8Format) float32 {
	sign := float32(1)
	if b&0x80 != 0 {
		sign = -1
	}
	mag := b & 0x7f
	if mag > f.maxCode {
		if f.hasInf && mag == f.maxCode+1 {
			return sign * float32(math.Inf(1))
		}
		return float32(math.NaN())
	}
	exp := int(mag >> f.mant)
	frac := float64(mag & (1<<f.mant - 1))
	if exp == 0 { // subnormal: frac × 2^(1-bias-mant)
		return sign * float32(math.Ldexp(frac, 1-f.bias-int(f.mant)))
	}
	return sign * float32(math.Ldexp(1+frac/float64(uint(1)<<f.mant), exp-f.bias))
}

// f8Encode rounds f to format ft: nearest, ties to even, saturating.
func f8Encode(f float32, ft *f8Format) uint8 {
	u := math.Float32bits(f)
	sign := uint8(u>>24) & 0x80
	a := u & 0x7fffffff
	if a > 0x7f800000 {
		return f8NaN
	}
	// Scale |f| so that one unit in the last place of the fp8 result is 1:
	// below the smallest normal that unit is the subnormal step, above it
	// 2^(e - mant) for f's exponent e. float64 holds every scaled float32
	// exactly, and RoundToEven then rounds as the format does; a carry
	// into the next binade (mantissa all ones rounding up) lands on the
	// right code because codes are monotonic in magnitude.
	v := float64(math.Float32frombits(a))
	if v == 0 || math.IsInf(v, 1) {
		if v == 0 {
			return sign
		}
		return sign | ft.maxCode
	}
	minExp := 1 - ft.bias // exponent of the smallest normal
	_, e := math.Frexp(v) // v = m × 2^e, m in [0.5, 1)
	e--                   // v = 1.x × 2^e
	if e < minExp {
		e = minExp
	}
	q := math.RoundToEven(math.Ldexp(v, int(ft.mant)-e)) // in [0, 2^(mant+1)]
	var code uint64
	if e == minExp && q < float64(uint(1)<<ft.mant) {
		code = uint64(q) // subnormal (or zero)
	} else {
		// q = 2^mant + fraction, or 2^(mant+1) after a carry.
		code = uint64(e+ft.bias)<<ft.mant + uint64(q) - 1<<ft.mant
	}
	if code > uint64(ft.maxCode) {
		code = uint64(ft.maxCode)
	}
	return sign | uint8(code)
}

// F8E4M3ToF32 returns the value of the OCP FP8 E4M3 number with bits b.
// The conversion is exact; 0x7f and 0xff are NaN.
func F8E4M3ToF32(b uint8) float32 { return f8e4m3ToF32Table[b] }

// F8E5M2ToF32 returns the value of the OCP FP8 E5M2 number with bits b.
// The conversion is exact.
func F8E5M2ToF32(b uint8) float32 { return f8e5m2ToF32Table[b] }

// F32ToF8E4M3 returns the E4M3 number nearest to f, ties to even.
// Magnitudes above 464 (the midpoint between 448 and the 480 that E4M3
// spends on NaN), infinities included, saturate to ±448; a NaN becomes
// 0x7f.
func F32ToF8E4M3(f float32) uint8 { return f8Encode(f, e4m3) }

// F32ToF8E5M2 returns the E5M2 number nearest to f, ties to even.
// Magnitudes of 61440 (the midpoint between 57344 and 65536) and above,
// infinities included, saturate to ±57344; a NaN becomes 0x7f.
func F32ToF8E5M2(f float32) uint8 { return f8Encode(f, e5m2) }

// f64ToF8 rounds v to the nearest fp8 of format dt, ties to even, with one
// rounding: rounding to odd in float32 first keeps the result of the
// second rounding correct (see roundToOddF32), as 24 bits are more than
// two beyond fp8's 4.
func f64ToF8(dt DType, v float64) uint8 {
	if dt == F8E4M3 {
		return F32ToF8E4M3(roundToOddF32(v))
	}
	return F32ToF8E5M2(roundToOddF32(v))
}

// f8ToF32 widens an fp8 element of type dt.
func f8ToF32(dt DType, b uint8) float32 {
	if dt == F8E4M3 {
		return f8e4m3ToF32Table[b]
	}
	return f8e5m2ToF32Table[b]
}
