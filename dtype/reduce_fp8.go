package dtype

import "sync"

// fp8 kernels. As for fp16 and bf16 (reduce_half.go), each binary operation
// widens both operands to float32, combines them in float32 and rounds the
// result back, once (F32ToF8E4M3, F32ToF8E5M2: nearest-even, saturating).
// float32's 24 bits are more than 2*4+2, so the float32 sum, product, max
// or min rounded to fp8 is the correctly rounded fp8 operation.
//
// With 256 values per operand, every (a, b) pair has its result in a
// table of 64 KiB per (format, op), built from those rules on first use;
// a kernel is then one load per element.

// f8OpTable holds op(a, b) at index a<<8 | b.
type f8OpTable [1 << 16]uint8

// f8Tables holds one table per format (0 for E4M3, 1 for E5M2) and op,
// each built on first use: a table takes about 3 ms to build, which a
// process that never reduces fp8 need not pay, and only the ops a run
// uses take cache. It is a package-level variable rather than set by an
// init function, so that it is ready before the kernel tables
// (portableReducers) that capture it.
var f8Tables = makeF8Tables()

// makeF8Tables returns the builders of f8Tables.
func makeF8Tables() (t [2][Min + 1]func() *f8OpTable) {
	ops := [...]func(x, y float32) float32{
		Sum:  func(x, y float32) float32 { return x + y },
		Prod: func(x, y float32) float32 { return x * y },
		Max:  func(x, y float32) float32 { return max(x, y) },
		Min:  func(x, y float32) float32 { return min(x, y) },
	}
	for fi, dt := range [...]DType{F8E4M3, F8E5M2} {
		for op := Sum; op <= Min; op++ {
			t[fi][op] = sync.OnceValue(func() *f8OpTable {
				tbl := new(f8OpTable)
				for a := range 256 {
					x := f8ToF32(dt, uint8(a))
					for b := range 256 {
						tbl[a<<8|b] = f32ToF8(dt, ops[op](x, f8ToF32(dt, uint8(b))))
					}
				}
				return tbl
			})
		}
	}
	return t
}

// f32ToF8 narrows f to fp8 type dt.
func f32ToF8(dt DType, f float32) uint8 {
	if dt == F8E4M3 {
		return F32ToF8E4M3(f)
	}
	return F32ToF8E5M2(f)
}

// f8Kernel returns the kernel of op (Sum, Prod, Max or Min) on fp8 type dt.
func f8Kernel(dt DType, op ReduceOp) ReduceFunc {
	fi := 0
	if dt == F8E5M2 {
		fi = 1
	}
	table := f8Tables[fi][op]
	return func(dst, a, b []byte) {
		if len(a) < len(dst) || len(b) < len(dst) {
			badLength(len(dst), min(len(a), len(b)), 1)
		}
		tbl := table()
		a, b = a[:len(dst)], b[:len(dst)]
		for i := range dst {
			dst[i] = tbl[uint16(a[i])<<8|uint16(b[i])]
		}
	}
}
