package coll

import (
	"fmt"

	"github.com/hccl-test/hccl-test/dtype"
	"github.com/hccl-test/hccl-test/internal/vmem"
)

// Calls without payload. A Comm set with SetNoPayload runs every call's
// messages with their lengths only (backends.Call.NoPayload) and skips
// every data operation the rank does itself: copies between its own
// buffers, local reductions, Avg's division. Algorithms do these only
// through the helpers below, so that the skipping is in one place; a
// sub-Comm of a level of the topology follows its top-level Comm.
//
// The messages, their lengths, peers and order are the same as with
// payload, and so is the rank's own work that the helpers report to a
// backend that charges it to a virtual clock (backends.LocalWorker), so a
// backend that times by lengths (sim) gives the same times, and the
// buffers need no memory at all.

// noPayloadScratch is the scratch space of every Comm without payload: one
// stand-in for the process (internal/vmem), never touched.
var noPayloadScratch vmem.Region

// reserveStandIn makes r stand for n bytes now (Comm.Reserve), so that
// the calls that follow, which ask for at most that, get their stand-in
// without an error to handle; what names the part for the error.
func reserveStandIn(r *vmem.Region, n int, what string) error {
	if _, err := r.Get(n); err != nil {
		return fmt.Errorf("%s without payload: %w", what, err)
	}
	return nil
}

// standIn returns n bytes of r for a call without payload. Comm.Reserve
// made r stand for the most any call asks, so r does not grow here and
// Get cannot fail; if it does, an algorithm asked for more scratch space
// than Reserve promised, which is this package's bug.
func standIn(r *vmem.Region, n int) []byte {
	b, err := r.Get(n)
	if err != nil {
		panic(fmt.Sprintf("coll: %d bytes of scratch space past what Comm.Reserve took: %v", n, err))
	}
	return b
}

// SetNoPayload makes the calls that follow carry lengths only (on) or
// data (off). Every rank of a world must set the same. Only transports
// that honour backends.Call.NoPayload (shm, sim) may run such calls; the
// buffers passed to them need not be backed by memory. Barriers carry
// nothing anyway.
func (c *Comm) SetNoPayload(on bool) { c.noPayload = on }

// NoPayload reports whether calls carry lengths only (SetNoPayload).
func (c *Comm) NoPayload() bool { return c.top().noPayload }

// payload reports whether this Comm's calls move data: false when its
// top-level Comm was set with SetNoPayload.
func (c *Comm) payload() bool { return !c.top().noPayload }

// copied and reduced report the rank's own work to a backend that charges
// it to a virtual clock (backends.LocalWorker), with or without payload.
func (c *Comm) copied(n int) {
	if w := c.top().work; w != nil {
		w.Copied(n)
	}
}

func (c *Comm) reduced(n int) {
	if w := c.top().work; w != nil {
		w.Reduced(n)
	}
}

// copy copies src to dst, as the built-in, when calls carry data.
func (c *Comm) copy(dst, src []byte) {
	c.copied(min(len(dst), len(src)))
	if c.payload() {
		copy(dst, src)
	}
}

// copyIfDistinct copies src to dst unless they are the same memory, as in
// in-place calls, or calls carry no data.
func (c *Comm) copyIfDistinct(dst, src []byte) {
	if aliased(dst, src) {
		return
	}
	c.copy(dst, src)
}

// reduceLocal sets dst = reduce(acc, in), a reduction of the rank's own
// buffers, when calls carry data.
func (c *Comm) reduceLocal(reduce dtype.ReduceFunc, dst, acc, in []byte) {
	c.reduced(len(dst))
	if c.payload() {
		reduce(dst, acc, in)
	}
}

// divideBy divides every element of buf by n (Avg), when calls carry data.
func (c *Comm) divideBy(dt dtype.DType, buf []byte, n int) {
	c.reduced(len(buf))
	if c.payload() {
		dtype.DivideBy(dt, buf, n)
	}
}

// rotateBlocks sets block i of dst to block i+shift (mod the block count)
// of src, for buffers of equal length made of blocks of b bytes.
func (c *Comm) rotateBlocks(dst, src []byte, shift, b int) {
	cut := shift * b
	c.copy(dst, src[cut:])
	c.copy(dst[len(src)-cut:], src[:cut])
}

// regroup transposes blocks of b bytes: src holds rows × cols blocks,
// block (i, j) at i·cols + j, and dst receives block (i, j) at j·rows + i.
func (c *Comm) regroup(dst, src []byte, rows, cols, b int) {
	c.copied(rows * cols * b)
	if !c.payload() {
		return
	}
	for i := range rows {
		for j := range cols {
			copy(block(dst, j*rows+i, b), block(src, i*cols+j, b))
		}
	}
}
