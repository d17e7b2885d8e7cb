package dtype

import "math"

// Half-precision kernels. Go has no 16-bit float type, so fp16 and bf16
// reduce by widening to float32, combining and rounding back to
// nearest-even: one rounding per binary operation. For sum, prod, max and
// min of two 16-bit values float32 has enough precision (24 >= 2*11+2 bits)
// that the float32 result rounded to 16 bits equals the correctly rounded
// 16-bit operation.
//
// The kernels go one element at a time, with decode, operation and encode
// inlined into one loop. Decoding blocks of 256 elements of a and b into
// float32 arrays, combining those with the unrolled float32 kernel and
// encoding back was measured too (BenchmarkHalfLayout keeps it) and lost at
// 64 MiB and at 1 MiB alike: fp16 sum 0.36–0.42 GB/s against 0.64–0.77 GB/s
// one element at a time, bf16 0.32–0.47 against 0.57–0.78 GB/s (a shared
// 2-vCPU machine, 3 runs each; the ratio of about 1.7 held in every run).
// The block layout sends every element through the stack arrays three
// times, where the single loop keeps it in registers. A method call on a
// type parameter is not inlined, so each (format, op) pair is spelled out
// rather than generic.
//
// Every element of a and b is read before the element of dst with the same
// index is written, so dst may alias a or b.

// halfViews views dst, a and b as 16-bit elements of dst's length. It is
// not inlined, so the kernels cut x and y to len(d) again for the compiler
// to drop the bounds checks in their loops.
func halfViews(dst, a, b []byte) (d, x, y []uint16) {
	n := len(dst)
	return asSlice[uint16](dst, n), asSlice[uint16](a, n), asSlice[uint16](b, n)
}

// The fp16 loops spell out F32ToF16, which is too large to inline, as its
// inlinable common case plus an out-of-line call for the rest.

func f16Sum(dst, a, b []byte) {
	d, x, y := halfViews(dst, a, b)
	x, y = x[:len(d)], y[:len(d)]
	for i := range d {
		u := math.Float32bits(f16ToF32Table[x[i]] + f16ToF32Table[y[i]])
		if f16IsNormal(u) {
			d[i] = f16RoundNormal(u)
		} else {
			d[i] = f32ToF16Rare(u)
		}
	}
}

func f16Prod(dst, a, b []byte) {
	d, x, y := halfViews(dst, a, b)
	x, y = x[:len(d)], y[:len(d)]
	for i := range d {
		u := math.Float32bits(f16ToF32Table[x[i]] * f16ToF32Table[y[i]])
		if f16IsNormal(u) {
			d[i] = f16RoundNormal(u)
		} else {
			d[i] = f32ToF16Rare(u)
		}
	}
}

func f16Max(dst, a, b []byte) {
	d, x, y := halfViews(dst, a, b)
	x, y = x[:len(d)], y[:len(d)]
	for i := range d {
		u := math.Float32bits(max(f16ToF32Table[x[i]], f16ToF32Table[y[i]]))
		if f16IsNormal(u) {
			d[i] = f16RoundNormal(u)
		} else {
			d[i] = f32ToF16Rare(u)
		}
	}
}

func f16Min(dst, a, b []byte) {
	d, x, y := halfViews(dst, a, b)
	x, y = x[:len(d)], y[:len(d)]
	for i := range d {
		u := math.Float32bits(min(f16ToF32Table[x[i]], f16ToF32Table[y[i]]))
		if f16IsNormal(u) {
			d[i] = f16RoundNormal(u)
		} else {
			d[i] = f32ToF16Rare(u)
		}
	}
}

func bf16Sum(dst, a, b []byte) {
	d, x, y := halfViews(dst, a, b)
	x, y = x[:len(d)], y[:len(d)]
	for i := range d {
		d[i] = F32ToBF16(BF16ToF32(x[i]) + BF16ToF32(y[i]))
	}
}

func bf16Prod(dst, a, b []byte) {
	d, x, y := halfViews(dst, a, b)
	x, y = x[:len(d)], y[:len(d)]
	for i := range d {
		d[i] = F32ToBF16(BF16ToF32(x[i]) * BF16ToF32(y[i]))
	}
}

func bf16Max(dst, a, b []byte) {
	d, x, y := halfViews(dst, a, b)
	x, y = x[:len(d)], y[:len(d)]
	for i := range d {
		d[i] = F32ToBF16(max(BF16ToF32(x[i]), BF16ToF32(y[i])))
	}
}

func bf16Min(dst, a, b []byte) {
	d, x, y := halfViews(dst, a, b)
	x, y = x[:len(d)], y[:len(d)]
	for i := range d {
		d[i] = F32ToBF16(min(BF16ToF32(x[i]), BF16ToF32(y[i])))
	}
}
