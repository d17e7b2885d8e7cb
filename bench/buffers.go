package bench

import "github.com/hccl-test/hccl-test/payload"

// bufferNeed returns the size of each of the two buffers that one rank of
// a group of n ranks allocates (payload.BufferPool.Ensure) for every row of p:
// the largest row's send or receive side, as the collective's descriptor
// lays it out (coll.Op.BufferBytes; a variable-size collective's by its
// drawn counts, variableNeed), and the bytes -u moves its start by.
// The largest row is the sweep's largest size (largestSize), which is
// below MaxBytes where the steps do not land on it. The memory estimate
// (Memory) counts the same figure.
func (p Plan) bufferNeed(n int) int64 {
	var need int64
	largest := p.largestSize()
	for _, op := range p.Ops {
		for _, dt := range p.DTypes {
			_, bytes := payload.RowCount(op, dt, n, largest)
			s, r := op.BufferBytes(n, bytes)
			if op.Desc().Variable() {
				// The counts' largest row or column (validateTraffic
				// has drawn them once, so this does not fail).
				if v, err := p.variableNeed(op, dt, n); err == nil {
					s, r = v, v
				}
			}
			need = max(need, s, r)
		}
	}
	return need + p.unalignBytes()
}
