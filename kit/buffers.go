package bench

import (
	"github.com/hccl-test/hccl-test/coll"
	"github.com/hccl-test/hccl-test/internal/hugemem"
	"github.com/hccl-test/hccl-test/internal/vmem"
)

// noPayloadBuffers is the address space that the buffers of every rank of
// the process take when the plan runs without payload (Plan.NoPayload): no
// memory backs it, and a touch of it crashes, which catches any access to
// a payload that should have been skipped.
var noPayloadBuffers vmem.Region

// bufferPool holds one rank's two message buffers, allocated once per sweep
// at the largest size and reused by every row: on these machines touching a
// fresh page costs more than copying it, so allocating per row would measure
// the kernel's page faults rather than the collective.
type bufferPool struct {
	a, b  []byte
	freeA func()
	freeB func()
}

// ensure allocates both buffers large enough for every row of p on n ranks
// and touches every page, so no first touch falls inside a timed region.
// Without payload (p.NoPayload) both are address space that every rank
// shares (noPayloadBuffers), one after the other, and nothing is touched.
func (bp *bufferPool) ensure(p Plan, n int) error {
	var need int64
	for _, op := range p.Ops {
		for _, dt := range p.DTypes {
			_, bytes := RowCount(op, dt, n, p.MaxBytes)
			s, r := op.BufferBytes(n, bytes)
			need = max(need, s, r)
		}
	}
	if int64(len(bp.a)) >= need {
		return nil
	}
	bp.free()
	if p.NoPayload {
		mem := noPayloadBuffers.Get(2 * int(need))
		bp.a, bp.b = mem[:need:need], mem[need:]
		return nil
	}
	if err := bp.alloc(int(need)); err != nil {
		return err
	}
	touch(bp.a)
	touch(bp.b)
	return nil
}

// alloc gives bp two fresh buffers of size bytes, advised for huge pages
// and not yet touched. On an error bp holds what it got, for free.
func (bp *bufferPool) alloc(size int) error {
	var err error
	if bp.a, bp.freeA, err = hugemem.Alloc(size); err != nil {
		return err
	}
	bp.b, bp.freeB, err = hugemem.Alloc(size)
	return err
}

// free releases the buffers. Nobody may use them afterwards.
func (bp *bufferPool) free() {
	if bp.freeA != nil {
		bp.freeA()
	}
	if bp.freeB != nil {
		bp.freeB()
	}
	*bp = bufferPool{}
}

// touch writes one byte per page so the pages exist before timing.
func touch(b []byte) {
	for i := 0; i < len(b); i += 4096 {
		b[i] = 0
	}
}

// buckets lays out the calls of one iteration of row: one, or with
// --fusion row.Buckets, each in its own stretch of the buffers.
func (bp *bufferPool) buckets(row Row, rank, n int) []*coll.Args {
	if row.Buckets <= 1 {
		return []*coll.Args{bp.args(row, rank, n)}
	}
	one := row
	one.Bytes, one.Buckets = row.Bytes/int64(row.Buckets), 1
	s, r := row.Op.BufferBytes(n, one.Bytes)
	stride := int(max(s, r))
	out := make([]*coll.Args, row.Buckets)
	for i := range out {
		view := bufferPool{a: bp.a[i*stride:], b: bp.b[i*stride:]}
		out[i] = view.args(one, rank, n)
	}
	return out
}

// args lays out the buffers of one call of row by the conventions of
// coll.Args, in place or not (the collective's coll.Layout), for rank
// `rank` of n. Every rank gets the root's lengths, the largest.
func (bp *bufferPool) args(row Row, rank, n int) *coll.Args {
	b := row.Count * row.DType.Size()
	a := &coll.Args{Op: row.Op, DType: row.DType, RedOp: row.RedOp, Count: row.Count, Root: max(row.Root, 0)}
	sendLen, recvLen := row.Op.BufferBytes(n, row.Bytes)
	if row.Place == OutOfPlace {
		a.Send, a.Recv = bp.a[:sendLen], bp.b[:recvLen]
		return a
	}
	switch row.Op.Desc().InPlace {
	case coll.SendInRecv:
		a.Recv = bp.a[:recvLen]
		a.Send = a.Recv[rank*b : (rank+1)*b]
	case coll.RecvInSend:
		a.Send = bp.a[:sendLen]
		a.Recv = a.Send[rank*b : (rank+1)*b]
	default:
		a.Send, a.Recv = bp.a[:sendLen], bp.a[:recvLen]
	}
	return a
}
