package scenario

import (
	"github.com/hccl-test/hccl-test/coll"
	"github.com/hccl-test/hccl-test/kit"
)

// Memory estimates what the scenario takes on this machine for hosted of
// its ranks on backend: MemoryPerRank's buffers (none without payload),
// and the links, ranks and processes as a sweep's (bench.Plan.Memory).
func (sc *Scenario) Memory(backend string, hosted int, noPayload bool) kit.MemoryEstimate {
	var bufs int64
	if !noPayload {
		bufs = kit.SatMul(sc.MemoryPerRank(), int64(hosted))
	}
	var ops []coll.Op
	for _, s := range sc.Steps {
		if !s.IsCompute() {
			ops = append(ops, s.Op)
		}
	}
	peers := coll.PeersOf(ops, sc.Ranks)
	e := kit.MemoryEstimate{Hosted: hosted, Parts: []kit.MemPart{{Name: "buffers and probes", Flag: "maxbytes", Bytes: bufs}}}
	e.Parts = append(e.Parts, kit.OverheadParts(backend, sc.Ranks, hosted, 1, peers, 0)...)
	return e
}
