package dtype

import (
	"encoding/binary"
	"fmt"
	"math"
)

// byteOrder is the layout of elements in buffers: the machine's own, so that
// Encode and Decode agree with the kernels' unsafe []T views. Every platform
// the harness targets (amd64, arm64) is little-endian.
var byteOrder = binary.NativeEndian

// Encode stores v as element i of buf, which holds elements of type dt.
// Integer types take int64(v) (uint64(v) for v >= 2^63 in the unsigned ones)
// and keep its low bits, so values outside the type's range but inside
// int64 or uint64 wrap (300 stores 44 in a uint8); NaN, ±Inf and larger
// values have no defined integer result. Float types get v rounded to
// nearest, ties to even. For fp16, bf16 and fp8 that is one correct
// rounding of the float64, not the two of float32(v) then 16 or 8 bits
// (which can differ on near-ties); exact values such as Pattern's are
// unaffected either way. fp8 saturates to its largest finite value, and
// stores a NaN as 0x7f (see F32ToF8E4M3).
// Encode panics if element i does not fit in buf or dt is invalid.
func Encode(dt DType, buf []byte, i int, v float64) {
	s := dt.Size()
	if s == 0 {
		panic(fmt.Sprintf("dtype.Encode: invalid type %v", dt))
	}
	e := buf[i*s : i*s+s]
	switch dt {
	case Int8, Uint8:
		e[0] = byte(floatToBits(v))
	case Int16, Uint16:
		byteOrder.PutUint16(e, uint16(floatToBits(v)))
	case Int32, Uint32:
		byteOrder.PutUint32(e, uint32(floatToBits(v)))
	case Int64, Uint64:
		byteOrder.PutUint64(e, floatToBits(v))
	case FP16:
		byteOrder.PutUint16(e, f64ToF16(v))
	case BF16:
		byteOrder.PutUint16(e, f64ToBF16(v))
	case FP32:
		byteOrder.PutUint32(e, math.Float32bits(float32(v)))
	case FP64:
		byteOrder.PutUint64(e, math.Float64bits(v))
	case F8E4M3, F8E5M2:
		e[0] = f64ToF8(dt, v)
	}
}

// Decode returns element i of buf, which holds elements of type dt, as a
// float64. The result is exact except for 64-bit integers beyond ±2^53,
// which are rounded to nearest. Decode panics if element i does not fit in
// buf or dt is invalid.
func Decode(dt DType, buf []byte, i int) float64 {
	s := dt.Size()
	if s == 0 {
		panic(fmt.Sprintf("dtype.Decode: invalid type %v", dt))
	}
	e := buf[i*s : i*s+s]
	switch dt {
	case Int8:
		return float64(int8(e[0]))
	case Uint8:
		return float64(e[0])
	case Int16:
		return float64(int16(byteOrder.Uint16(e)))
	case Uint16:
		return float64(byteOrder.Uint16(e))
	case Int32:
		return float64(int32(byteOrder.Uint32(e)))
	case Uint32:
		return float64(byteOrder.Uint32(e))
	case Int64:
		return float64(int64(byteOrder.Uint64(e)))
	case Uint64:
		return float64(byteOrder.Uint64(e))
	case FP16:
		return float64(F16ToF32(byteOrder.Uint16(e)))
	case BF16:
		return float64(BF16ToF32(byteOrder.Uint16(e)))
	case FP32:
		return float64(math.Float32frombits(byteOrder.Uint32(e)))
	case F8E4M3, F8E5M2:
		return float64(f8ToF32(dt, e[0]))
	default: // FP64
		return math.Float64frombits(byteOrder.Uint64(e))
	}
}

// floatToBits converts v to a 64-bit two's complement pattern: int64(v) for
// the signed range, uint64(v) above it (Go leaves the conversion of an
// out-of-range float implementation-defined, so pick the range explicitly).
func floatToBits(v float64) uint64 {
	if v >= 1<<63 {
		return uint64(v)
	}
	return uint64(int64(v))
}

// roundFloat returns v rounded to nearest-even in the float type dt.
func roundFloat(dt DType, v float64) float64 {
	switch dt {
	case FP16:
		return float64(F16ToF32(f64ToF16(v)))
	case BF16:
		return float64(BF16ToF32(f64ToBF16(v)))
	case FP32:
		return float64(float32(v))
	case F8E4M3, F8E5M2:
		return float64(f8ToF32(dt, f64ToF8(dt, v)))
	}
	return v
}

// f64ToF16 rounds v to the nearest binary16, ties to even.
func f64ToF16(v float64) uint16 { return F32ToF16(roundToOddF32(v)) }

// f64ToBF16 rounds v to the nearest bfloat16, ties to even.
func f64ToBF16(v float64) uint16 { return F32ToBF16(roundToOddF32(v)) }

// roundToOddF32 rounds v to float32, choosing of the two float32 neighbours
// of an inexact v the one with an odd mantissa. Rounding to odd at a
// precision at least two bits beyond the target's and then to nearest-even
// equals one direct rounding to nearest-even (Boldo and Melquiond), so
// float64 -> odd float32 -> fp16/bf16 has no double-rounding error, which
// plain float32(v) would have on ties.
func roundToOddF32(v float64) float32 {
	f := float32(v)
	if float64(f) == v || v != v {
		return f
	}
	u := math.Float32bits(f)
	if u&1 == 0 {
		// f is the even neighbour; the odd one lies one step toward v.
		// Magnitude bits are monotonic, so a step is ±1 on them.
		if math.Abs(v) > math.Abs(float64(f)) {
			u++
		} else {
			u--
		}
	}
	return math.Float32frombits(u)
}
