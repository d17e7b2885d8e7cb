package bench

import (
	"math"
	"testing"

	"github.com/hccl-test/hccl-test/coll"
	"github.com/hccl-test/hccl-test/dtype"
	"github.com/hccl-test/hccl-test/results"
	"github.com/hccl-test/hccl-test/traffic"
)

// TestTrafficRecord: a variable-size row's figures from two draws written
// out by hand. Draw A sends 16 B between every pair of 2 ranks; draw B
// sends everything to rank 1 (rank 0: 0 to itself, 48 to rank 1; rank 1:
// 0 and 16). Received A: 32, 32; B: 0, 64. alltoallv's algbw takes the
// most any rank sends or receives (A 32, B 64: mean 48 bytes) over the
// time; allgatherv's the total (A 64, B 64).
func TestTrafficRecord(t *testing.T) {
	mk := func(cells ...int64) *draw {
		m, err := traffic.NewMatrix(2)
		if err != nil {
			t.Fatal(err)
		}
		for i, b := range cells {
			m.Set(i/2, i%2, b)
		}
		c, err := coll.CountsOfBytes(2, 4, m.At)
		if err != nil {
			t.Fatal(err)
		}
		return &draw{counts: c, sum: traffic.Summarize(m)}
	}
	draws := []*draw{mk(16, 16, 16, 16), mk(0, 48, 0, 16)}
	for _, tt := range []struct {
		op    coll.Op
		moved float64
	}{{coll.AllToAllV, 48}, {coll.AllGatherV, 64}} {
		rec := results.Record{TimeUS: 1, AlgBW: 1, BusBW: 0.5, Util: 0.25}
		trafficRecord(&rec, Row{Op: tt.op, DType: dtype.FP32, GroupSize: 2}, draws)
		want := results.Record{TimeUS: 1, RecvMinBytes: 16, RecvMeanBytes: 32, RecvMaxBytes: 48,
			Imbalance: (1 + 2) / 2.0, HotRank: 1, AlgBW: tt.moved / 1e3, BusBW: tt.moved / 2e3}
		want.Util = 0.25 * want.BusBW / 0.5
		if math.Abs(rec.AlgBW-want.AlgBW) > 1e-12 || math.Abs(rec.BusBW-want.BusBW) > 1e-12 || math.Abs(rec.Util-want.Util) > 1e-12 ||
			rec.RecvMinBytes != want.RecvMinBytes || rec.RecvMeanBytes != want.RecvMeanBytes || rec.RecvMaxBytes != want.RecvMaxBytes ||
			rec.Imbalance != want.Imbalance || rec.HotRank != want.HotRank {
			t.Errorf("%v: got %+v\nwant %+v", tt.op, rec, want)
		}
	}
}
