// Package coll holds the collective algorithms, each written once against
// backends.Transport, a registry of them by (collective, name), and the
// `auto` choice between them. An algorithm never knows which backend
// carries it.
package coll

import (
	"fmt"
	"math/bits"
	"strings"
)

// Op is a collective operation. The zero value is invalid. The collectives
// and their descriptors are in collectives.go.
type Op uint8

// AllOps returns every collective in sweep order.
func AllOps() []Op {
	out := make([]Op, 0, len(descriptors)-1)
	for o := Op(1); o.Valid(); o++ {
		out = append(out, o)
	}
	return out
}

// Valid reports whether o is a defined collective.
func (o Op) Valid() bool { return o >= 1 && int(o) < len(descriptors) }

// Desc returns the descriptor of collective o, or nil if o is not Valid.
// The descriptor is shared: callers must not modify it.
func (o Op) Desc() *Descriptor {
	if !o.Valid() {
		return nil
	}
	return &descriptors[o]
}

// String returns the collective's name as the command line spells it.
func (o Op) String() string {
	if !o.Valid() {
		return fmt.Sprintf("op(%d)", uint8(o))
	}
	return descriptors[o].Name
}

// Reduces reports whether the collective combines data with a reduction
// operator (and so takes --redop).
func (o Op) Reduces() bool { return o.Valid() && descriptors[o].Reduces }

// Rooted reports whether the collective has a root rank.
func (o Op) Rooted() bool { return o.Valid() && descriptors[o].Rooted }

// BusFactor returns the factor that turns algorithm bandwidth into bus
// bandwidth on n ranks, as nccl-tests defines it: 2(n-1)/n for allreduce,
// (n-1)/n for allgather, reducescatter, alltoall, gather and scatter, and 1
// for broadcast, reduce and sendrecv (and for an invalid o).
func (o Op) BusFactor(n int) float64 {
	if !o.Valid() {
		return 1
	}
	return descriptors[o].BusFactor(n)
}

// Blocks returns the number of count-sized blocks in the larger of a rank's
// two buffers: n for allgather, reducescatter, alltoall, gather and scatter
// (whose count is per rank or per peer), 1 for the others (and for an
// invalid o). The size a row reports is Blocks(n) x count x element size,
// as nccl-tests prints it.
func (o Op) Blocks(n int) int {
	if !o.Valid() {
		return 1
	}
	return descriptors[o].Blocks(n)
}

// BufferBytes returns the send and receive lengths in bytes that a row of
// size bytes takes on n ranks (Descriptor.BufferBytes); an invalid o takes
// size for both.
func (o Op) BufferBytes(n int, size int64) (send, recv int64) {
	if !o.Valid() {
		return size, size
	}
	return descriptors[o].BufferBytes(n, size)
}

// Peers returns how many ranks one rank of n exchanges messages with in
// o, each over a link of its own: the descriptor's Peers, or by default
// (and for an invalid o) the peers of a doubling algorithm, 2 per doubling
// step and 4 more, at most n (rank 0 also gathers every rank's timings).
func (o Op) Peers(n int) int {
	if o.Valid() && descriptors[o].Peers != nil {
		return descriptors[o].Peers(n)
	}
	return min(n, 2*bits.Len(uint(n))+4)
}

// PeersOf returns the most peers one rank of n exchanges messages with in
// any of ops (Op.Peers: auto's usual pick, whose model is measured at the
// start), and the default with no ops.
func PeersOf(ops []Op, n int) int {
	peers := Op(0).Peers(n)
	for _, o := range ops {
		peers = max(peers, o.Peers(n))
	}
	return peers
}

// BenchName returns the name in Go benchmark format of the collective that
// the command line calls name ("allreduce": "AllReduce"), and false for a
// name that is not one of ours.
func BenchName(name string) (string, bool) {
	for _, o := range AllOps() {
		if descriptors[o].Name == name {
			return descriptors[o].Bench, true
		}
	}
	return "", false
}

// ParseOp returns the collective named s; "allreduce", "all_reduce" and
// "all-reduce" are the same. Case is ignored.
func ParseOp(s string) (Op, error) {
	name := strings.NewReplacer("_", "", "-", "").Replace(strings.ToLower(strings.TrimSpace(s)))
	var names []string
	for _, o := range AllOps() {
		if descriptors[o].Name == name {
			return o, nil
		}
		names = append(names, descriptors[o].Name)
	}
	return 0, fmt.Errorf("unknown collective %q (want one of %s)", s, strings.Join(names, " "))
}
