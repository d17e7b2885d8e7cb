//go:build mpi && cgo

package main

// Built with -tags mpi: --backend mpi, whose ranks are MPI processes
// (mpirun -np N hccl-test --backend mpi ...).
import _ "github.com/hccl-test/hccl-test/backends/mpi" // registers --backend mpi
