package sim

import (
	"fmt"

	"github.com/hccl-test/hccl-test/backends"
)

// deliver moves a matched message's payload: it checks that the two sides
// agree on the length, then copies the sender's buffer into the receive
// buffer, or reduces it into the accumulator for a RecvReduce. It is the
// one place that touches payload bytes; the virtual time a message takes
// depends on its length only.
func (r *recvReq) deliver(s *sendReq) error {
	if len(s.buf) != len(r.dst) {
		return fmt.Errorf("%w: rank %d sent %d bytes, rank %d expected %d",
			backends.ErrMismatch, r.peer, len(s.buf), r.e.rank, len(r.dst))
	}
	if r.reduce != nil {
		r.reduce(r.dst, r.acc[:len(r.dst)], s.buf)
	} else {
		copy(r.dst, s.buf)
	}
	return nil
}
