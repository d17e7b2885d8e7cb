package bench

import (
	"github.com/hccl-test/hccl-test/coll"
	"github.com/hccl-test/hccl-test/internal/limits"
	"github.com/hccl-test/hccl-test/payload"
)

// bufferNeed returns the size of each of the two buffers that one rank of
// a group of n ranks allocates (payload.BufferPool.Ensure) for every row of p:
// the largest row's send or receive side, as the collective's descriptor
// lays it out (coll.Op.BufferBytes; a variable-size collective's by its
// drawn counts, variableNeed), and the bytes -u moves its start by.
// The largest row is the sweep's largest size (largestSize), which is
// below MaxBytes where the steps do not land on it. The memory estimate
// (Memory) counts the same figure.
func (p *Plan) bufferNeed(n int) int64 {
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

// scratchNeed returns the scratch space, in bytes, that one rank of a
// group of n ranks reserves (coll.Comm.Reserve) for every row of p: twice
// bufferNeed, or more where an algorithm of a variable-size collective
// takes more for the drawn counts (coll.VScratch: hier's alltoallv, whose
// rail ranks carry their server's share of a hot expert's bytes). The
// memory estimate (Memory) counts the same figure.
func (p *Plan) scratchNeed(n int) int64 {
	need := limits.SatMul(2, p.bufferNeed(n))
	top := p.Topology
	if !top.TwoLevel() || top.PerServer <= 0 || n%top.PerServer != 0 {
		return need
	}
	for _, op := range p.Ops {
		if !op.Desc().Variable() {
			continue
		}
		for _, dt := range p.DTypes {
			_, bytes := payload.RowCount(op, dt, n, p.largestSize())
			rows, _, err := p.drawnRows(Row{Op: op, DType: dt, Bytes: bytes, Count: 1}, n)
			if err != nil {
				continue // validateTraffic has drawn them once: not reached
			}
			for _, row := range rows {
				v := coll.VScratch(op, p.AlgosFor(op), row.Counts, n/top.PerServer, top.PerServer)
				need = max(need, int64(v)*int64(dt.Size()))
			}
		}
	}
	return need
}
