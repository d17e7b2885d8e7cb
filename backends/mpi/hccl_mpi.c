//go:build mpi && cgo

// The MPI calls of package mpi; see hccl_mpi.h.

#include <stdlib.h>
#include "hccl_mpi.h"

static MPI_Comm hccl_p2p = MPI_COMM_NULL;  // point-to-point messages of the Transport
static MPI_Comm hccl_coll = MPI_COMM_NULL; // native collectives
static MPI_Op hccl_half_ops[2][5];         // [bf16][HR_*]: user-defined ops for fp16, bf16

// hcclHalfReduce is exported by half.go: inout = op(in, inout) on fp16 or
// bf16 elements, with the dtype package's kernels.
extern void hcclHalfReduce(int bf16, int op, void *in, void *inout, int len);

#define HALF_OP(name, bf, op) \
	static void name(void *in, void *inout, int *len, MPI_Datatype *dt) { \
		(void)dt; hcclHalfReduce(bf, op, in, inout, *len); }
HALF_OP(hccl_f16_sum, 0, HR_SUM)
HALF_OP(hccl_f16_prod, 0, HR_PROD)
HALF_OP(hccl_f16_max, 0, HR_MAX)
HALF_OP(hccl_f16_min, 0, HR_MIN)
HALF_OP(hccl_bf16_sum, 1, HR_SUM)
HALF_OP(hccl_bf16_prod, 1, HR_PROD)
HALF_OP(hccl_bf16_max, 1, HR_MAX)
HALF_OP(hccl_bf16_min, 1, HR_MIN)

int hccl_init(int want, int *provided) {
	int flag = 0;
	MPI_Initialized(&flag);
	if (flag) return -1;
	MPI_Finalized(&flag);
	if (flag) return -1;
	return MPI_Init_thread(NULL, NULL, want, provided);
}

int hccl_setup(int *rank, int *size, int *local) {
	int rc;
	MPI_Comm node;
	MPI_User_function *fns[2][5] = {
		{NULL, hccl_f16_sum, hccl_f16_prod, hccl_f16_max, hccl_f16_min},
		{NULL, hccl_bf16_sum, hccl_bf16_prod, hccl_bf16_max, hccl_bf16_min},
	};
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	if ((rc = MPI_Comm_rank(MPI_COMM_WORLD, rank)) != MPI_SUCCESS) return rc;
	if ((rc = MPI_Comm_size(MPI_COMM_WORLD, size)) != MPI_SUCCESS) return rc;
	if ((rc = MPI_Comm_dup(MPI_COMM_WORLD, &hccl_p2p)) != MPI_SUCCESS) return rc;
	if ((rc = MPI_Comm_dup(MPI_COMM_WORLD, &hccl_coll)) != MPI_SUCCESS) return rc;
	MPI_Comm_set_errhandler(hccl_p2p, MPI_ERRORS_RETURN);
	MPI_Comm_set_errhandler(hccl_coll, MPI_ERRORS_RETURN);
	*local = 0;
	if (MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) == MPI_SUCCESS) {
		MPI_Comm_size(node, local);
		MPI_Comm_free(&node);
	}
	for (int b = 0; b < 2; b++)
		for (int o = HR_SUM; o <= HR_MIN; o++)
			if ((rc = MPI_Op_create(fns[b][o], 1, &hccl_half_ops[b][o])) != MPI_SUCCESS) return rc;
	return MPI_SUCCESS;
}

int hccl_finalize(void) {
	for (int b = 0; b < 2; b++)
		for (int o = HR_SUM; o <= HR_MIN; o++)
			if (hccl_half_ops[b][o] != MPI_OP_NULL && hccl_half_ops[b][o] != NULL) MPI_Op_free(&hccl_half_ops[b][o]);
	if (hccl_p2p != MPI_COMM_NULL) MPI_Comm_free(&hccl_p2p);
	if (hccl_coll != MPI_COMM_NULL) MPI_Comm_free(&hccl_coll);
	return MPI_Finalize();
}

void hccl_errstr(int code, char *buf, int *len, int *class) {
	*len = 0;
	*class = MPI_ERR_OTHER;
	if (MPI_Error_string(code, buf, len) != MPI_SUCCESS) *len = 0;
	MPI_Error_class(code, class);
}

int hccl_isend(void *buf, int n, int peer, MPI_Request *req) {
	return MPI_Isend(buf, n, MPI_BYTE, peer, 0, hccl_p2p, req);
}

int hccl_improbe(int peer, int *found, MPI_Message *msg, int *count) {
	MPI_Status st;
	int rc = MPI_Improbe(peer, 0, hccl_p2p, found, msg, &st);
	if (rc == MPI_SUCCESS && *found) rc = MPI_Get_count(&st, MPI_BYTE, count);
	return rc;
}

int hccl_imrecv(void *buf, int n, MPI_Message *msg, MPI_Request *req) {
	return MPI_Imrecv(buf, n, MPI_BYTE, msg, req);
}

int hccl_test(MPI_Request *req, int *done, int *count) {
	MPI_Status st;
	*done = 0;
	if (*req == NULL || *req == MPI_REQUEST_NULL) {
		*done = 1;
		return MPI_SUCCESS;
	}
	int rc = MPI_Test(req, done, &st);
	if (rc != MPI_SUCCESS) {
		*done = 1;
		*req = MPI_REQUEST_NULL;
		return rc;
	}
	if (*done && count != NULL) rc = MPI_Get_count(&st, MPI_BYTE, count);
	return rc;
}

int hccl_try_cancel(MPI_Request *req) {
	int done = 0;
	if (*req == NULL || *req == MPI_REQUEST_NULL) return 1;
	MPI_Cancel(req);
	if (MPI_Test(req, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS) {
		*req = MPI_REQUEST_NULL;
		return 1;
	}
	return done;
}

int hccl_cancel(MPI_Request *req) {
	if (hccl_try_cancel(req)) return 1;
	MPI_Request_free(req);
	return 0;
}

// hccl_type is the MPI type of element type t (HT_*).
static MPI_Datatype hccl_type(int t) {
	switch (t) {
	case HT_INT8: return MPI_INT8_T;
	case HT_UINT8: return MPI_UINT8_T;
	case HT_INT16: return MPI_INT16_T;
	case HT_UINT16: case HT_FP16: case HT_BF16: return MPI_UINT16_T;
	case HT_INT32: return MPI_INT32_T;
	case HT_UINT32: return MPI_UINT32_T;
	case HT_INT64: return MPI_INT64_T;
	case HT_UINT64: return MPI_UINT64_T;
	case HT_FP32: return MPI_FLOAT;
	case HT_FP64: return MPI_DOUBLE;
	}
	return MPI_DATATYPE_NULL;
}

// hccl_op is the MPI reduction r (HR_*) on element type t.
static MPI_Op hccl_op(int t, int r) {
	if (r < HR_SUM || r > HR_MIN) return MPI_OP_NULL;
	if (t == HT_FP16 || t == HT_BF16) return hccl_half_ops[t == HT_BF16][r];
	switch (r) {
	case HR_SUM: return MPI_SUM;
	case HR_PROD: return MPI_PROD;
	case HR_MAX: return MPI_MAX;
	}
	return MPI_MIN;
}

int hccl_coll_call(int op, int blocking, int inplace, void *s, void *r, int count,
		int t, int red, int root, MPI_Request *req) {
	MPI_Comm c = hccl_coll;
	MPI_Datatype dt = hccl_type(t);
	MPI_Op o = hccl_op(t, red);
	const void *sb = inplace ? MPI_IN_PLACE : s;
	*req = MPI_REQUEST_NULL;
	switch (op) {
	case HC_ALLREDUCE:
		return blocking ? MPI_Allreduce(sb, r, count, dt, o, c) : MPI_Iallreduce(sb, r, count, dt, o, c, req);
	case HC_ALLGATHER:
		return blocking ? MPI_Allgather(sb, count, dt, r, count, dt, c)
			: MPI_Iallgather(sb, count, dt, r, count, dt, c, req);
	case HC_REDUCESCATTER:
		return blocking ? MPI_Reduce_scatter_block(sb, r, count, dt, o, c)
			: MPI_Ireduce_scatter_block(sb, r, count, dt, o, c, req);
	case HC_BCAST:
		return blocking ? MPI_Bcast(r, count, dt, root, c) : MPI_Ibcast(r, count, dt, root, c, req);
	case HC_REDUCE:
		return blocking ? MPI_Reduce(sb, r, count, dt, o, root, c) : MPI_Ireduce(sb, r, count, dt, o, root, c, req);
	case HC_ALLTOALL:
		return blocking ? MPI_Alltoall(sb, count, dt, r, count, dt, c)
			: MPI_Ialltoall(sb, count, dt, r, count, dt, c, req);
	case HC_GATHER:
		return blocking ? MPI_Gather(sb, count, dt, r, count, dt, root, c)
			: MPI_Igather(sb, count, dt, r, count, dt, root, c, req);
	case HC_SCATTER: {
		void *rb = inplace ? MPI_IN_PLACE : r;
		return blocking ? MPI_Scatter(s, count, dt, rb, count, dt, root, c)
			: MPI_Iscatter(s, count, dt, rb, count, dt, root, c, req);
	}
	}
	return MPI_ERR_ARG;
}

int hccl_coll_v(int op, int blocking, int inplace, void *s, const int *sc, const int *sd,
		void *r, const int *rc, const int *rd, int t, int red, int rank, MPI_Request *req) {
	MPI_Comm c = hccl_coll;
	MPI_Datatype dt = hccl_type(t);
	const void *sb = inplace ? MPI_IN_PLACE : s;
	*req = MPI_REQUEST_NULL;
	switch (op) {
	case HC_ALLTOALLV:
		if (inplace) return MPI_ERR_ARG;
		return blocking ? MPI_Alltoallv(s, sc, sd, dt, r, rc, rd, dt, c)
			: MPI_Ialltoallv(s, sc, sd, dt, r, rc, rd, dt, c, req);
	case HC_ALLGATHERV:
		return blocking ? MPI_Allgatherv(sb, rc[rank], dt, r, rc, rd, dt, c)
			: MPI_Iallgatherv(sb, rc[rank], dt, r, rc, rd, dt, c, req);
	case HC_REDUCESCATTERV: {
		MPI_Op o = hccl_op(t, red);
		return blocking ? MPI_Reduce_scatter(sb, r, sc, dt, o, c)
			: MPI_Ireduce_scatter(sb, r, sc, dt, o, c, req);
	}
	}
	return MPI_ERR_ARG;
}

int hccl_sendrecv(int blocking, int inplace, void *s, void *r, int count, int t,
		int rank, int size, MPI_Request *req) {
	MPI_Datatype dt = hccl_type(t);
	int to = (rank + 1) % size, from = (rank + size - 1) % size, rc;
	req[0] = req[1] = MPI_REQUEST_NULL;
	if (blocking && inplace)
		return MPI_Sendrecv_replace(r, count, dt, to, 1, from, 1, hccl_coll, MPI_STATUS_IGNORE);
	if (blocking)
		return MPI_Sendrecv(s, count, dt, to, 1, r, count, dt, from, 1, hccl_coll, MPI_STATUS_IGNORE);
	if ((rc = MPI_Irecv(r, count, dt, from, 1, hccl_coll, &req[0])) != MPI_SUCCESS) return rc;
	return MPI_Isend(s, count, dt, to, 1, hccl_coll, &req[1]);
}
