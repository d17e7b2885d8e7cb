package coll

import (
	"context"
	"fmt"
)

// Ring send/receive, as nccl-tests' sendrecv: every rank sends its buffer to
// rank+1 and receives rank-1's.

func init() {
	register(SendRecv, "ring", ringSendRecv, costs{flat: sendRecvCost})
}

// ringSendRecv sends Send to the right neighbour while receiving Recv from
// the left one; a single rank copies locally.
// Cost for m bytes: α + mβ.
func ringSendRecv(ctx context.Context, c *Comm, a *Args) error {
	n, r, b := c.size, c.rank, a.Bytes()
	send, recv := a.Send[:b], a.Recv[:b]
	if n == 1 {
		c.copyIfDistinct(recv, send)
		return nil
	}
	right, left := mod(r+1, n), mod(r-1, n)
	if err := c.exchange(ctx, right, c.outgoing(send, recv), left, recv); err != nil {
		return fmt.Errorf("to rank %d, from rank %d: %w", right, left, err)
	}
	return nil
}

// aliased reports whether x and y start at the same memory, which is how
// in-place calls pass their buffers. Empty buffers alias nothing.
func aliased(x, y []byte) bool {
	return len(x) > 0 && len(y) > 0 && &x[0] == &y[0]
}

// outgoing returns the data a rank is to send: send itself, or, when the
// call is in place (send aliases recv), a copy of it in scratch, so that
// receiving into recv cannot overwrite data still to be sent. The copy lives
// until the next use of the Comm's scratch.
func (c *Comm) outgoing(send, recv []byte) []byte {
	if !aliased(send, recv) {
		return send
	}
	saved := c.scratchBuf(len(send))
	c.copy(saved, send)
	return saved
}

// sendRecvCost: one step moving one block.
func sendRecvCost(_ int, b float64, m Model) float64 { return m.Alpha + b*m.Beta }
