package dtype

import (
	"fmt"
	"math"
	"slices"
	"testing"
	"time"
)

// Benchmarks report message bytes per second (b.SetBytes(len(dst))), as
// nccl-tests' algbw does, for the kernels and for copy alike, so that their
// MB/s compare directly. dst = op(a, b) reads two buffers and writes one:
// at least three times len(dst) through memory (four if writing dst reads
// its lines in first), where copy(dst, a) moves twice len(dst). From 1 MiB
// both copy and the SIMD kernels write around the caches, so at 64 MiB,
// where both wait on memory, a kernel tops out near 2/3 of copy's MB/s:
// the ratio of the bytes moved, 2 against 3.
//
// BenchmarkReduce and BenchmarkReduce1MiB run every kernel as
// <dtype>/<op>/impl=simd (the SIMD kernel, where this CPU has one) and
// <dtype>/<op>/impl=portable (the portable Go kernel); Reducer returns the
// former unless HCCL_TEST_KERNELS=portable. Each also times copy(dst, a)
// on the same buffers, alternating with the kernel, and reports the
// kernel's speed over copy's as the copy-ratio metric (copyRatio): on a
// shared, noisy machine that is steadier than comparing with BenchmarkCopy
// run at another moment. It also reports traffic-ratio, the same ratio
// counted as STREAM counts its Add and Copy kernels, in bytes through
// memory (3 per byte of dst for the kernel, 2 for copy): how close the
// kernel comes to the memory rate copy reaches, which the 2/3 above does
// not bound. Avg is left out: it runs the Sum kernel.

const (
	bigSize   = 64 << 20 // far beyond the caches
	smallSize = 1 << 20  // the three buffers fit in the last-level cache
)

// benchBufs holds the dst, a and b buffers per size, allocated once.
var benchBufs = map[int][3][]byte{}

// buffers returns dst, a and b of size bytes, with a and b holding a Sum
// pattern of dt (ordinary finite values, so the half-precision encoder
// takes its common branch). dst is written once so that its pages are
// mapped before any timing.
func buffers(dt DType, size int) (dst, a, b []byte) {
	bufs, ok := benchBufs[size]
	if !ok {
		bufs = [3][]byte{make([]byte, size), make([]byte, size), make([]byte, size)}
		clear(bufs[0])
		benchBufs[size] = bufs
	}
	p := Pattern{dt, Sum, 2}
	p.Fill(bufs[1], 0, 0)
	p.Fill(bufs[2], 1, 0)
	return bufs[0], bufs[1], bufs[2]
}

// impl is one implementation of a kernel under benchmark.
type impl struct {
	name string
	red  ReduceFunc
}

// impls returns the SIMD kernel for dt and op, if this CPU has one, and the
// portable one.
func impls(dt DType, op ReduceOp) []impl {
	var out []impl
	if k := simdReducers[dt][op]; k != nil {
		out = append(out, impl{"simd", k})
	}
	return append(out, impl{"portable", portableReducers[dt][op]})
}

func benchReduce(b *testing.B, size int) {
	for _, dt := range All() {
		for _, op := range []ReduceOp{Sum, Prod, Max, Min} {
			for _, im := range impls(dt, op) {
				b.Run(fmt.Sprintf("%v/%v/impl=%s", dt, op, im.name), func(b *testing.B) {
					dst, x, y := buffers(dt, size)
					im.red(dst, x, y) // warm up: caches, TLB
					b.SetBytes(int64(len(dst)))
					for b.Loop() {
						im.red(dst, x, y)
					}
					r := copyRatio(b.N, func() { im.red(dst, x, y) }, dst, x)
					b.ReportMetric(r, "copy-ratio")
					b.ReportMetric(r*kernelTraffic/copyTraffic, "traffic-ratio")
				})
			}
		}
	}
}

// kernelTraffic and copyTraffic are the bytes each moves through memory
// per byte of dst, as STREAM counts them: a kernel reads a and b and
// writes dst, copy reads a and writes dst.
const (
	kernelTraffic = 3
	copyTraffic   = 2
)

// copyRatio runs kernel and copy(dst, src) alternately n times (at most
// 50) and returns the median of copy's time over the kernel's: the
// kernel's speed as a fraction of copy's in the MB/s the benchmarks report.
// Each pair runs within milliseconds, so a neighbour's load on a shared
// machine hits both sides of most ratios alike.
func copyRatio(n int, kernel func(), dst, src []byte) float64 {
	ratios := make([]float64, min(n, 50))
	for i := range ratios {
		t0 := time.Now()
		kernel()
		t1 := time.Now()
		copy(dst, src)
		ratios[i] = float64(time.Since(t1)) / float64(t1.Sub(t0))
	}
	slices.Sort(ratios)
	return ratios[len(ratios)/2]
}

func benchCopy(b *testing.B, size int) {
	dst, x, _ := buffers(Uint8, size)
	copy(dst, x)
	b.SetBytes(int64(len(dst)))
	for b.Loop() {
		copy(dst, x)
	}
}

// BenchmarkReduce runs every kernel as dst = op(a, b) on 64 MiB buffers.
func BenchmarkReduce(b *testing.B) { benchReduce(b, bigSize) }

// BenchmarkReduce1MiB is BenchmarkReduce on 1 MiB buffers, which fit in
// the last-level cache.
func BenchmarkReduce1MiB(b *testing.B) { benchReduce(b, smallSize) }

// BenchmarkCopy is copy(dst, a) on the 64 MiB buffers: the memory ceiling.
func BenchmarkCopy(b *testing.B) { benchCopy(b, bigSize) }

// BenchmarkCopy1MiB is copy(dst, a) on the 1 MiB buffers.
func BenchmarkCopy1MiB(b *testing.B) { benchCopy(b, smallSize) }

// blockHalfSum is the layout the half-precision kernels do not use: decode
// 256 elements of a and b into float32 arrays, add them with the unrolled
// float32 kernel, encode back.
func blockHalfSum(decode func(dst []float32, src []uint16), encode func(dst []uint16, src []float32)) ReduceFunc {
	return func(dst, a, b []byte) {
		d, x, y := halfViews(dst, a, b)
		x, y = x[:len(d)], y[:len(d)]
		var fx, fy [256]float32
		for len(d) > 0 {
			m := min(len(d), len(fx))
			decode(fx[:m], x[:m])
			decode(fy[:m], y[:m])
			sumKernel(fx[:m], fx[:m], fy[:m])
			encode(d[:m], fx[:m])
			d, x, y = d[m:], x[m:], y[m:]
		}
	}
}

func decodeF16Block(dst []float32, src []uint16) {
	dst = dst[:len(src)]
	for i, h := range src {
		dst[i] = f16ToF32Table[h]
	}
}

func encodeF16Block(dst []uint16, src []float32) {
	src = src[:len(dst)]
	for i, f := range src {
		if u := math.Float32bits(f); f16IsNormal(u) {
			dst[i] = f16RoundNormal(u)
		} else {
			dst[i] = f32ToF16Rare(u)
		}
	}
}

func decodeBF16Block(dst []float32, src []uint16) {
	dst = dst[:len(src)]
	for i, h := range src {
		dst[i] = BF16ToF32(h)
	}
}

func encodeBF16Block(dst []uint16, src []float32) {
	src = src[:len(dst)]
	for i, f := range src {
		dst[i] = F32ToBF16(f)
	}
}

// BenchmarkHalfLayout compares the one-element-at-a-time portable kernels
// for fp16 and bf16 sum with the block layout.
func BenchmarkHalfLayout(b *testing.B) {
	kernels := []struct {
		name string
		dt   DType
		red  ReduceFunc
	}{
		{"fp16/block", FP16, blockHalfSum(decodeF16Block, encodeF16Block)},
		{"fp16/element", FP16, portableReducers[FP16][Sum]},
		{"bf16/block", BF16, blockHalfSum(decodeBF16Block, encodeBF16Block)},
		{"bf16/element", BF16, portableReducers[BF16][Sum]},
	}
	for _, size := range []int{bigSize, smallSize} {
		for _, k := range kernels {
			b.Run(fmt.Sprintf("%s/%dKiB", k.name, size>>10), func(b *testing.B) {
				dst, x, y := buffers(k.dt, size)
				b.SetBytes(int64(len(dst)))
				for b.Loop() {
					k.red(dst, x, y)
				}
			})
		}
	}
}

// BenchmarkFill and BenchmarkCountWrong show that generating and checking
// patterns run near copy speed (compare BenchmarkCopy).
func BenchmarkFill(b *testing.B) {
	for _, dt := range []DType{Int8, FP16, FP32, FP64} {
		b.Run(dt.String(), func(b *testing.B) {
			buf, _, _ := buffers(dt, bigSize)
			p := Pattern{dt, Sum, 8}
			b.SetBytes(int64(len(buf)))
			for b.Loop() {
				p.Fill(buf, 3, 12345)
			}
		})
	}
}

func BenchmarkCountWrong(b *testing.B) {
	for _, dt := range []DType{Int8, FP16, FP32, FP64} {
		b.Run(dt.String(), func(b *testing.B) {
			buf, _, _ := buffers(dt, bigSize)
			p := Pattern{dt, Sum, 8}
			p.Fill(buf, 3, 12345)
			tmpl := p.Template(3)
			b.SetBytes(int64(len(buf)))
			for b.Loop() {
				if CountWrong(dt, buf, tmpl, 12345) != 0 {
					b.Fatal("pattern mismatch")
				}
			}
		})
	}
}
