package dtype

import (
	"fmt"
	"os"
	"unsafe"
)

// ReduceFunc combines two buffers element-wise: dst[i] = op(a[i], b[i]) for
// every element in dst. len(dst) must be a multiple of the element size and
// len(a), len(b) >= len(dst); only the first len(dst) bytes of a and b are
// read. dst may be exactly the same slice as a or as b (an in-place
// reduction); any other overlap gives unspecified results. Buffers must be
// aligned to the element size, which heap-allocated []byte (8-byte aligned)
// and sub-slices at multiples of the element size are.
//
// A ReduceFunc keeps no state, so concurrent calls on disjoint buffers are
// safe.
type ReduceFunc func(dst, a, b []byte)

//go:generate go run ./internal/asmgen -out reduce_amd64.s -stubs reduce_amd64_stubs.go -pkg dtype

// kernelTable holds one kernel per (dtype, op), indexed [dtype][op].
type kernelTable [lastDType + 1][lastOp + 1]ReduceFunc

// KernelsEnv is the environment variable that picks the kernels, read once
// when the package is initialized: "portable" makes Reducer return the
// portable Go kernels even where SIMD kernels exist; unset or "auto" gives
// the fastest kernels the CPU supports. A command refuses any other value
// before it runs (CheckKernels); the package, which cannot refuse at
// initialization, takes it as auto.
const KernelsEnv = "HCCL_TEST_KERNELS"

// CheckKernels checks v, a value of KernelsEnv: "", "auto" or "portable".
func CheckKernels(v string) error {
	switch v {
	case "", "auto", "portable":
		return nil
	}
	return fmt.Errorf("%s=%q: want portable (the portable Go kernels) or auto (the fastest this CPU runs, as when unset)", KernelsEnv, v)
}

var (
	// portableReducers holds the portable Go kernels, complete on every
	// platform. Tests and benchmarks compare the SIMD kernels with it.
	portableReducers = portableTable()
	// simdReducers holds the SIMD kernels that this CPU can run (see
	// reduce_amd64.go), nil where there is none.
	simdReducers = simdTable(&portableReducers)
	// reducers is the table Reducer serves.
	reducers = chooseKernels(os.Getenv(KernelsEnv))
)

// chooseKernels returns the portable table overlaid with the SIMD kernels,
// or the portable table alone if env is "portable".
func chooseKernels(env string) kernelTable {
	t := portableReducers
	if env == "portable" {
		return t
	}
	for dt := range simdReducers {
		for op, k := range simdReducers[dt] {
			if k != nil {
				t[dt][op] = k
			}
		}
	}
	return t
}

// portableTable returns the portable Go kernels. Avg and MulSum use the
// Sum kernel.
func portableTable() (t kernelTable) {
	set := func(dt DType, sum, prod, max, min ReduceFunc) {
		t[dt] = [lastOp + 1]ReduceFunc{Sum: sum, Prod: prod, Max: max, Min: min, Avg: sum, MulSum: sum}
	}
	set(Int8, viewed(sumKernel[int8]), viewed(prodKernel[int8]), viewed(maxKernel[int8]), viewed(minKernel[int8]))
	set(Uint8, viewed(sumKernel[uint8]), viewed(prodKernel[uint8]), viewed(maxKernel[uint8]), viewed(minKernel[uint8]))
	set(Int16, viewed(sumKernel[int16]), viewed(prodKernel[int16]), viewed(maxKernel[int16]), viewed(minKernel[int16]))
	set(Uint16, viewed(sumKernel[uint16]), viewed(prodKernel[uint16]), viewed(maxKernel[uint16]), viewed(minKernel[uint16]))
	set(Int32, viewed(sumKernel[int32]), viewed(prodKernel[int32]), viewed(maxKernel[int32]), viewed(minKernel[int32]))
	set(Uint32, viewed(sumKernel[uint32]), viewed(prodKernel[uint32]), viewed(maxKernel[uint32]), viewed(minKernel[uint32]))
	set(Int64, viewed(sumKernel[int64]), viewed(prodKernel[int64]), viewed(maxKernel[int64]), viewed(minKernel[int64]))
	set(Uint64, viewed(sumKernel[uint64]), viewed(prodKernel[uint64]), viewed(maxKernel[uint64]), viewed(minKernel[uint64]))
	set(FP32, viewed(sumKernel[float32]), viewed(prodKernel[float32]), viewed(maxKernel[float32]), viewed(minKernel[float32]))
	set(FP64, viewed(sumKernel[float64]), viewed(prodKernel[float64]), viewed(maxKernel[float64]), viewed(minKernel[float64]))
	set(FP16, f16Sum, f16Prod, f16Max, f16Min)
	set(BF16, bf16Sum, bf16Prod, bf16Max, bf16Min)
	for _, dt := range []DType{F8E4M3, F8E5M2} {
		set(dt, f8Kernel(dt, Sum), f8Kernel(dt, Prod), f8Kernel(dt, Max), f8Kernel(dt, Min))
	}
	return t
}

// Reducer returns the kernel that applies op to elements of type dt. For Avg
// it returns the Sum kernel: the caller sums all contributions and then calls
// DivideBy once. For MulSum it returns the Sum kernel too: the caller
// multiplies each rank's input by its scalar first (PreMultiply). The lookup is a table index, cheap enough to do per call,
// but callers usually fetch the kernel once per collective. Reducer panics if
// dt or op is invalid.
//
// On amd64 CPUs with AVX2 (and F16C for fp16) most kernels are SIMD
// assembly; they give the same results as the portable Go kernels bit for
// bit. Setting the environment variable HCCL_TEST_KERNELS=portable before
// the program starts makes Reducer return the portable kernels everywhere.
func Reducer(dt DType, op ReduceOp) ReduceFunc {
	if !dt.Valid() || !op.Valid() {
		panic(fmt.Sprintf("dtype.Reducer: invalid combination %v/%v", dt, op))
	}
	return reducers[dt][op]
}

// native lists the element types that Go has as basic types.
type native interface {
	~int8 | ~uint8 | ~int16 | ~uint16 | ~int32 | ~uint32 |
		~int64 | ~uint64 | ~float32 | ~float64
}

// asSlice views the first n bytes of b as a []T without copying. b must be
// aligned for T and n a multiple of its size.
func asSlice[T native](b []byte, n int) []T {
	size := int(unsafe.Sizeof(*new(T)))
	if n%size != 0 || n > len(b) {
		badLength(n, len(b), size)
	}
	return unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(b))), n/size)
}

// badLength panics for asSlice, out of line.
func badLength(n, have, size int) {
	if n > have {
		panic(fmt.Sprintf("dtype: operand of %d bytes is shorter than dst's %d", have, n))
	}
	panic(fmt.Sprintf("dtype: buffer of %d bytes is not a whole number of %d-byte elements", n, size))
}

// viewed type-erases a typed kernel into a ReduceFunc.
func viewed[T native](k func(dst, a, b []T)) ReduceFunc {
	return func(dst, a, b []byte) {
		n := len(dst)
		k(asSlice[T](dst, n), asSlice[T](a, n), asSlice[T](b, n))
	}
}

// The typed kernels below share one shape: eight elements per iteration
// through array pointers, so the body has no bounds checks, then a scalar
// tail. Each element is read before it is written, so dst may alias a or b.
// Go does not vectorize; the unrolling only removes loop overhead (golibs
// §4.2 measured 30–45% of copy() bandwidth for fp32 sum).

// sumKernel computes dst[i] = a[i] + b[i]; integers wrap.
func sumKernel[T native](dst, a, b []T) {
	a, b = a[:len(dst)], b[:len(dst)]
	for len(dst) >= 8 && len(a) >= 8 && len(b) >= 8 {
		d, x, y := (*[8]T)(dst), (*[8]T)(a), (*[8]T)(b)
		d[0], d[1], d[2], d[3] = x[0]+y[0], x[1]+y[1], x[2]+y[2], x[3]+y[3]
		d[4], d[5], d[6], d[7] = x[4]+y[4], x[5]+y[5], x[6]+y[6], x[7]+y[7]
		dst, a, b = dst[8:], a[8:], b[8:]
	}
	for i := range dst {
		dst[i] = a[i] + b[i]
	}
}

// prodKernel computes dst[i] = a[i] * b[i]; integers wrap.
func prodKernel[T native](dst, a, b []T) {
	a, b = a[:len(dst)], b[:len(dst)]
	for len(dst) >= 8 && len(a) >= 8 && len(b) >= 8 {
		d, x, y := (*[8]T)(dst), (*[8]T)(a), (*[8]T)(b)
		d[0], d[1], d[2], d[3] = x[0]*y[0], x[1]*y[1], x[2]*y[2], x[3]*y[3]
		d[4], d[5], d[6], d[7] = x[4]*y[4], x[5]*y[5], x[6]*y[6], x[7]*y[7]
		dst, a, b = dst[8:], a[8:], b[8:]
	}
	for i := range dst {
		dst[i] = a[i] * b[i]
	}
}

// maxKernel computes dst[i] = max(a[i], b[i]) with Go's built-in max: a
// NaN in either operand gives NaN, and max(-0, +0) is +0.
func maxKernel[T native](dst, a, b []T) {
	a, b = a[:len(dst)], b[:len(dst)]
	for len(dst) >= 8 && len(a) >= 8 && len(b) >= 8 {
		d, x, y := (*[8]T)(dst), (*[8]T)(a), (*[8]T)(b)
		d[0], d[1], d[2], d[3] = max(x[0], y[0]), max(x[1], y[1]), max(x[2], y[2]), max(x[3], y[3])
		d[4], d[5], d[6], d[7] = max(x[4], y[4]), max(x[5], y[5]), max(x[6], y[6]), max(x[7], y[7])
		dst, a, b = dst[8:], a[8:], b[8:]
	}
	for i := range dst {
		dst[i] = max(a[i], b[i])
	}
}

// minKernel computes dst[i] = min(a[i], b[i]) with Go's built-in min: a
// NaN in either operand gives NaN, and min(-0, +0) is -0.
func minKernel[T native](dst, a, b []T) {
	a, b = a[:len(dst)], b[:len(dst)]
	for len(dst) >= 8 && len(a) >= 8 && len(b) >= 8 {
		d, x, y := (*[8]T)(dst), (*[8]T)(a), (*[8]T)(b)
		d[0], d[1], d[2], d[3] = min(x[0], y[0]), min(x[1], y[1]), min(x[2], y[2]), min(x[3], y[3])
		d[4], d[5], d[6], d[7] = min(x[4], y[4]), min(x[5], y[5]), min(x[6], y[6]), min(x[7], y[7])
		dst, a, b = dst[8:], a[8:], b[8:]
	}
	for i := range dst {
		dst[i] = min(a[i], b[i])
	}
}

// DivideBy finishes an Avg reduction in place: every element x of buf, read
// as type dt, becomes x/n. Integers use Go's integer division on the
// (wrapped) sum, so the quotient is truncated toward zero. Floats become
// float64(x)/float64(n) rounded to nearest-even in dt. len(buf) must be a
// multiple of dt.Size(); DivideBy panics if n < 1 or dt is invalid.
func DivideBy(dt DType, buf []byte, n int) {
	if n < 1 {
		panic(fmt.Sprintf("dtype.DivideBy: divisor %d < 1", n))
	}
	switch dt {
	case Int8:
		divInt(asSlice[int8](buf, len(buf)), n)
	case Uint8:
		divUint(asSlice[uint8](buf, len(buf)), n)
	case Int16:
		divInt(asSlice[int16](buf, len(buf)), n)
	case Uint16:
		divUint(asSlice[uint16](buf, len(buf)), n)
	case Int32:
		divInt(asSlice[int32](buf, len(buf)), n)
	case Uint32:
		divUint(asSlice[uint32](buf, len(buf)), n)
	case Int64:
		divInt(asSlice[int64](buf, len(buf)), n)
	case Uint64:
		divUint(asSlice[uint64](buf, len(buf)), n)
	case FP16:
		h := asSlice[uint16](buf, len(buf))
		for i, x := range h {
			h[i] = f64ToF16(float64(F16ToF32(x)) / float64(n))
		}
	case BF16:
		h := asSlice[uint16](buf, len(buf))
		for i, x := range h {
			h[i] = f64ToBF16(float64(BF16ToF32(x)) / float64(n))
		}
	case F8E4M3, F8E5M2:
		for i, x := range buf {
			buf[i] = f64ToF8(dt, float64(f8ToF32(dt, x))/float64(n))
		}
	case FP32:
		f := asSlice[float32](buf, len(buf))
		for i, x := range f {
			f[i] = float32(float64(x) / float64(n))
		}
	case FP64:
		f := asSlice[float64](buf, len(buf))
		for i, x := range f {
			f[i] = x / float64(n)
		}
	default:
		panic(fmt.Sprintf("dtype.DivideBy: invalid type %v", dt))
	}
}

// divInt divides in int64 so that n need not fit in T; the quotient's
// magnitude is at most |x|, so it always fits back.
func divInt[T ~int8 | ~int16 | ~int32 | ~int64](x []T, n int) {
	d := int64(n)
	for i, v := range x {
		x[i] = T(int64(v) / d)
	}
}

// divUint is divInt for unsigned types.
func divUint[T ~uint8 | ~uint16 | ~uint32 | ~uint64](x []T, n int) {
	d := uint64(n)
	for i, v := range x {
		x[i] = T(uint64(v) / d)
	}
}
