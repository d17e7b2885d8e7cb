package payload

import (
	"context"
	"fmt"

	"github.com/hccl-test/hccl-test/coll"
	"github.com/hccl-test/hccl-test/internal/hugemem"
	"github.com/hccl-test/hccl-test/internal/vmem"
)

// NoPayloadBuffers is the address space that the buffers of every rank of
// the process take when the plan runs without payload (Plan.NoPayload): no
// memory backs it, and a touch of it crashes, which catches any access to
// a payload that should have been skipped.
var NoPayloadBuffers vmem.Region

// BufferPool holds one rank's two message buffers, allocated once per sweep
// at the largest size and reused by every row: on these machines touching a
// fresh page costs more than copying it, so allocating per row would measure
// the kernel's page faults rather than the collective.
type BufferPool struct {
	A, B []byte // the send side and the receive side
	// Cold holds the rotated buffer sets of a cold cache (--cache cold),
	// empty with a warm one; Free frees it too.
	Cold  ColdRegion
	freeA func()
	freeB func()
}

// Ensure allocates both buffers of at least need bytes and touches every
// page, so no first touch falls inside a timed region; it stops with
// ctx's error once ctx is done (hugemem.Touch). Without payload
// (noPayload) both are address space that every rank shares
// (NoPayloadBuffers), one after the other, and nothing is touched.
func (bp *BufferPool) Ensure(ctx context.Context, need int64, noPayload bool) error {
	if int64(len(bp.A)) >= need {
		return nil
	}
	bp.freeBuffers()
	if noPayload {
		mem, err := NoPayloadBuffers.Get(2 * int(need))
		if err != nil {
			return fmt.Errorf("buffers without payload: %w", err)
		}
		bp.A, bp.B = mem[:need:need], mem[need:]
		return nil
	}
	if err := bp.Alloc(int(need)); err != nil {
		return err
	}
	if err := hugemem.Touch(ctx, bp.A); err != nil {
		return err
	}
	return hugemem.Touch(ctx, bp.B)
}

// Alloc gives bp two fresh buffers of size bytes, advised for huge pages
// and not yet touched. On an error bp holds what it got, for free.
func (bp *BufferPool) Alloc(size int) error {
	var err error
	if bp.A, bp.freeA, err = hugemem.Alloc(size); err != nil {
		return err
	}
	bp.B, bp.freeB, err = hugemem.Alloc(size)
	return err
}

// Free releases the buffers and the cold-cache sets. Nobody may use them
// afterwards.
func (bp *BufferPool) Free() {
	bp.freeBuffers()
	bp.Cold.Free()
}

// freeBuffers releases A and B, keeping Cold.
func (bp *BufferPool) freeBuffers() {
	if bp.freeA != nil {
		bp.freeA()
	}
	if bp.freeB != nil {
		bp.freeB()
	}
	bp.A, bp.B, bp.freeA, bp.freeB = nil, nil, nil, nil
}

// Touch writes one byte per page so the pages exist before timing.
func Touch(b []byte) {
	for i := 0; i < len(b); i += 4096 {
		b[i] = 0
	}
}

// Buckets lays out the calls of one iteration of row: one, or with
// --fusion row.Buckets, each in its own stretch of the buffers.
func (bp *BufferPool) Buckets(row Row, rank, n int) []*coll.Args {
	if row.Buckets <= 1 {
		return []*coll.Args{bp.Args(row, rank, n)}
	}
	one := row
	one.Bytes, one.Buckets = row.Bytes/int64(row.Buckets), 1
	s, r := row.Op.BufferBytes(n, one.Bytes)
	stride := int(max(s, r))
	out := make([]*coll.Args, row.Buckets)
	for i := range out {
		view := BufferPool{A: bp.A[i*stride:], B: bp.B[i*stride:]}
		out[i] = view.Args(one, rank, n)
	}
	return out
}

// Args lays out the buffers of one call of row by the conventions of
// coll.Args, in place or not (the collective's coll.Layout), for rank
// `rank` of n. Every rank gets the root's lengths, the largest; a
// variable-size row's rank gets its own (row.Counts), and one with no
// in-place layout (alltoallv) is laid out of place.
func (bp *BufferPool) Args(row Row, rank, n int) *coll.Args {
	d, es := row.Op.Desc(), row.DType.Size()
	a := &coll.Args{Op: row.Op, DType: row.DType, RedOp: row.RedOp, Count: row.Count, Root: max(row.Root, 0), Counts: row.Counts}
	sendLen, recvLen := row.Op.BufferBytes(n, row.Bytes)
	// Where this rank's block starts and ends in the larger buffer.
	start, end := d.Offset(a, rank, rank, n)*es, d.Offset(a, rank, rank+1, n)*es
	if d.Variable() {
		s, r := d.VLengths(rank, row.Counts)
		sendLen, recvLen = int64(s*es), int64(r*es)
		end = start + int(min(sendLen, recvLen))
	}
	if row.Place == OutOfPlace || d.InPlace == coll.NoInPlace {
		a.Send, a.Recv = bp.A[:sendLen], bp.B[:recvLen]
		return a
	}
	switch row.Op.Desc().InPlace {
	case coll.SendInRecv:
		a.Recv = bp.A[:recvLen]
		a.Send = a.Recv[start:end]
	case coll.RecvInSend:
		a.Send = bp.A[:sendLen]
		a.Recv = a.Send[start:end]
	default:
		a.Send, a.Recv = bp.A[:sendLen], bp.A[:recvLen]
	}
	return a
}
