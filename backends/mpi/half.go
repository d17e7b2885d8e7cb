//go:build mpi && cgo

package mpi

// The fp16 and bf16 reductions of the native collectives: MPI has no 16-bit
// float types, so those collectives move MPI_UINT16_T elements and reduce
// them with user-defined MPI_Ops (made in cgo.go) that call back here.

import "C"

import (
	"unsafe"

	"github.com/hccl-test/hccl-test/dtype"
)

// halfOps maps the C reduction codes (HR_SUM..HR_MIN) to the dtype package's.
var halfOps = [...]dtype.ReduceOp{1: dtype.Sum, 2: dtype.Prod, 3: dtype.Max, 4: dtype.Min}

// hcclHalfReduce computes inout = op(in, inout) on n fp16 (bf16 == 0) or
// bf16 elements. MPI calls it from inside an MPI call of this package, on
// the calling goroutine, with mu held.
//
//export hcclHalfReduce
func hcclHalfReduce(bf16, op C.int, in, inout unsafe.Pointer, n C.int) {
	if n <= 0 || op < 1 || int(op) >= len(halfOps) {
		return
	}
	dt := dtype.FP16
	if bf16 != 0 {
		dt = dtype.BF16
	}
	bytes := int(n) * 2
	b := unsafe.Slice((*byte)(in), bytes)
	dst := unsafe.Slice((*byte)(inout), bytes)
	dtype.Reducer(dt, halfOps[op])(dst, b, dst)
}
