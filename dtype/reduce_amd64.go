//go:build amd64

package dtype

import (
	"unsafe"

	"golang.org/x/sys/cpu"
)

// The AVX2 kernels live in reduce_amd64.s, generated with avo by
// internal/asmgen (go generate); reduce_amd64_stubs.go declares them. Each
// takes n bytes, a multiple of vecBytes, and computes exactly what the
// portable kernel of its (dtype, op) computes, NaN payloads included.
//
// Not every pair has one: AVX2 has no 8-bit or 64-bit multiply and no
// 64-bit integer max or min, so int8/uint8/int64/uint64 prod and
// int64/uint64 max and min stay portable.

// asmKernel is the signature of the generated kernels.
type asmKernel func(dst, a, b *byte, n int, nt bool)

const (
	// vecBytes is the granule of the assembly kernels: one YMM register.
	vecBytes = 32
	// chunkBytes bounds one call of an assembly kernel. Assembly cannot be
	// preempted, so a 64 MiB reduction in one call would hold off a
	// garbage collection's stop-the-world for milliseconds; between
	// chunks the Go loop can be preempted. A call per 256 KiB costs
	// nothing measurable.
	chunkBytes = 256 << 10
	// ntBytes is the length from which the kernels write with
	// non-temporal stores (see simd).
	ntBytes = 1 << 20
)

// simdTable returns the AVX2 kernels if the CPU and OS support AVX2, with
// the fp16 ones only if the CPU also has F16C (VCVTPH2PS and VCVTPS2PH),
// which x/sys/cpu reports. Entries without a SIMD kernel are nil. The
// kernels hand the tail of a buffer that does not fill a YMM register, and
// any call with invalid lengths, to the portable kernel in portable.
func simdTable(portable *kernelTable) (t kernelTable) {
	if !cpu.X86.HasAVX2 {
		return t
	}
	set := func(dt DType, op ReduceOp, k asmKernel) {
		t[dt][op] = simd(k, portable[dt][op], dt.Size())
		if op == Sum {
			t[dt][Avg], t[dt][MulSum] = t[dt][Sum], t[dt][Sum]
		}
	}
	for _, dt := range []DType{Int8, Uint8} {
		set(dt, Sum, sum8AVX2)
	}
	for _, dt := range []DType{Int16, Uint16} {
		set(dt, Sum, sum16AVX2)
		set(dt, Prod, prod16AVX2)
	}
	for _, dt := range []DType{Int32, Uint32} {
		set(dt, Sum, sum32AVX2)
		set(dt, Prod, prod32AVX2)
	}
	for _, dt := range []DType{Int64, Uint64} {
		set(dt, Sum, sum64AVX2)
	}
	set(Int8, Max, maxInt8AVX2)
	set(Int8, Min, minInt8AVX2)
	set(Uint8, Max, maxUint8AVX2)
	set(Uint8, Min, minUint8AVX2)
	set(Int16, Max, maxInt16AVX2)
	set(Int16, Min, minInt16AVX2)
	set(Uint16, Max, maxUint16AVX2)
	set(Uint16, Min, minUint16AVX2)
	set(Int32, Max, maxInt32AVX2)
	set(Int32, Min, minInt32AVX2)
	set(Uint32, Max, maxUint32AVX2)
	set(Uint32, Min, minUint32AVX2)

	set(FP32, Sum, sumFP32AVX2)
	set(FP32, Prod, prodFP32AVX2)
	set(FP32, Max, maxFP32AVX2)
	set(FP32, Min, minFP32AVX2)
	set(FP64, Sum, sumFP64AVX2)
	set(FP64, Prod, prodFP64AVX2)
	set(FP64, Max, maxFP64AVX2)
	set(FP64, Min, minFP64AVX2)
	set(BF16, Sum, sumBF16AVX2)
	set(BF16, Prod, prodBF16AVX2)
	set(BF16, Max, maxBF16AVX2)
	set(BF16, Min, minBF16AVX2)
	if cpu.X86.HasF16C {
		set(FP16, Sum, sumFP16AVX2)
		set(FP16, Prod, prodFP16AVX2)
		set(FP16, Max, maxFP16AVX2)
		set(FP16, Min, minFP16AVX2)
	}
	return t
}

// simd makes a ReduceFunc of the assembly kernel k: k runs on the largest
// multiple of vecBytes, in chunks of chunkBytes, and the portable kernel on
// the rest. Lengths that the portable kernel would reject go to it whole,
// so that it panics with its usual message before k reads anything.
//
// From ntBytes on, k writes with non-temporal stores, as the runtime's
// memmove (and so copy, the benchmarks' yardstick) does from the same size.
// Writing around the caches saves reading each dst line in before it is
// overwritten: fp32 sum went from about 0.5 to 0.67 of copy's speed at
// 64 MiB and from about 0.6 to 0.9 at 1 MiB. The price is that the result
// is not in the cache for whoever reads it next. Those stores need a
// 32-byte aligned dst, so the portable kernel takes the elements before the
// first aligned address; dst is aligned to the element size, a power of
// two no larger than vecBytes, so they are whole elements (if the caller
// broke that rule, the portable kernel panics).
func simd(k asmKernel, portable ReduceFunc, size int) ReduceFunc {
	return func(dst, a, b []byte) {
		n := len(dst)
		if n%size != 0 || n > len(a) || n > len(b) {
			portable(dst, a, b)
			return
		}
		nt := n >= ntBytes
		if nt {
			if h := int(-uintptr(unsafe.Pointer(unsafe.SliceData(dst)))) & (vecBytes - 1); h > 0 {
				portable(dst[:h], a[:h], b[:h])
				dst, a, b = dst[h:], a[h:], b[h:]
				n -= h
			}
		}
		m := n &^ (vecBytes - 1)
		for off := 0; off < m; off += chunkBytes {
			k(&dst[off], &a[off], &b[off], min(chunkBytes, m-off), nt)
		}
		if m < n {
			portable(dst[m:n], a[m:n], b[m:n])
		}
	}
}
