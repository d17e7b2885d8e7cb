// Package coll holds the collective algorithms, each written once against
// backends.Transport, a registry of them by (collective, name), and the
// `auto` choice between them. An algorithm never knows which backend
// carries it.
package coll

import (
	"fmt"
	"strings"
)

// Op is a collective operation. The zero value is invalid.
type Op uint8

// The collectives, in the order `--op all` sweeps them.
const (
	AllReduce Op = iota + 1
	AllGather
	ReduceScatter
	Broadcast
	Reduce
	AllToAll
	SendRecv
	Gather
	Scatter
)

var opNames = [...]string{
	AllReduce: "allreduce", AllGather: "allgather", ReduceScatter: "reducescatter",
	Broadcast: "broadcast", Reduce: "reduce", AllToAll: "alltoall",
	SendRecv: "sendrecv", Gather: "gather", Scatter: "scatter",
}

// AllOps returns every collective in sweep order.
func AllOps() []Op {
	out := make([]Op, 0, len(opNames)-1)
	for o := AllReduce; o <= Scatter; o++ {
		out = append(out, o)
	}
	return out
}

// Valid reports whether o is a defined collective.
func (o Op) Valid() bool { return o >= AllReduce && o <= Scatter }

// String returns the collective's name as the command line spells it.
func (o Op) String() string {
	if !o.Valid() {
		return fmt.Sprintf("op(%d)", uint8(o))
	}
	return opNames[o]
}

// Reduces reports whether the collective combines data with a reduction
// operator (and so takes --redop).
func (o Op) Reduces() bool { return o == AllReduce || o == ReduceScatter || o == Reduce }

// Rooted reports whether the collective has a root rank.
func (o Op) Rooted() bool { return o == Broadcast || o == Reduce || o == Gather || o == Scatter }

// BusFactor returns the factor that turns algorithm bandwidth into bus
// bandwidth on n ranks, as nccl-tests defines it: 2(n-1)/n for allreduce,
// (n-1)/n for allgather, reducescatter, alltoall, gather and scatter, and 1
// for broadcast, reduce and sendrecv.
func (o Op) BusFactor(n int) float64 {
	nf := float64(n)
	switch o {
	case AllReduce:
		return 2 * (nf - 1) / nf
	case AllGather, ReduceScatter, AllToAll, Gather, Scatter:
		return (nf - 1) / nf
	default:
		return 1
	}
}

// Blocks returns the number of count-sized blocks in the larger of a rank's
// two buffers: n for allgather, reducescatter, alltoall, gather and scatter
// (whose count is per rank or per peer), 1 for the others. The size a row
// reports is Blocks(n) x count x element size, as nccl-tests prints it.
func (o Op) Blocks(n int) int {
	switch o {
	case AllGather, ReduceScatter, AllToAll, Gather, Scatter:
		return n
	default:
		return 1
	}
}

// ParseOp returns the collective named s; "allreduce", "all_reduce" and
// "all-reduce" are the same. Case is ignored.
func ParseOp(s string) (Op, error) {
	name := strings.NewReplacer("_", "", "-", "").Replace(strings.ToLower(strings.TrimSpace(s)))
	for o := AllReduce; o <= Scatter; o++ {
		if opNames[o] == name {
			return o, nil
		}
	}
	return 0, fmt.Errorf("unknown collective %q (want one of %s)", s, strings.Join(opNames[1:], " "))
}
