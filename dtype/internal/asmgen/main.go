// Command asmgen writes the AVX2 reduction kernels of package dtype with avo
// (github.com/mmcloughlin/avo): the assembly file and the Go declarations of
// its functions. Package dtype runs it through go generate:
//
//	go run ./internal/asmgen -out reduce_amd64.s -stubs reduce_amd64_stubs.go -pkg dtype
//
// and a test in dtype checks that the checked-in files equal its output.
//
// Every kernel has the signature func(dst, a, b *byte, n int, nt bool) and
// computes dst[i] = op(a[i], b[i]) over n bytes, n a multiple of 32 (one
// YMM register); the Go wrappers in dtype give the rest of a buffer to the
// portable kernels. Each 32-byte step reads all of its a and b bytes before
// writing the same dst bytes, so dst may be exactly a or b. Loads are
// unaligned. A main loop handles four steps per iteration, a second loop
// one. If nt, the main loop writes with non-temporal stores (dst must then
// be 32-byte aligned) and ends with an SFENCE; the fp16 and bf16 kernels
// also prefetch there (halfPrefetch). The functions are NOSPLIT leaves
// without a frame that keep no pointer.
//
// The results are those of the portable Go kernels bit for bit, NaN
// payloads included (dtype's tests compare the two on every fp16 and bf16
// value and on special float32 and float64 values):
//
//   - x+y and x*y are VADDP* and VMULP* with x as the first source, as
//     cmd/compile emits ADDSS and MULSS for the portable kernels: when both
//     are NaNs, x's (quieted) comes out.
//   - Go's min(x, y) on amd64 compiles to t1 = MINSS(x, y), t2 = MINSS(t1,
//     x), t1|t2 (cmd/compile's AMD64.rules), which gives a NaN if either
//     operand is one and -0 for min(-0, +0) in either order; max is
//     -min(-x, -y). goMin and goMax emit the same steps with packed
//     instructions, so even the NaN that comes out is the same.
//   - fp16 widens with VCVTPH2PS (exact; a NaN is quieted and keeps its
//     payload, as f16BitsToF32Bits does) and narrows with VCVTPS2PH
//     rounding to nearest-even (imm 0), which keeps a NaN's top ten
//     payload bits and sets the quiet bit, as f32ToF16Rare does.
//   - bf16 widens by putting each element in the top half of a zero dword
//     and narrows with F32ToBF16's integer rounding, NaN kept NaN (see
//     bf16Kernel for why fewer steps than F32ToBF16's suffice).
package main

import (
	"flag"
	"log"
	"os"
	"path/filepath"

	"github.com/mmcloughlin/avo/build"
	"github.com/mmcloughlin/avo/pass"
	"github.com/mmcloughlin/avo/printer"
)

// step is the number of bytes one YMM register holds: the granule of every
// kernel's n.
const step = 32

// halfPrefetch is the prefetch distance of the fp16 and bf16 kernels'
// non-temporal loop. Their conversions take enough time per byte that the
// hardware prefetchers fall behind on 64 MiB buffers: 1 KiB ahead raised
// fp16 sum from 0.55 to 0.61 of copy's speed and bf16 sum from 0.46 to
// 0.56 (AMD EPYC, Zen 3), where 512 bytes gained less and the same
// prefetching left fp32 sum unchanged or slower.
const halfPrefetch = 1024

func main() {
	// avo's build package registers its own flags on flag.CommandLine at
	// init, under the same names: use a FlagSet of our own.
	fs := flag.NewFlagSet("asmgen", flag.ExitOnError)
	out := fs.String("out", "reduce_amd64.s", "assembly output `file`")
	stubs := fs.String("stubs", "reduce_amd64_stubs.go", "Go declarations output `file`")
	pkg := fs.String("pkg", "dtype", "package `name` of the output")
	_ = fs.Parse(os.Args[1:]) // ExitOnError: exits on a bad flag
	if fs.NArg() != 0 {
		log.Fatalf("asmgen: unexpected arguments %q", fs.Args())
	}

	ctx := build.NewContext()
	ctx.ConstraintExpr("amd64")
	for _, k := range kernels() {
		k.generate(&gen{ctx})
	}
	f, err := ctx.Result()
	if err != nil {
		log.Fatalf("asmgen: %v", err)
	}
	if err := pass.Compile.Execute(f); err != nil {
		log.Fatalf("asmgen: %v", err)
	}
	// The header names the files by their base names, so that the output
	// does not depend on where it is written (the up-to-date test writes
	// into a temporary directory).
	cfg := printer.Config{
		Argv: []string{"go", "run", "./internal/asmgen",
			"-out", filepath.Base(*out), "-stubs", filepath.Base(*stubs), "-pkg", *pkg},
		Pkg: *pkg,
	}
	for _, o := range []struct {
		path string
		p    printer.Printer
	}{{*out, printer.NewGoAsm(cfg)}, {*stubs, printer.NewStubs(cfg)}} {
		b, err := o.p.Print(f)
		if err != nil {
			log.Fatalf("asmgen: %s: %v", o.path, err)
		}
		if err := os.WriteFile(o.path, b, 0o644); err != nil {
			log.Fatalf("asmgen: %v", err)
		}
	}
}

// kernels lists every generated function.
func kernels() []kernel {
	var ks []kernel
	add := func(name, doc string, unroll, prefetch int, prepare func(g *gen) stepFunc) {
		ks = append(ks, kernel{name + "AVX2", doc, unroll, prefetch, prepare})
	}
	type intK struct {
		name string
		ins  insn
		doc  string
	}
	for _, k := range []intK{
		{"sum8", (*build.Context).VPADDB, "dst = a + b on 8-bit integers (wrapping)"},
		{"sum16", (*build.Context).VPADDW, "dst = a + b on 16-bit integers (wrapping)"},
		{"sum32", (*build.Context).VPADDD, "dst = a + b on 32-bit integers (wrapping)"},
		{"sum64", (*build.Context).VPADDQ, "dst = a + b on 64-bit integers (wrapping)"},
		{"prod16", (*build.Context).VPMULLW, "dst = a * b on 16-bit integers (wrapping)"},
		{"prod32", (*build.Context).VPMULLD, "dst = a * b on 32-bit integers (wrapping)"},
		{"maxInt8", (*build.Context).VPMAXSB, "dst = max(a, b) on int8"},
		{"minInt8", (*build.Context).VPMINSB, "dst = min(a, b) on int8"},
		{"maxUint8", (*build.Context).VPMAXUB, "dst = max(a, b) on uint8"},
		{"minUint8", (*build.Context).VPMINUB, "dst = min(a, b) on uint8"},
		{"maxInt16", (*build.Context).VPMAXSW, "dst = max(a, b) on int16"},
		{"minInt16", (*build.Context).VPMINSW, "dst = min(a, b) on int16"},
		{"maxUint16", (*build.Context).VPMAXUW, "dst = max(a, b) on uint16"},
		{"minUint16", (*build.Context).VPMINUW, "dst = min(a, b) on uint16"},
		{"maxInt32", (*build.Context).VPMAXSD, "dst = max(a, b) on int32"},
		{"minInt32", (*build.Context).VPMINSD, "dst = min(a, b) on int32"},
		{"maxUint32", (*build.Context).VPMAXUD, "dst = max(a, b) on uint32"},
		{"minUint32", (*build.Context).VPMINUD, "dst = min(a, b) on uint32"},
	} {
		add(k.name, k.doc, 4, 0, intOp(k.ins))
	}
	type floatK struct {
		name        string
		op          floatOp
		arith, sign bool
		doc         string
	}
	for _, k := range []floatK{
		{"sum", opAdd, true, false, "dst = a + b"},
		{"prod", opMul, true, false, "dst = a * b"},
		{"max", goMax, false, true, "dst = max(a, b) with Go's semantics"},
		{"min", goMin, false, false, "dst = min(a, b) with Go's semantics"},
	} {
		add(k.name+"FP32", k.doc+" on float32", 4, 0, floatKernel(ps, k.op, k.sign))
		add(k.name+"FP64", k.doc+" on float64", 4, 0, floatKernel(pd, k.op, k.sign))
		add(k.name+"FP16", k.doc+" on fp16 (via float32, F16C)", 4, halfPrefetch, f16Kernel(k.op, k.sign))
		add(k.name+"BF16", k.doc+" on bf16 (via float32)", 4, halfPrefetch, bf16Kernel(k.op, k.arith, k.sign))
	}
	return ks
}
