// Package mpi is the backend whose ranks are MPI processes: mpirun starts one
// process per rank, and every message goes through the MPI library. The C
// side is plain MPI-3; it builds against Open MPI (pkg-config ompi-c). It is
// compiled only with the build tag mpi (and cgo), so that the default build
// stays pure Go and needs no MPI installed:
//
//	go build -tags mpi -o hccl-test ./cmd/hccl-test
//	mpirun -np 4 ./hccl-test --backend mpi --op allreduce -b 1K -e 1M
//
// Two ways to run a collective on it:
//
//   - --algo auto, or any algorithm by name: hccl-test's own algorithms run
//     over MPI point-to-point messages of MPI_BYTE on a duplicated
//     communicator, as they run over shm and tcp. A send is an MPI_Isend; a
//     receive waits in its peer's queue until MPI_Improbe finds the next
//     message from that peer, and is then an MPI_Imrecv of it, so that a
//     message of the wrong length fails the receive (backends.ErrMismatch)
//     without being written over the receive buffer (Open MPI 4.1 writes a
//     whole rendezvous-size message into a shorter receive, and only then
//     reports MPI_ERR_TRUNCATE).
//   - --algo native: the whole call goes to MPI's own collective
//     (MPI_Iallreduce, MPI_Iallgather, MPI_Ireduce_scatter_block, MPI_Ibcast,
//     MPI_Ireduce, MPI_Ialltoall, MPI_Igather, MPI_Iscatter, a send and
//     receive pair for sendrecv, and MPI_Ialltoallv, MPI_Iallgatherv and
//     MPI_Ireduce_scatter for the variable-size collectives, given the
//     counts and displacements of coll's layout), with MPI_IN_PLACE for
//     in-place calls, so that the library's collectives are timed and
//     checked by the same harness as ours. fp16 and bf16 reduce through user-defined MPI_Ops that
//     call the dtype package's kernels; avg is MPI_SUM followed by a
//     division on the ranks that hold a result.
//
// Every MPI call is made under one mutex (MPI_THREAD_SERIALIZED); a
// goroutine locked to the thread that called MPI_Init_thread calls
// MPI_Finalize. A wait polls MPI_Test: it yields to other goroutines for a
// while (HCCL_TEST_SPIN, default 50us, when the host has at least as many
// CPUs as ranks on it; not at all otherwise), then yields the CPU
// (sched_yield) for 200us, then sleeps 20 to 50 microseconds between polls,
// so that many ranks on few cores do not starve each other. A deadline ends
// a wait with an error wrapping backends.ErrTimeout, a cancelled context
// with context.Canceled.
//
// The native collectives are MPI-3 nonblocking collectives, waited for with
// the same polling wait, so --timeout works for them too. Setting
// HCCL_TEST_MPI_COLL=blocking runs the blocking collectives (MPI_Allreduce,
// ...) instead, which in Open MPI take the tuned algorithms rather than
// libnbc's schedules, as MPI programs calling them do: that is what
// scripts/vs-mpi.sh compares against (libnbc was slower on small messages
// when measured on 2 and 8 ranks). A deadline cannot interrupt those.
//
// Limits: a single message or collective count must fit MPI's int count
// (2^31-1 bytes for point-to-point messages, 2^31-1 elements for
// collectives); MPI can be initialised once per process, so Backend.Run can
// be called once. After a failed run the process does not call MPI_Finalize
// (its peers may be stuck in a collective) and mpirun ends the job.
package mpi
