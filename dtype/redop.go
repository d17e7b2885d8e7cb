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
)

var opNames = [...]string{Sum: "sum", Prod: "prod", Max: "max", Min: "min", Avg: "avg"}

// AllOps returns every reduction operator in sweep order.
func AllOps() []ReduceOp { return []ReduceOp{Sum, Prod, Max, Min, Avg} }

// Valid reports whether o is one of the defined operators.
func (o ReduceOp) Valid() bool { return o >= Sum && o <= Avg }

// String returns the operator's name (sum, prod, max, min, avg).
func (o ReduceOp) String() string {
	if !o.Valid() {
		return fmt.Sprintf("redop(%d)", uint8(o))
	}
	return opNames[o]
}

// ParseOp returns the operator named s. Case is ignored.
func ParseOp(s string) (ReduceOp, error) {
	name := strings.ToLower(strings.TrimSpace(s))
	for o := Sum; o <= Avg; o++ {
		if opNames[o] == name {
			return o, nil
		}
	}
	return 0, fmt.Errorf("unknown reduction %q (want one of %s)", s, strings.Join(opNames[1:], " "))
}
