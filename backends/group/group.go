// Package group makes a communicator of some of a world's ranks: a
// Transport over the world's that numbers the members 0..k-1 and carries
// their messages on the world's links. The groups of one kind (every
// tensor-parallel group, say) run at once, each over its own links, as
// they do in training.
package group

import (
	"fmt"
	"slices"

	"github.com/hccl-test/hccl-test/backends"
	"github.com/hccl-test/hccl-test/dtype"
)

// New returns the Transport of world rank t.Rank() in the group whose
// members are the world ranks members, in group-rank order; t.Rank() must
// be one of them.
func New(t backends.Transport, members []int) (backends.Transport, error) {
	me := slices.Index(members, t.Rank())
	if me < 0 {
		return nil, fmt.Errorf("group %v: world rank %d is not a member", members, t.Rank())
	}
	for _, m := range members {
		if m < 0 || m >= t.Size() {
			return nil, fmt.Errorf("group %v: rank %d is not in the world of %d", members, m, t.Size())
		}
	}
	return &transport{world: t, members: slices.Clone(members), rank: me}, nil
}

// transport is one member's view of its group.
type transport struct {
	world   backends.Transport
	members []int
	rank    int
}

// Rank implements backends.Transport: the rank in the group.
func (g *transport) Rank() int { return g.rank }

// Size implements backends.Transport: the members.
func (g *transport) Size() int { return len(g.members) }

// peer maps a group rank to its world rank; one out of range maps to an
// invalid world rank, which the world's transport refuses.
func (g *transport) peer(p int) int {
	if p < 0 || p >= len(g.members) {
		return -1
	}
	return g.members[p]
}

// Send implements backends.Transport.
func (g *transport) Send(peer int, buf []byte) backends.Request {
	return g.world.Send(g.peer(peer), buf)
}

// Recv implements backends.Transport.
func (g *transport) Recv(peer int, buf []byte) backends.Request {
	return g.world.Recv(g.peer(peer), buf)
}

// RecvReduce implements backends.Transport.
func (g *transport) RecvReduce(peer int, dst, acc []byte, reduce dtype.ReduceFunc) backends.Request {
	return g.world.RecvReduce(g.peer(peer), dst, acc, reduce)
}

// Close implements backends.Transport. The world's transport stays open:
// it belongs to the world.
func (g *transport) Close() error { return nil }

// BeginCall passes the call on to the world's transport
// (backends.CallTagger). Groups of one kind share no link, and the calls
// that share one (a group's and, say, the world's own barrier) come in
// the same order on both of its sides, so each message still meets the
// receive of its own call.
func (g *transport) BeginCall(c backends.Call) {
	if tg, ok := g.world.(backends.CallTagger); ok {
		tg.BeginCall(c)
	}
}

// ReadsSenderBuffer passes on the world's answer (backends.DirectReader).
func (g *transport) ReadsSenderBuffer() bool {
	dr, ok := g.world.(backends.DirectReader)
	return ok && dr.ReadsSenderBuffer()
}

// Unwrap implements backends.Unwrapper: it returns the world's transport,
// so that a member's virtual clock and the charging of its own work
// (backends.ClockOf, backends.LocalWorkerOf) are its world rank's.
func (g *transport) Unwrap() backends.Transport { return g.world }
