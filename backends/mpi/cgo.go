//go:build mpi && cgo

package mpi

// The Go side of the C functions in hccl_mpi.c (declared in hccl_mpi.h),
// and what every file of the package shares: the mutex that serialises MPI
// calls, and the translation of MPI's errors.

/*
#cgo pkg-config: ompi-c
#include "hccl_mpi.h"
*/
import "C"

import (
	"fmt"
	"math"
	"sync"
	"unsafe"

	"github.com/hccl-test/hccl-test/backends"
)

// mu serialises every MPI call of the process (MPI_THREAD_SERIALIZED).
var mu sync.Mutex

// maxCount is the largest count an MPI call takes (an int).
const maxCount = math.MaxInt32

// mpiError turns an MPI return code into an error: nil for MPI_SUCCESS, an
// error wrapping backends.ErrMismatch for a truncated message, and the
// library's own description otherwise. Call it with mu held.
func mpiError(code C.int) error {
	if code == C.MPI_SUCCESS {
		return nil
	}
	var buf [C.MPI_MAX_ERROR_STRING + 1]C.char
	var n, class C.int
	C.hccl_errstr(code, &buf[0], &n, &class)
	msg := C.GoStringN(&buf[0], n)
	if class == C.MPI_ERR_TRUNCATE {
		return fmt.Errorf("%w: the message is longer than the receive (%s)", backends.ErrMismatch, msg)
	}
	return fmt.Errorf("MPI error %d: %s", int(code), msg)
}

// ptr returns the address of b's first byte for C, nil for an empty b.
func ptr(b []byte) unsafe.Pointer {
	if len(b) == 0 {
		return nil
	}
	return unsafe.Pointer(unsafe.SliceData(b))
}

// world is this process's place in MPI_COMM_WORLD.
type world struct {
	rank, size int
	local      int // ranks on this host, this one included; 0 if unknown
}

// initMPI initialises MPI and the package's communicators. Call it with mu
// held, on a locked OS thread (the thread that will call finalizeMPI).
func initMPI() (world, error) {
	var provided C.int
	switch rc := C.hccl_init(C.MPI_THREAD_SERIALIZED, &provided); {
	case rc == -1:
		return world{}, fmt.Errorf("mpi: MPI was already initialised in this process (the backend runs one world per process)")
	case rc != C.MPI_SUCCESS:
		return world{}, fmt.Errorf("mpi: MPI_Init_thread: error %d", int(rc))
	}
	var r, s, l C.int
	if err := mpiError(C.hccl_setup(&r, &s, &l)); err != nil {
		return world{}, fmt.Errorf("mpi: setting up communicators: %w", err)
	}
	return world{rank: int(r), size: int(s), local: int(l)}, nil
}

// finalizeMPI releases the communicators and finalises MPI. Call it with mu
// held, on the thread that called initMPI.
func finalizeMPI() error {
	if err := mpiError(C.hccl_finalize()); err != nil {
		return fmt.Errorf("mpi: MPI_Finalize: %w", err)
	}
	return nil
}
