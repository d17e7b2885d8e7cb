package bench

import (
	"testing"

	"github.com/hccl-test/hccl-test/coll"
	"github.com/hccl-test/hccl-test/dtype"
	"github.com/hccl-test/hccl-test/world"
)

// TestScratchNeedCountsHier: a routing whose rail ranks forward their
// server's blocks to two other servers makes hier's alltoallv take more
// scratch than twice the largest buffer; the ranks reserve it and the
// memory estimate counts it where hier may run (hier, auto), and not
// where it cannot (direct, or one server).
func TestScratchNeedCountsHier(t *testing.T) {
	const S, P, B = 3, 4, 1000 // B: fp32 elements
	n := S * P
	sp := matrixFile(t, n, func(src, dst int) int64 {
		if src/P == 0 && src%P != 0 && dst/P != 0 && dst%P == 0 {
			return 4 * B
		}
		return 0
	})
	for _, tc := range []struct {
		algo     string
		top      world.Topology
		wantHier bool
	}{
		{"hier", world.Topology{Servers: S, PerServer: P}, true},
		{"auto", world.Topology{Servers: S, PerServer: P}, true},
		{"direct", world.Topology{Servers: S, PerServer: P}, false},
		{"auto", world.Topology{Servers: 1, PerServer: n}, false},
	} {
		t.Run(tc.algo+"/"+tc.top.String(), func(t *testing.T) {
			p := DefaultPlan()
			p.Ranks, p.Topology, p.Algo = n, tc.top, tc.algo
			p.Ops, p.DTypes, p.RedOps = []coll.Op{coll.AllToAllV}, []dtype.DType{dtype.FP32}, []dtype.ReduceOp{dtype.Sum}
			p.Placements = []Placement{OutOfPlace}
			p.MinBytes, p.MaxBytes = 1<<16, 1<<16
			p.Traffic = sp
			twice := 2 * p.bufferNeed(n)
			// Rank (0, 0) takes what its 3 server peers send to rank 0 of
			// servers 1 and 2, then its runs to them: 12 blocks of B.
			want := twice
			if tc.wantHier {
				want = 12 * B * 4
			}
			if got := p.scratchNeed(n); got != want {
				t.Fatalf("scratchNeed = %d bytes, want %d (twice the buffers: %d)", got, want, twice)
			}
			if want <= twice && tc.wantHier {
				t.Fatalf("the case does not test anything: hier's %d bytes within twice the buffers' %d", want, twice)
			}
			e := p.Memory()
			for _, part := range e.Parts {
				if part.Name == "algorithm scratch" && part.Bytes < want {
					t.Errorf("the estimate's algorithm scratch is %d bytes, less than the %d reserved", part.Bytes, want)
				}
			}
		})
	}
}
