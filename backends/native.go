package backends

import (
	"context"

	"github.com/hccl-test/hccl-test/dtype"
)

// NativeCall is one whole collective call, handed to a backend that runs
// collectives itself. Its fields follow coll.Args: the same buffer
// conventions, with Op spelled as the command line spells it ("allreduce",
// "allgather", "reducescatter", "broadcast", "reduce", "alltoall",
// "sendrecv", "gather", "scatter", "alltoallv", "allgatherv",
// "reducescatterv"), and what the collective's descriptor
// (coll.Descriptor) says of the call, so that a backend maps the call to
// its library's and knows no collective's conventions itself.
type NativeCall struct {
	Op    string
	DType dtype.DType
	RedOp dtype.ReduceOp
	Count int
	Root  int
	Send  []byte
	Recv  []byte
	// Reduces reports that the collective combines data with RedOp.
	Reduces bool
	// Rooted reports that the collective has a root, Root.
	Rooted bool
	// InPlace reports that Send and Recv overlap as the collective's
	// in-place layout puts them, on this rank (never on a rank whose
	// side of the call is empty, such as a non-root's receive of reduce).
	InPlace bool

	// Variable reports a variable-size collective, whose blocks have
	// counts of their own (alltoallv, allgatherv, reducescatterv); Count
	// is then only the row's nominal block, and the blocks are below.
	Variable bool
	// SendCounts and SendDispls are, for a variable-size collective whose
	// send buffer holds one block per rank (alltoallv, reducescatterv),
	// rank j's block there: SendCounts[j] elements from element
	// SendDispls[j] on, j from 0 to the world's size; RecvCounts and
	// RecvDispls likewise for a receive buffer of one block per rank
	// (alltoallv, allgatherv). They are MPI's sendcounts, sdispls,
	// recvcounts and rdispls. A side of one block has none: its length is
	// this rank's count on the other side (allgatherv sends
	// RecvCounts[rank] elements, reducescatterv receives
	// SendCounts[rank]). In place, the displacements are the in-place
	// layout's offsets.
	SendCounts, SendDispls, RecvCounts, RecvDispls []int
}

// Native is implemented by transports whose library has collectives of its
// own (MPI's). coll's "native" algorithm hands whole calls to it, so that a
// library's collectives are timed and checked by the same harness as ours.
type Native interface {
	// RunNative runs call on this rank; every rank must call it with
	// matching arguments. It returns an error for a call the library
	// cannot serve (an unsupported data type, say) rather than guessing.
	RunNative(ctx context.Context, call NativeCall) error
}
