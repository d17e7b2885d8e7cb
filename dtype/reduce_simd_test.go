package dtype

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"testing"
)

// The SIMD kernels must give the portable kernels' results bit for bit,
// NaN payloads included (see internal/asmgen). These tests compare the two
// tables directly, so they run whatever HCCL_TEST_KERNELS says, and skip
// where this CPU has no SIMD kernels.

// simdPairs returns the (dtype, op) pairs that have a SIMD kernel, skipping
// the test if there is none.
func simdPairs(t *testing.T) (pairs [][2]int) {
	t.Helper()
	for dt := range simdReducers {
		for op, k := range simdReducers[dt] {
			if k != nil && ReduceOp(op) != Avg {
				pairs = append(pairs, [2]int{dt, op})
			}
		}
	}
	if len(pairs) == 0 {
		t.Skip("no SIMD kernels on this CPU")
	}
	return pairs
}

// specialBits returns the special values of dt as bits: zeros, infinities,
// quiet and signaling NaNs with payloads, subnormals, extremes.
func specialBits(dt DType) []uint64 {
	switch dt {
	case FP16:
		return []uint64{0, 0x8000, 0x7c00, 0xfc00, 0x7e00, 0xfe00, 0x7c01, 0xfd55, 0x7fff,
			0x0001, 0x8001, 0x03ff, 0x0400, 0x7bff, 0xfbff, 0x3c00, 0xbc00, 0x7bfe, 0x0002}
	case BF16:
		return []uint64{0, 0x8000, 0x7f80, 0xff80, 0x7fc0, 0xffc0, 0x7f81, 0xffa5, 0x7fff,
			0x0001, 0x8001, 0x007f, 0x0080, 0x7f7f, 0xff7f, 0x3f80, 0xbf80, 0x7f7e, 0x0002}
	case FP32:
		return []uint64{0, 0x80000000, 0x7f800000, 0xff800000, 0x7fc00000, 0xffc00000,
			0x7fc12345, 0x7f800001, 0xff812345, 0x7fffffff, 0x00000001, 0x80000001,
			0x007fffff, 0x00800000, 0x7f7fffff, 0xff7fffff, 0x3f800000, 0xbf800000}
	case FP64:
		return []uint64{0, 1 << 63, 0x7ff0000000000000, 0xfff0000000000000,
			0x7ff8000000000000, 0xfff8000000000000, 0x7ff8000012345678, 0x7ff0000000000001,
			0xfff0000000abcdef, 0x7fffffffffffffff, 1, 1<<63 | 1, 0x000fffffffffffff,
			0x0010000000000000, 0x7fefffffffffffff, 0xffefffffffffffff, 0x3ff0000000000000}
	}
	bits := 8 * dt.Size()
	top := uint64(1) << (bits - 1)
	all := top | (top - 1)
	return []uint64{0, 1, all, top, top - 1, top + 1, all - 1, 2, top >> 1}
}

// simdTestElems returns n elements of dt: a quarter special values, a
// quarter random bits, and for floats half ordinary values of mixed sign
// and magnitude (random bits for integers).
func simdTestElems(r *rand.Rand, dt DType, n int) []byte {
	b := make([]byte, n*dt.Size())
	specials := specialBits(dt)
	for i := range n {
		v := r.Uint64()
		switch k := r.IntN(4); {
		case k == 0:
			v = specials[r.IntN(len(specials))]
		case k == 1 || !dt.IsFloat():
		default:
			f := math.Ldexp(r.NormFloat64(), r.IntN(30)-15)
			switch dt {
			case FP16:
				v = uint64(F32ToF16(float32(f)))
			case BF16:
				v = uint64(F32ToBF16(float32(f)))
			case FP32:
				v = uint64(math.Float32bits(float32(f)))
			default:
				v = math.Float64bits(f)
			}
		}
		store(dt, b, i, v)
	}
	return b
}

// compareKernels runs the SIMD and the portable kernel of dt/op on copies
// of a and b, with dst as layout says, and fails on any difference.
func compareKernels(t *testing.T, dt DType, op ReduceOp, a, b []byte, layout string) {
	t.Helper()
	s := dt.Size()
	n := len(a) / s
	run := func(k ReduceFunc) []byte {
		// One element of slack before each buffer, so that "offset" can
		// start them off the allocation's alignment.
		x := append(make([]byte, s), a...)[s:]
		y := append(make([]byte, s), b...)[s:]
		d := make([]byte, (n+1)*s)[:n*s]
		switch layout {
		case "dst=a":
			d = x
		case "dst=b":
			d = y
		case "offset":
			x = append(make([]byte, s), a...)[s:]
			y = append(make([]byte, 3*s), b...)[3*s:]
			d = make([]byte, (n+2)*s)[2*s:]
		}
		k(d, x, y)
		return d
	}
	want := run(portableReducers[dt][op])
	got := run(simdReducers[dt][op])
	if bytes.Equal(got, want) {
		return
	}
	for i := range n {
		if g, w := load(dt, got, i), load(dt, want, i); g != w {
			t.Fatalf("element %d of %d: op(%#x, %#x) = %#x, portable kernel gives %#x",
				i, n, load(dt, a, i), load(dt, b, i), g, w)
		}
	}
}

func TestSIMDMatchesPortable(t *testing.T) {
	pairs := simdPairs(t)
	r := rand.New(rand.NewPCG(7, 8))
	lengths := []int{}
	for n := range 101 {
		lengths = append(lengths, n)
	}
	lengths = append(lengths, 1000, 4099)
	for _, p := range pairs {
		dt, op := DType(p[0]), ReduceOp(p[1])
		ls := lengths
		// Past 256 KiB the amd64 kernels run in chunks; from 1 MiB
		// (ntBytes) they store non-temporally after an aligned head. Under
		// -short or the race detector only a few pairs go that far.
		if thorough() || op == Sum && (dt == FP32 || dt == FP16) {
			ls = append(ls, 70001, 1<<20/dt.Size()+37)
		}
		t.Run(fmt.Sprintf("%v/%v", dt, op), func(t *testing.T) {
			for _, n := range ls {
				a, b := simdTestElems(r, dt, n), simdTestElems(r, dt, n)
				for _, layout := range []string{"separate", "dst=a", "dst=b", "offset"} {
					compareKernels(t, dt, op, a, b, layout)
				}
			}
		})
	}
}

// thorough reports whether the slow, exhaustive variants of the tests run:
// not under -short, nor under the race detector.
func thorough() bool { return !testing.Short() && !raceEnabled }

// TestSIMDHalfExhaustive runs every fp16 and bf16 value of a against every
// 7th value of b and the specials (sum), or every 61st (prod, max, min),
// SIMD against portable; every 1031st under -short or the race detector.
func TestSIMDHalfExhaustive(t *testing.T) {
	pairs := simdPairs(t)
	all := make([]byte, 2<<16)
	for v := range 1 << 16 {
		store(FP16, all, v, uint64(v))
	}
	for _, p := range pairs {
		dt, op := DType(p[0]), ReduceOp(p[1])
		if dt != FP16 && dt != BF16 {
			continue
		}
		stride := 7
		if op != Sum {
			stride = 61
		}
		if !thorough() {
			stride = 1031
		}
		t.Run(fmt.Sprintf("%v/%v", dt, op), func(t *testing.T) {
			bvals := specialBits(dt)
			for v := 0; v < 1<<16; v += stride {
				bvals = append(bvals, uint64(v))
			}
			b := make([]byte, len(all))
			got, want := make([]byte, len(all)), make([]byte, len(all))
			for _, bv := range bvals {
				for i := range 1 << 16 {
					store(dt, b, i, bv)
				}
				simdReducers[dt][op](got, all, b)
				portableReducers[dt][op](want, all, b)
				if !bytes.Equal(got, want) {
					for i := range 1 << 16 {
						if g, w := load(dt, got, i), load(dt, want, i); g != w {
							t.Fatalf("op(%#04x, %#04x) = %#04x, portable kernel gives %#04x", i, bv, g, w)
						}
					}
				}
			}
		})
	}
}

// codeOf identifies a kernel by its code pointer: the SIMD wrappers all
// share one, distinct from every portable kernel's.
func codeOf(k ReduceFunc) uintptr { return reflect.ValueOf(k).Pointer() }

// checkTable fails unless every kernel in got is the one in want.
func checkTable(t *testing.T, got, want *kernelTable, name string) {
	t.Helper()
	for dt := Int8; dt <= FP64; dt++ {
		for _, op := range AllOps() {
			if codeOf(got[dt][op]) != codeOf(want[dt][op]) {
				t.Errorf("%v/%v: not the %s kernel", dt, op, name)
			}
		}
	}
}

func TestKernelsEnv(t *testing.T) {
	if os.Getenv(KernelsEnv) == "portable" {
		// Also the child process below.
		checkTable(t, &reducers, &portableReducers, "portable")
		return
	}
	portable := chooseKernels("portable")
	checkTable(t, &portable, &portableReducers, "portable")
	best := chooseKernels("")
	for dt := range best {
		for op, k := range simdReducers[dt] {
			if k != nil && codeOf(best[dt][op]) != codeOf(k) {
				t.Errorf("%v/%v: not the SIMD kernel", DType(dt), ReduceOp(op))
			}
		}
	}
	if testing.Short() {
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestKernelsEnv$", "-test.count=1")
	cmd.Env = append(os.Environ(), KernelsEnv+"=portable")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("with %s=portable: %v\n%s", KernelsEnv, err, out)
	}
}

// TestGeneratedUpToDate runs the generator into a temporary directory and
// compares its output with the checked-in files. After changing
// internal/asmgen, run go generate in this directory.
func TestGeneratedUpToDate(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the avo generator")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command in PATH")
	}
	dir := t.TempDir()
	files := []string{"reduce_amd64.s", "reduce_amd64_stubs.go"}
	cmd := exec.Command(goBin, "run", "./internal/asmgen",
		"-out", filepath.Join(dir, files[0]), "-stubs", filepath.Join(dir, files[1]), "-pkg", "dtype")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("generator: %v\n%s", err, out)
	}
	for _, f := range files {
		want, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s is not the generator's output: run go generate in package dtype", f)
		}
	}
}
