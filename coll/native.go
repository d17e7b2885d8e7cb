package coll

import (
	"context"
	"fmt"

	"github.com/hccl-test/hccl-test/backends"
)

// Native is the algorithm name that hands a call whole to the backend's own
// collectives (MPI's, on the mpi backend). Only transports that implement
// backends.Native serve it; auto never picks it.
const Native = "native"

// runNative runs a through the transport's own collectives.
func runNative(ctx context.Context, c *Comm, a *Args) error {
	nt, ok := c.t.(backends.Native)
	if !ok {
		return fmt.Errorf("algorithm %q needs a backend with collectives of its own (the mpi backend)", Native)
	}
	d := a.Op.Desc()
	call := backends.NativeCall{
		Op: a.Op.String(), DType: a.DType, RedOp: a.RedOp,
		Count: a.Count, Root: a.Root, Send: a.Send, Recv: a.Recv,
		Reduces: d.Reduces, Rooted: d.Rooted, InPlace: d.InPlaceCall(a, c.rank, c.size),
		Variable: d.Variable(),
	}
	if call.Variable {
		send, recv, err := nativeBlocks(a, c.rank)
		if err != nil {
			return err
		}
		call.SendCounts, call.SendDispls = splitSpans(send)
		call.RecvCounts, call.RecvDispls = splitSpans(recv)
	}
	return nt.RunNative(ctx, call)
}

// nativeBlocks returns the blocks of rank's send and receive buffers in a
// variable-size call, for a side that holds one block per rank (nil for a
// side of one block), as the collective's algorithms lay them out: the
// spans of a.Counts, whose rank-order blocks are also the in-place
// layout's (Descriptor.Offset).
func nativeBlocks(a *Args, rank int) (send, recv []Span, err error) {
	switch a.Op {
	case AllToAllV:
		return a.Counts.SendSpans(rank), a.Counts.RecvSpans(rank), nil
	case AllGatherV:
		return nil, a.Counts.RankSpans(), nil
	case ReduceScatterV:
		return a.Counts.RankSpans(), nil, nil
	}
	return nil, nil, fmt.Errorf("%v: no layout of its blocks for the backend's own collectives", a.Op)
}

// splitSpans returns the lengths and offsets of spans, nil for none.
func splitSpans(spans []Span) (counts, displs []int) {
	if spans == nil {
		return nil, nil
	}
	counts, displs = make([]int, len(spans)), make([]int, len(spans))
	for i, s := range spans {
		counts[i], displs[i] = s.Len, s.Off
	}
	return counts, displs
}
