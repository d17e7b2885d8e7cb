package coll

import (
	"fmt"

	"github.com/hccl-test/hccl-test/dtype"
)

// Args describes one collective call on one rank, with nccl-tests' buffer
// conventions (each collective's Descriptor has them in its Lengths and
// InPlace). Let c = Count elements and n ranks:
//
//	allreduce      Send c, Recv c
//	broadcast      Send c (read on the root only), Recv c
//	reduce         Send c, Recv c (written on the root only)
//	sendrecv       Send c (to rank+1), Recv c (from rank-1)
//	allgather      Send c, Recv n*c (block r comes from rank r)
//	reducescatter  Send n*c, Recv c (rank r gets the reduction of block r)
//	alltoall       Send n*c (block j goes to rank j), Recv n*c (block j came from rank j)
//	gather         Send c, Recv n*c (on the root only)
//	scatter        Send n*c (on the root only), Recv c
//
// In-place calls pass overlapping buffers as nccl-tests does: Send and Recv
// the same slice for allreduce, broadcast, reduce and alltoall; Send equal to
// rank r's block of Recv for allgather and gather; Recv equal to rank r's
// block of Send for reducescatter and scatter. Algorithms must give the same
// result either way.
type Args struct {
	Op    Op
	DType dtype.DType
	// RedOp is the reduction for allreduce, reducescatter and reduce.
	RedOp dtype.ReduceOp
	// Count is the element count c described above.
	Count int
	// Root is the root rank of broadcast, reduce, gather and scatter.
	Root int
	Send []byte
	Recv []byte
	// Counts are the element counts of a variable-size collective
	// (alltoallv, allgatherv, reducescatterv), the same on every rank and
	// shared, never modified; nil for the others. Count is then the row's
	// nominal block, which only auto's choice reads.
	Counts *Counts
}

// Bytes returns the byte length of one count-sized block.
func (a *Args) Bytes() int { return a.Count * a.DType.Size() }

// validate checks a against the buffer conventions for a world of n ranks
// seen from rank.
func (a *Args) validate(rank, n int) error {
	if !a.Op.Valid() {
		return fmt.Errorf("invalid collective %v", a.Op)
	}
	if !a.DType.Valid() {
		return fmt.Errorf("invalid data type %v", a.DType)
	}
	if a.Op.Reduces() && !a.RedOp.Valid() {
		return fmt.Errorf("%v needs a reduction operator", a.Op)
	}
	if a.Count < 0 {
		return fmt.Errorf("negative count %d", a.Count)
	}
	if a.Op.Rooted() && (a.Root < 0 || a.Root >= n) {
		return fmt.Errorf("root %d out of range [0, %d)", a.Root, n)
	}
	d := a.Op.Desc()
	sendBlocks, recvBlocks := d.Lengths(rank, a.Root, n)
	sendLen, recvLen := sendBlocks*a.Bytes(), recvBlocks*a.Bytes()
	if d.Variable() {
		if a.Counts == nil {
			return fmt.Errorf("%v needs counts (Args.Counts)", a.Op)
		}
		if a.Counts.Ranks() != n {
			return fmt.Errorf("counts of %d ranks in a world of %d", a.Counts.Ranks(), n)
		}
		s, r := d.VLengths(rank, a.Counts)
		sendLen, recvLen = s*a.DType.Size(), r*a.DType.Size()
	} else if a.Counts != nil {
		return fmt.Errorf("%v takes no counts", a.Op)
	}
	if len(a.Send) < sendLen {
		return fmt.Errorf("send buffer of %d bytes, need %d", len(a.Send), sendLen)
	}
	if len(a.Recv) < recvLen {
		return fmt.Errorf("receive buffer of %d bytes, need %d", len(a.Recv), recvLen)
	}
	return nil
}
