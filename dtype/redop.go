package dtype

import (
	"fmt"
	"strings"
)

// ReduceOp is an element-wise reduction operator. The zero value is invalid.
type ReduceOp uint8

// The reduction operators, in the order `--redop all` sweeps them.
const (
	Sum ReduceOp = iota + 1
	Prod
	Max
	Min
	// Avg is a sum followed by a division by the number of ranks (NCCL's
	// ncclAvg); see DivideBy for the rounding rule.
	Avg
	// MulSum is NCCL's PreMulSum as nccl-tests runs it: every rank
	// multiplies its input by its own scalar (PreMulScalar) before the
	// inputs are summed; see PreMultiply.
	MulSum
)

// lastOp is the last valid ReduceOp.
const lastOp = MulSum

var opNames = [...]string{Sum: "sum", Prod: "prod", Max: "max", Min: "min", Avg: "avg", MulSum: "mulsum"}

// AllOps returns every reduction operator in sweep order.
func AllOps() []ReduceOp { return []ReduceOp{Sum, Prod, Max, Min, Avg, MulSum} }

// Valid reports whether o is one of the defined operators.
func (o ReduceOp) Valid() bool { return o >= Sum && o <= lastOp }

// String returns the operator's name (sum, prod, max, min, avg, mulsum).
func (o ReduceOp) String() string {
	if !o.Valid() {
		return fmt.Sprintf("redop(%d)", uint8(o))
	}
	return opNames[o]
}

// ParseOp returns the operator named s. Case is ignored.
func ParseOp(s string) (ReduceOp, error) {
	name := strings.ToLower(strings.TrimSpace(s))
	for o := Sum; o <= lastOp; o++ {
		if opNames[o] == name {
			return o, nil
		}
	}
	return 0, fmt.Errorf("unknown reduction %q (want one of %s)", s, strings.Join(opNames[1:], " "))
}

// PreMulScalar returns the scalar that rank multiplies its input by in a
// MulSum reduction: 1 on even ranks, 2 on odd ones, the scalar nccl-tests
// hands ncclRedOpCreatePreMulSum (ncclVerifiablePremulScalar). rank is the
// rank's index in the communicator that reduces.
func PreMulScalar(rank int) int {
	if rank%2 == 0 {
		return 1
	}
	return 2
}

// PreMultiply sets dst to src multiplied, element by element, by rank's
// scalar (PreMulScalar), rounded in dt as a Prod would round it: integers
// wrap, floats round to nearest-even (fp8 saturates). As the scalar is 1 or
// 2, the product is a copy or src+src, which the Sum kernel computes
// exactly as Prod would compute src*2. dst and src have the same length, a
// multiple of dt.Size(), and are either the same slice or disjoint.
func PreMultiply(dt DType, dst, src []byte, rank int) {
	if len(dst) != len(src) {
		panic(fmt.Sprintf("dtype.PreMultiply: dst of %d bytes, src of %d", len(dst), len(src)))
	}
	if PreMulScalar(rank) == 1 {
		copy(dst, src)
		return
	}
	Reducer(dt, Sum)(dst, src, src)
}
