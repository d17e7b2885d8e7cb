//go:build mpi && cgo

package mpi

/*
#include "hccl_mpi.h"
*/
import "C"

import (
	"fmt"

	"github.com/hccl-test/hccl-test/backends"
	"github.com/hccl-test/hccl-test/dtype"
)

// postNativeV posts a variable-size call (alltoallv, allgatherv,
// reducescatterv), with mu held: MPI_Ialltoallv, MPI_Iallgatherv or
// MPI_Ireduce_scatter, or their blocking forms. The counts and
// displacements of the call are checked first (vLens), so that MPI reads
// and writes inside the buffers; MPI keeps the arrays until the call
// completes, so they are pinned with the buffers.
func (t *Transport) postNativeV(r *request, call backends.NativeCall, code, dt, red C.int) error {
	sendN, recvN, err := vLens(call, t.rank, t.size)
	if err != nil {
		return err
	}
	es := call.DType.Size()
	if len(call.Send) < sendN*es || len(call.Recv) < recvN*es {
		return fmt.Errorf("buffers of %d and %d bytes, need %d and %d", len(call.Send), len(call.Recv), sendN*es, recvN*es)
	}
	send, recv := call.Send[:sendN*es], call.Recv[:recvN*es]
	if call.Op == "reducescatterv" && call.InPlace {
		// MPI_IN_PLACE: the input is the receive buffer, the result its
		// first block; move it to this rank's block afterwards.
		whole, mine := send, recv
		r.finish = func() error {
			copy(mine, whole[:len(mine)])
			return nil
		}
		recv = whole
	}
	if call.Reduces && call.RedOp == dtype.Avg {
		r.thenDivide(call.DType, call.Recv[:recvN*es], t.size)
	}
	// Only the arrays of a side of blocks, which vLens checked, reach C.
	var sc, sd, rc, rd *C.int
	sendBlocks, recvBlocks, _ := vSides(call.Op)
	if sendBlocks {
		sc, sd = r.pinInts(call.SendCounts), r.pinInts(call.SendDispls)
	}
	if recvBlocks {
		rc, rd = r.pinInts(call.RecvCounts), r.pinInts(call.RecvDispls)
	}
	r.pinBuf(send)
	r.pinBuf(recv)
	var blocking C.int
	if t.blocking {
		blocking = 1
	}
	r.post(C.hccl_coll_v(code, blocking, cbool(call.InPlace), ptr(send), sc, sd, ptr(recv), rc, rd,
		dt, red, C.int(t.rank), &r.reqs[0]), 1)
	return nil
}

// vLens returns the elements that the MPI call of a variable-size call
// reads from the send buffer and writes to the receive buffer on rank of
// n: the ends of the blocks it is given (and for a side of one block, this
// rank's count on the other side), which is why they come from the arrays
// that MPI is given and from nothing else. It refuses arrays that are
// missing or not one entry per rank, a negative count or displacement, a
// block ending past MPI's int count, reducescatterv's blocks other than
// one after another from 0 (MPI_Reduce_scatter has no displacements), and
// an in-place alltoallv, which has no layout here.
func vLens(call backends.NativeCall, rank, n int) (send, recv int, err error) {
	sendBlocks, recvBlocks, ok := vSides(call.Op)
	switch {
	case !ok:
		return 0, 0, fmt.Errorf("%q is not a variable-size collective", call.Op)
	case call.Op == "alltoallv" && call.InPlace:
		return 0, 0, fmt.Errorf("alltoallv has no in-place call")
	}
	if sendBlocks {
		if send, err = blocksEnd("send", call.SendCounts, call.SendDispls, n); err != nil {
			return 0, 0, err
		}
	}
	if recvBlocks {
		if recv, err = blocksEnd("receive", call.RecvCounts, call.RecvDispls, n); err != nil {
			return 0, 0, err
		}
	}
	switch call.Op {
	case "allgatherv":
		send = call.RecvCounts[rank]
	case "reducescatterv":
		recv = call.SendCounts[rank]
		off := 0
		for j, c := range call.SendCounts {
			if call.SendDispls[j] != off {
				return 0, 0, fmt.Errorf("send block %d at element %d, not %d: MPI_Reduce_scatter takes the blocks one after another", j, call.SendDispls[j], off)
			}
			off += c
		}
	}
	return send, recv, nil
}

// vSides reports which sides of variable-size collective op hold one block
// per rank, each with its counts and displacements; false for another op.
func vSides(op string) (send, recv, ok bool) {
	switch op {
	case "alltoallv":
		return true, true, true
	case "allgatherv":
		return false, true, true
	case "reducescatterv":
		return true, false, true
	}
	return false, false, false
}

// blocksEnd checks one side's counts and displacements, one per rank of n,
// and returns the element after the last block's end.
func blocksEnd(side string, counts, displs []int, n int) (int, error) {
	if len(counts) != n || len(displs) != n {
		return 0, fmt.Errorf("%d %s counts and %d displacements for %d ranks", len(counts), side, len(displs), n)
	}
	end := 0
	for j, c := range counts {
		d := displs[j]
		switch {
		case c < 0 || d < 0:
			return 0, fmt.Errorf("%s block %d: %d elements at element %d", side, j, c, d)
		case c > maxCount || d > maxCount-c:
			return 0, fmt.Errorf("%s block %d: %d elements at element %d end past MPI's int count (%d)", side, j, c, d, maxCount)
		}
		end = max(end, d+c)
	}
	return end, nil
}

// pinInts returns v as MPI's ints, pinned until the request completes; nil
// for none.
func (r *request) pinInts(v []int) *C.int {
	if len(v) == 0 {
		return nil
	}
	out := make([]C.int, len(v))
	for i, x := range v {
		out[i] = C.int(x) // in range: vLens checked every entry
	}
	r.pin.Pin(&out[0])
	r.pinned = true
	return &out[0]
}
