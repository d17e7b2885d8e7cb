// Package dtype defines the element types and reduction operators that
// collectives move and combine, the reduction kernels, and the deterministic
// fill and check patterns the harness verifies results with.
//
// Buffers everywhere above this package are []byte plus a DType; this package
// is where bytes become typed elements. Elements are stored in the machine's
// byte order (little-endian on every supported platform), as Go lays out a
// []T; Encode and Decode access single elements, Reducer returns the
// element-wise kernel for a (DType, ReduceOp) pair.
//
// Reduction rules, the same for every kernel and every reduction order:
//
//   - Integer Sum and Prod wrap around (two's complement), as Go's integer
//     arithmetic does.
//   - Max and Min of floats follow Go's built-in max and min: if either
//     operand is a NaN the result is a NaN, and +0 counts as larger than -0.
//   - fp16, bf16 and the two fp8 types have no arithmetic of their own:
//     each binary operation converts both operands to float32, computes in
//     float32 and rounds the result back to nearest-even, one rounding per
//     operation (F16ToF32, F32ToF16, BF16ToF32, F32ToBF16, F8E4M3ToF32,
//     F32ToF8E4M3, F8E5M2ToF32, F32ToF8E5M2). fp8 results saturate to the
//     largest finite value, as CUDA's conversion with __NV_SATFINITE does
//     (see fp8.go).
//   - Avg is a Sum followed by one DivideBy with the number of ranks, as
//     NCCL's ncclAvg: integers divide the wrapped sum with truncation toward
//     zero, floats round float64(sum)/float64(ranks) to nearest-even.
//   - MulSum is NCCL's PreMulSum as nccl-tests runs it: each rank's input
//     is first multiplied by that rank's scalar (PreMulScalar: 1 on even
//     ranks, 2 on odd ones; PreMultiply), then the products are summed.
//
// Pattern produces inputs whose reductions are exact under these rules in
// every type and order, so results can be checked bit for bit (CountWrong).
//
// The kernels are portable Go, and on amd64 CPUs with AVX2 mostly AVX2
// assembly (F16C too for fp16) generated with avo by internal/asmgen. The
// two give identical bits for every input, NaNs included. Setting
// HCCL_TEST_KERNELS=portable in the environment before the program starts
// makes Reducer use the portable kernels only, to compare or to rule the
// assembly out.
package dtype

import (
	"fmt"
	"strings"
)

// DType is an element type. The zero value is invalid.
type DType uint8

// The element types, in the order `--datatype all` sweeps them.
const (
	Int8 DType = iota + 1
	Uint8
	Int16
	Uint16
	Int32
	Uint32
	Int64
	Uint64
	FP16 // IEEE 754 binary16
	BF16 // bfloat16: the top half of an IEEE binary32
	FP32
	FP64
	// F8E4M3 is OCP FP8 E4M3 (E4M3FN): 4 exponent bits, 3 mantissa bits,
	// no infinities, NaN = S.1111.111, largest finite value 448.
	F8E4M3
	// F8E5M2 is OCP FP8 E5M2: 5 exponent bits, 2 mantissa bits, with
	// infinities and NaNs as IEEE 754 has them; largest finite 57344.
	F8E5M2
)

// lastDType is the last valid DType.
const lastDType = F8E5M2

var dtypeNames = [...]string{
	Int8: "int8", Uint8: "uint8", Int16: "int16", Uint16: "uint16",
	Int32: "int32", Uint32: "uint32", Int64: "int64", Uint64: "uint64",
	FP16: "fp16", BF16: "bf16", FP32: "fp32", FP64: "fp64",
	F8E4M3: "f8e4m3", F8E5M2: "f8e5m2",
}

var dtypeSizes = [...]int{
	Int8: 1, Uint8: 1, Int16: 2, Uint16: 2, Int32: 4, Uint32: 4,
	Int64: 8, Uint64: 8, FP16: 2, BF16: 2, FP32: 4, FP64: 8,
	F8E4M3: 1, F8E5M2: 1,
}

// aliases maps the spellings used by nccl-tests, hccl_test and PyTorch to
// our canonical names (nccl-tests' f8e4m3 and f8e5m2 are the canonical
// ones; hccl_test says fp8e4m3 and fp8e5m2, PyTorch float8_e4m3fn and
// float8_e5m2).
var aliases = map[string]DType{
	"char": Int8, "byte": Uint8, "half": FP16, "float16": FP16,
	"bfloat16": BF16, "bfp16": BF16, "float": FP32, "float32": FP32,
	"double": FP64, "float64": FP64, "int": Int32, "short": Int16,
	"long": Int64, "fp8e4m3": F8E4M3, "fp8e5m2": F8E5M2,
	"float8_e4m3fn": F8E4M3, "float8_e5m2": F8E5M2,
}

// All returns every element type in sweep order.
func All() []DType {
	out := make([]DType, 0, len(dtypeNames)-1)
	for d := Int8; d <= lastDType; d++ {
		out = append(out, d)
	}
	return out
}

// Valid reports whether d is one of the defined types.
func (d DType) Valid() bool { return d >= Int8 && d <= lastDType }

// String returns the canonical name (fp16, int32, ...).
func (d DType) String() string {
	if !d.Valid() {
		return fmt.Sprintf("dtype(%d)", uint8(d))
	}
	return dtypeNames[d]
}

// Size returns the size of one element in bytes.
func (d DType) Size() int {
	if !d.Valid() {
		return 0
	}
	return dtypeSizes[d]
}

// IsFloat reports whether d is a floating-point type.
func (d DType) IsFloat() bool { return d >= FP16 }

// IsSigned reports whether d is a signed integer type.
func (d DType) IsSigned() bool {
	return d == Int8 || d == Int16 || d == Int32 || d == Int64
}

// Parse returns the type named s: a canonical name or one of the anchors'
// spellings (half, float, double, bfloat16, bfp16, fp8e4m3, ...). Case is
// ignored.
func Parse(s string) (DType, error) {
	name := strings.ToLower(strings.TrimSpace(s))
	for d := Int8; d <= lastDType; d++ {
		if dtypeNames[d] == name {
			return d, nil
		}
	}
	if d, ok := aliases[name]; ok {
		return d, nil
	}
	return 0, fmt.Errorf("unknown data type %q (want one of %s)", s, strings.Join(dtypeNames[1:], " "))
}
