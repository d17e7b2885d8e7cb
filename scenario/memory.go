package scenario

import (
	"github.com/hccl-test/hccl-test/backends"
	"github.com/hccl-test/hccl-test/coll"
	"github.com/hccl-test/hccl-test/estimate"
	"github.com/hccl-test/hccl-test/internal/limits"
)

// Memory estimates what the scenario takes on this machine for hosted of
// its ranks on backend b: MemoryPerRank's buffers (none without payload),
// and the links, ranks and processes as a sweep's (bench.Plan.Memory).
func (sc *Scenario) Memory(b backends.Backend, hosted int, noPayload bool) estimate.MemoryEstimate {
	var bufs int64
	if !noPayload {
		bufs = limits.SatMul(sc.MemoryPerRank(), int64(hosted))
	}
	var ops []coll.Op
	for _, s := range sc.Steps {
		if !s.IsCompute() {
			ops = append(ops, s.Op)
		}
	}
	peers := coll.PeersOf(ops, sc.Ranks)
	e := estimate.MemoryEstimate{Hosted: hosted, Parts: []estimate.MemPart{{Name: "buffers and probes", Flag: "maxbytes", Bytes: bufs}}}
	e.Parts = append(e.Parts, estimate.OverheadParts(b, sc.Ranks, hosted, 1, peers, 0)...)
	return e
}
