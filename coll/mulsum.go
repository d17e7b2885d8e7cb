package coll

import (
	"context"

	"github.com/hccl-test/hccl-test/dtype"
	"github.com/hccl-test/hccl-test/internal/hugemem"
	"github.com/hccl-test/hccl-test/internal/vmem"
)

// MulSum (NCCL's PreMulSum). Every rank multiplies its own input by its
// scalar (dtype.PreMulScalar: 1 on even ranks, 2 on odd ones, as
// nccl-tests sets it) before it enters the sum. NCCL fuses the
// multiplication into the first load of the input; here it is one pass of
// its own over the input, into memory the Comm keeps for it, after which
// the call runs as a Sum with that copy as its input. So every algorithm,
// written once for Sum, serves MulSum too, and a sub-communicator of a
// level of the topology, which sees a Sum, never multiplies twice. The
// pass is timed with the call (NCCL's multiplication is too), and is
// charged to the rank's own work on a backend with a virtual clock.
//
// The input is never written, in-place calls included: their output
// overwrites it anyway, but a re-run under --retry restores it from a copy
// taken before the first attempt and multiplies it again.

// noPayloadPreMul stands in for the multiplied inputs of calls without
// payload: address space of its own, so that it never aliases the scratch
// space and an algorithm's copies count the same with and without payload.
var noPayloadPreMul vmem.Region

// ReservePreMul makes sure the memory for MulSum's multiplied input of up
// to maxBytes is allocated now, and touched, rather than inside a timed
// call; without payload, the address space that stands in for it
// (noPayloadPreMul), or the error. Only sweeps with mulsum need it. It
// stops with ctx's error once ctx is done (hugemem.Touch).
func (c *Comm) ReservePreMul(ctx context.Context, maxBytes int) error {
	if !c.payload() {
		return reserveStandIn(&noPayloadPreMul, maxBytes, "multiplied inputs")
	}
	return hugemem.Touch(ctx, c.preMulBuf(maxBytes))
}

// preMulBuf returns n bytes for a multiplied input, reusing earlier space
// when it is large enough; mapped as the scratch space is (scratchBuf).
func (c *Comm) preMulBuf(n int) []byte {
	if !c.payload() {
		return standIn(&noPayloadPreMul, n)
	}
	if cap(c.preMul) < n {
		c.preMul = c.scratchMemory().grow(n)
	}
	return c.preMul[:n]
}

// preMultiplied returns a MulSum call as the Sum that it is once this
// rank's input has been multiplied by its scalar: a copy of a whose Send is
// the multiplied input, valid until the Comm's next call.
func (c *Comm) preMultiplied(a *Args) *Args {
	blocks, _ := a.Op.Desc().Lengths(c.rank, a.Root, c.size)
	n := blocks * a.Bytes()
	if d := a.Op.Desc(); d.Variable() {
		elems, _ := d.VLengths(c.rank, a.Counts)
		n = elems * a.DType.Size()
	}
	buf := c.preMulBuf(n)
	if dtype.PreMulScalar(c.rank) == 1 {
		c.copied(n)
	} else {
		c.reduced(n)
	}
	if c.payload() {
		dtype.PreMultiply(a.DType, buf, a.Send[:n], c.rank)
	}
	// The Comm's own Args, reused call after call: no allocation in a
	// timed call.
	c.preMulArgs = *a
	c.preMulArgs.Send, c.preMulArgs.RedOp = buf, dtype.Sum
	return &c.preMulArgs
}
