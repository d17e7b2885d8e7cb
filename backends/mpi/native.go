//go:build mpi && cgo

package mpi

/*
#include "hccl_mpi.h"
*/
import "C"

import (
	"context"
	"fmt"
	"unsafe"

	"github.com/hccl-test/hccl-test/backends"
	"github.com/hccl-test/hccl-test/dtype"
)

// mpiTypes maps element types to the C side's codes (HT_*).
var mpiTypes = map[dtype.DType]C.int{
	dtype.Int8: C.HT_INT8, dtype.Uint8: C.HT_UINT8, dtype.Int16: C.HT_INT16, dtype.Uint16: C.HT_UINT16,
	dtype.Int32: C.HT_INT32, dtype.Uint32: C.HT_UINT32, dtype.Int64: C.HT_INT64, dtype.Uint64: C.HT_UINT64,
	dtype.FP16: C.HT_FP16, dtype.BF16: C.HT_BF16, dtype.FP32: C.HT_FP32, dtype.FP64: C.HT_FP64,
}

// mpiOps maps reductions to the C side's codes (HR_*); avg is a sum,
// divided afterwards.
var mpiOps = map[dtype.ReduceOp]C.int{
	dtype.Sum: C.HR_SUM, dtype.Prod: C.HR_PROD, dtype.Max: C.HR_MAX, dtype.Min: C.HR_MIN, dtype.Avg: C.HR_SUM,
}

// collectives maps NativeCall.Op to the C side's codes (HC_*), the MPI
// call each runs; sendrecv has its own path. A collective missing here has
// no native counterpart, and runs with our algorithms only.
var collectives = map[string]C.int{
	"allreduce": C.HC_ALLREDUCE, "allgather": C.HC_ALLGATHER, "reducescatter": C.HC_REDUCESCATTER,
	"broadcast": C.HC_BCAST, "reduce": C.HC_REDUCE, "alltoall": C.HC_ALLTOALL,
	"gather": C.HC_GATHER, "scatter": C.HC_SCATTER,
	"alltoallv": C.HC_ALLTOALLV, "allgatherv": C.HC_ALLGATHERV, "reducescatterv": C.HC_REDUCESCATTERV,
}

// RunNative implements backends.Native with MPI's own collectives, on a
// communicator of their own: MPI_Iallreduce, MPI_Iallgather,
// MPI_Ireduce_scatter_block, MPI_Ibcast, MPI_Ireduce, MPI_Ialltoall,
// MPI_Igather, MPI_Iscatter, for sendrecv an MPI_Irecv from rank-1 with
// an MPI_Isend to rank+1, and for the variable-size collectives
// MPI_Ialltoallv, MPI_Iallgatherv and MPI_Ireduce_scatter (the blocking
// calls with HCCL_TEST_MPI_COLL=blocking). In-place calls, recognised by
// the buffer conventions of coll.Args, pass MPI_IN_PLACE.
func (t *Transport) RunNative(ctx context.Context, call backends.NativeCall) error {
	r := &request{t: t, kind: kindNative, op: call.Op}
	if ctx.Err() != nil {
		// Posting now would leave MPI a collective nobody waits for.
		return r.wrap(backends.ContextError(ctx))
	}
	mu.Lock()
	if err := t.postNative(r, call); err != nil {
		r.release()
		r.done, r.err = true, r.wrap(err)
	}
	if t.blocking && !r.done {
		// The call has already completed (a blocking MPI call).
		r.poll()
	}
	mu.Unlock()
	return r.Wait(ctx)
}

// postNative posts call, with mu held.
func (t *Transport) postNative(r *request, call backends.NativeCall) error {
	if t.closed {
		return backends.ErrClosed
	}
	dt, ok := mpiTypes[call.DType]
	if !ok {
		return fmt.Errorf("invalid data type %v", call.DType)
	}
	code, ok := collectives[call.Op]
	if !ok && call.Op != "sendrecv" {
		return fmt.Errorf("unknown collective %q", call.Op)
	}
	reduces := call.Reduces
	var red C.int
	if reduces {
		if red, ok = mpiOps[call.RedOp]; !ok {
			return fmt.Errorf("invalid reduction %v", call.RedOp)
		}
	}
	if call.Rooted && (call.Root < 0 || call.Root >= t.size) {
		return fmt.Errorf("root %d out of range [0, %d)", call.Root, t.size)
	}
	if call.Count < 0 || call.Count > maxCount {
		return fmt.Errorf("count %d: MPI takes 0 to %d elements", call.Count, maxCount)
	}
	if call.Variable {
		return t.postNativeV(r, call, code, dt, red)
	}
	b := call.Count * call.DType.Size()
	sendLen, recvLen := nativeLens(call.Op, t.rank, t.size, call.Root, b)
	if len(call.Send) < sendLen || len(call.Recv) < recvLen {
		return fmt.Errorf("buffers of %d and %d bytes, need %d and %d", len(call.Send), len(call.Recv), sendLen, recvLen)
	}
	send, recv := call.Send[:sendLen], call.Recv[:recvLen]
	root := call.Root == t.rank
	// The descriptor's in-place layouts are MPI's: MPI_IN_PLACE stands
	// for the buffer that the other holds (the C side picks which), except
	// for broadcast, whose MPI call has one buffer.
	inplace := call.InPlace
	if call.Op == "broadcast" {
		if root && !inplace {
			copy(recv, send)
		}
		inplace = false
	}
	r.pinBuf(send)
	r.pinBuf(recv)
	var blocking C.int
	if t.blocking {
		blocking = 1
	}

	if call.Op == "sendrecv" {
		// A blocking MPI_Sendrecv leaves no status to count.
		r.kind, r.counted, r.want = kindNativeP2P, !t.blocking, b
		if inplace && !t.blocking {
			r.tmp = t.pool.get(b)
			copy(r.tmp, send)
			send = r.tmp
			r.pinBuf(send)
			inplace = false
		}
		r.post(C.hccl_sendrecv(blocking, cbool(inplace), ptr(send), ptr(recv), C.int(call.Count), dt,
			C.int(t.rank), C.int(t.size), &r.reqs[0]), 2)
		return nil
	}
	cnt := call.Count
	if call.Op == "reducescatter" && inplace {
		// MPI_IN_PLACE: the input is the receive buffer, the result its
		// first block; move it to this rank's block afterwards.
		whole, mine := send, recv
		r.finish = func() error {
			copy(mine, whole[:b])
			return nil
		}
		recv = whole
	}
	if call.RedOp == dtype.Avg && reduces && (code != C.HC_REDUCE || root) {
		r.thenDivide(call.DType, call.Recv[:b], t.size)
	}
	r.post(C.hccl_coll_call(code, blocking, cbool(inplace), ptr(send), ptr(recv), C.int(cnt), dt, red,
		C.int(call.Root), &r.reqs[0]), 1)
	return nil
}

// thenDivide makes r divide res by n once its call completes, after what
// r.finish already does: avg is MPI_SUM, divided afterwards.
func (r *request) thenDivide(dt dtype.DType, res []byte, n int) {
	prev := r.finish
	r.finish = func() error {
		if prev != nil {
			if err := prev(); err != nil {
				return err
			}
		}
		dtype.DivideBy(dt, res, n)
		return nil
	}
}

// nativeLens returns the send and receive bytes that the MPI call of op
// reads and writes on rank of n, with b bytes per block: the bounds that
// keep C inside the buffers, which is why they are MPI's own figures and
// not taken from the caller.
func nativeLens(op string, rank, n, root, b int) (send, recv int) {
	switch op {
	case "allgather":
		return b, n * b
	case "reducescatter":
		return n * b, b
	case "alltoall":
		return n * b, n * b
	case "gather":
		if rank == root {
			return b, n * b
		}
		return b, 0
	case "scatter":
		if rank == root {
			return n * b, b
		}
		return 0, b
	case "broadcast":
		if rank == root {
			return b, b
		}
		return 0, b
	case "reduce":
		if rank == root {
			return b, b
		}
		return b, 0
	}
	return b, b
}

// sameStart reports whether a and b start at the same byte.
func sameStart(a, b []byte) bool {
	return len(a) > 0 && len(b) > 0 && unsafe.SliceData(a) == unsafe.SliceData(b)
}

func cbool(b bool) C.int {
	if b {
		return 1
	}
	return 0
}
