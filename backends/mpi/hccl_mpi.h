//go:build mpi && cgo

// The C side of package mpi: every MPI call the package makes, each behind a
// small function, because Open MPI's handles (MPI_COMM_WORLD, MPI_BYTE, ...)
// are macros that take the address of library globals, which cgo cannot use
// directly. The communicators live in hccl_mpi.c: MPI is initialised once
// per process, so there is one point-to-point communicator and one
// collective communicator per process.

#ifndef HCCL_MPI_H
#define HCCL_MPI_H

#include <mpi.h>

// Element types and reductions, as the Go side names them.
enum { HT_INT8 = 1, HT_UINT8, HT_INT16, HT_UINT16, HT_INT32, HT_UINT32, HT_INT64, HT_UINT64,
	HT_FP16, HT_BF16, HT_FP32, HT_FP64 };
enum { HR_NONE = 0, HR_SUM, HR_PROD, HR_MAX, HR_MIN };
// Collectives; sendrecv has a function of its own.
enum { HC_ALLREDUCE = 1, HC_ALLGATHER, HC_REDUCESCATTER, HC_BCAST, HC_REDUCE, HC_ALLTOALL,
	HC_GATHER, HC_SCATTER, HC_ALLTOALLV, HC_ALLGATHERV, HC_REDUCESCATTERV };

// hccl_init initialises MPI, once per process; -1 if it already was.
int hccl_init(int want, int *provided);
// hccl_setup makes the communicators, which return errors rather than
// abort, and the fp16 and bf16 reductions, and counts the ranks that share
// this host (0 if unknown).
int hccl_setup(int *rank, int *size, int *local);
// hccl_finalize releases what hccl_setup made and finalises MPI.
int hccl_finalize(void);
// hccl_errstr describes an error code and gives its class.
void hccl_errstr(int code, char *buf, int *len, int *class);

// Point-to-point messages of MPI_BYTE on the transport's communicator.
int hccl_isend(void *buf, int n, int peer, MPI_Request *req);
// hccl_improbe looks for the next message from peer (MPI_Improbe) and,
// when there is one, takes it out of matching and gives its length. A
// receive is posted only for a message whose length is known: Open MPI
// 4.1 writes a whole rendezvous-size message into a shorter receive buffer
// (and then reports MPI_ERR_TRUNCATE).
int hccl_improbe(int peer, int *found, MPI_Message *msg, int *count);
// hccl_imrecv receives a message that hccl_improbe found.
int hccl_imrecv(void *buf, int n, MPI_Message *msg, MPI_Request *req);
// hccl_test tests req; for a completed receive (count != NULL) it stores
// the bytes received. An error completes the request. A null request (or
// a zero handle) is complete and leaves *count alone.
int hccl_test(MPI_Request *req, int *done, int *count);
// hccl_try_cancel asks MPI to cancel a point-to-point request and reports
// whether it is gone (cancelled, or completed after all).
int hccl_try_cancel(MPI_Request *req);
// hccl_cancel gives up on a point-to-point request: cancels it if it can,
// and otherwise frees the handle and lets the operation finish in the
// background (then it returns 0).
int hccl_cancel(MPI_Request *req);

// hccl_coll_call runs collective op (HC_*), nonblocking (a request in *req)
// or blocking (*req stays null). inplace passes MPI_IN_PLACE for the send
// buffer (the receive buffer for scatter); for reducescatter the receive
// buffer is then the whole input, and the result its first block.
int hccl_coll_call(int op, int blocking, int inplace, void *s, void *r, int count,
	int t, int red, int root, MPI_Request *req);
// hccl_coll_v runs variable-size collective op (HC_ALLTOALLV, HC_ALLGATHERV,
// HC_REDUCESCATTERV) as hccl_coll_call runs the others, with MPI's count
// and displacement arrays: sc, sd for the send buffer's blocks (alltoallv;
// reducescatterv's recvcounts, its blocks one after another), rc, rd for
// the receive buffer's (alltoallv, allgatherv, whose send count is
// rc[rank]). The arrays must stay as they are until the call completes.
// inplace passes MPI_IN_PLACE for the send buffer (not for alltoallv); for
// reducescatterv the receive buffer is then the whole input, and the
// result its first block.
int hccl_coll_v(int op, int blocking, int inplace, void *s, const int *sc, const int *sd,
	void *r, const int *rc, const int *rd, int t, int red, int rank, MPI_Request *req);
// hccl_sendrecv sends s to rank+1 while receiving r from rank-1 on the
// collective communicator: blocking (MPI_Sendrecv, or MPI_Sendrecv_replace
// in place), or as two requests, the receive in req[0], the send in req[1].
int hccl_sendrecv(int blocking, int inplace, void *s, void *r, int count, int t,
	int rank, int size, MPI_Request *req);

#endif
