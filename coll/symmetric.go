package coll

import (
	"context"
	"math/bits"

	"github.com/hccl-test/hccl-test/backends"
	"github.com/hccl-test/hccl-test/dtype"
)

// Symmetric calls. On a power of two ranks, recursive doubling and
// halving with equal blocks are symmetric under renaming ranks by XOR:
// rank r runs rank 0's program with every peer p renamed r XOR p, the
// same lengths in the same order. A transport in virtual time that can
// evaluate such a call once for the whole world (symmetricRunner: sim)
// does so for calls without payload, where nothing is moved or checked
// and only the clocks count: one rank's messages instead of the world's.
// A 16384-rank world's allreduce by halving and doubling sends 458,752
// messages; one rank's program sends 28.

// symmetricRunner is a transport that runs a call once for every rank
// (sim's RunSymmetric): every rank calls it with an equivalent run, which
// is the call's program on a Transport of rank 0. It reports false, with
// a nil error, when it did not run it, for every rank alike; the ranks
// then run the call as usual.
type symmetricRunner interface {
	RunSymmetric(ctx context.Context, run func(t backends.Transport) error) (bool, error)
}

// xorSymmetric reports whether a call of alg with arguments a on n ranks is
// symmetric under renaming ranks by XOR: n is a power of two (no fold),
// and every block that moves has the same length on every rank.
func xorSymmetric(alg *algorithm, n int, a *Args) bool {
	if n < 2 || bits.OnesCount(uint(n)) != 1 {
		return false
	}
	switch {
	case alg.op == AllReduce && alg.name == "rd":
		return true // whole vectors
	case alg.op == AllReduce && alg.name == "rhd":
		return a.Count%n == 0 // span's parts are equal
	case alg.op == AllGather && alg.name == "rd", alg.op == ReduceScatter && alg.name == "rhd":
		return true // one block per rank
	}
	return false
}

// runSymmetric runs a's call of alg once for the world where it can
// (symmetricRunner, a top-level Comm without payload, a symmetric call)
// and reports whether it did.
func (c *Comm) runSymmetric(ctx context.Context, alg *algorithm, a *Args) (bool, error) {
	sr, ok := c.t.(symmetricRunner)
	if !ok || c.parent != nil || !c.noPayload || a.RedOp == dtype.MulSum || !sameOnEveryRank(a) || !xorSymmetric(alg, c.size, a) {
		return false, nil
	}
	return sr.RunSymmetric(ctx, func(t backends.Transport) error {
		m := NewComm(t)
		m.SetNoPayload(true)
		return alg.run(ctx, m, a)
	})
}

// sameOnEveryRank reports whether a's buffers stand in the same relation
// on every rank: apart, or the same buffer. An allgather or reducescatter
// in place has its input at rank r's block of the result, which a program
// run for another rank (RunSymmetric's rank 0, or every rank of
// TimeWorld) would not find aliased. The answer must not depend on the
// rank, or some ranks would meet and others not: rank 0's input in place
// starts where its result does, but is shorter.
func sameOnEveryRank(a *Args) bool {
	return !overlap(a.Send, a.Recv) || aliased(a.Send, a.Recv) && len(a.Send) == len(a.Recv)
}
