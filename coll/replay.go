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
// the ranks then run the call as usual.
type worldRunner interface {
	RunWorld(ctx context.Context, run func(t backends.Transport) error) (bool, error)
}

// replayed is the algorithms whose calls are replayed for the world:
// those of a logarithmic number of messages per rank (a world's replay
// records every message of every rank) that read no clock, each compared
// with the full simulation in TestReplayMatchesFullSimulation.
var replayed = map[replayKey]bool{
	{AllReduce, "rd"}: true, {AllReduce, "rhd"}: true,
	{AllGather, "rd"}: true, {AllGather, "bruck"}: true,
	{ReduceScatter, "rhd"}: true,
	{Broadcast, "tree"}:    true, {Reduce, "tree"}: true,
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
	return wr.RunWorld(ctx, func(t backends.Transport) error {
		m := NewComm(t)
		m.SetNoPayload(true)
		return alg.run(ctx, m, a)
	})
}
