package coll

import (
	"context"

	"github.com/hccl-test/hccl-test/backends"
	"github.com/hccl-test/hccl-test/dtype"
)

// World replay. Without payload a call's program on every rank is known
// before any message moves: nothing received is read. A transport in
// virtual time that can record every rank's program and replay the
// records in virtual time (worldRunner: sim's RunWorld) runs such a call
// for the whole world in one goroutine, bit for bit as message by message
// (TestReplayMatchesFullSimulation): a 16384-rank allreduce by halving and
// doubling whose parts are uneven, which the symmetric evaluation
// (symmetric.go) does not take, in a fraction of a second instead of a
// minute. It is tried after the symmetric evaluation and the closed forms
// (twoshot_time.go), which cost less.

// worldRunner is a transport that runs a call's program of every rank at
// once (sim's RunWorld): every rank calls it with an equivalent run, the
// call's program on a Transport of the rank that Transport names. It
// reports false, with a nil error, when it did not, for every rank alike;
// the ranks then run the call as usual. Calls of an equal key run the same
// programs, which it may keep from one call to the next.
type worldRunner interface {
	RunWorld(ctx context.Context, key any, run func(t backends.Transport) error) (bool, error)
}

// replayed is the algorithms whose calls are replayed for the world:
// those of a logarithmic number of messages per rank (a world's replay
// records every message of every rank) that read no clock, each compared
// with the full simulation in TestReplayMatchesFullSimulation, and
// multiring, whose world repeats server by server (sim records one
// server's ranks: TestPeriodicReplayMatchesFullSimulation).
var replayed = map[replayKey]bool{
	{AllReduce, "rd"}: true, {AllReduce, "rhd"}: true,
	{AllGather, "rd"}: true, {AllGather, "bruck"}: true,
	{ReduceScatter, "rhd"}: true,
	{Broadcast, "tree"}:    true, {Reduce, "tree"}: true,
	{AllReduce, multiringName}: true, {ReduceScatter, multiringName}: true, {AllGather, multiringName}: true,
}

// replayKey is an algorithm of an op.
type replayKey struct {
	op   Op
	name string
}

// replayWorld runs a's call of alg for the whole world where it can (a
// worldRunner, a top-level Comm without payload, an algorithm replayed)
// and reports whether it did.
func (c *Comm) replayWorld(ctx context.Context, alg *algorithm, a *Args) (bool, error) {
	wr, ok := c.t.(worldRunner)
	if !ok || c.parent != nil || !c.noPayload || a.RedOp == dtype.MulSum || c.size < 2 || !sameOnEveryRank(a) || !replayed[replayKey{alg.op, alg.name}] {
		return false, nil
	}
	key := replayCall{op: a.Op, name: alg.name, dt: a.DType, redOp: a.RedOp, count: a.Count, root: a.Root,
		send: len(a.Send), recv: len(a.Recv), aliased: aliased(a.Send, a.Recv), n: c.size, perServer: c.topo.perServer}
	return wr.RunWorld(ctx, key, func(t backends.Transport) error {
		m := NewComm(t)
		m.SetNoPayload(true)
		m.topo.perServer = c.topo.perServer // multiring's channels follow the servers
		return alg.run(ctx, m, a)
	})
}

// replayCall is what decides the programs of a replayed call on every
// rank: the algorithm, the arguments but the buffers' addresses (apart,
// or the same buffer: sameOnEveryRank), and the world's size.
type replayCall struct {
	op          Op
	name        string
	dt          dtype.DType
	redOp       dtype.ReduceOp
	count, root int
	send, recv  int
	aliased     bool
	n           int
	perServer   int
}
