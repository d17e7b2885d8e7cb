package bench

import (
	"context"
	"fmt"
	"math"
	"strings"
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

// TestRankSummary: with Outputs.RankSummary an alltoallv row carries
// nccl-tests' PRINT_SUMMARY block, every rank's bytes as the matrix file
// says (row sums sent, column sums received) and its time; without it,
// and for allgatherv, none.
func TestRankSummary(t *testing.T) {
	cell := func(s, d int) int64 { return int64(1024 * (1 + s + 2*d)) }
	sp := matrixFile(t, 3, cell)
	for _, tc := range []struct {
		name string
		op   coll.Op
		on   bool
	}{{"alltoallv", coll.AllToAllV, true}, {"off", coll.AllToAllV, false}, {"allgatherv", coll.AllGatherV, true}} {
		t.Run(tc.name, func(t *testing.T) {
			p := smallPlan()
			p.Ops, p.DTypes, p.RedOps = []coll.Op{tc.op}, []dtype.DType{dtype.FP32}, []dtype.ReduceOp{dtype.Sum}
			p.Placements = []Placement{OutOfPlace}
			p.MinBytes, p.MaxBytes = 1<<16, 1<<16
			p.Traffic, p.RankSummary = sp, tc.on
			var c capture
			if _, err := Run(context.Background(), p, &c); err != nil {
				t.Fatal(err)
			}
			if len(c.records) != 1 {
				t.Fatalf("%d records", len(c.records))
			}
			got := c.records[0].Comment
			if !tc.on || tc.op != coll.AllToAllV {
				if got != nil {
					t.Errorf("a summary: %q", got)
				}
				return
			}
			if len(got) != 4 || !strings.HasPrefix(got[0], "# NCCL_TESTS_ALLTOALLV_PRINT_SUMMARY: mode=matrix nranks=3 matrix_dim=3") {
				t.Fatalf("summary %q", got)
			}
			for r := range 3 {
				var sent, recv int64
				for p := range 3 {
					sent += cell(r, p)
					recv += cell(p, r)
				}
				want := fmt.Sprintf("#   rank=%d send_bytes=%d recv_bytes=%d ", r, sent, recv)
				if !strings.HasPrefix(got[1+r], want) {
					t.Errorf("line %q, want it to start %q", got[1+r], want)
				}
			}
		})
	}
}

// TestDrawnRows: a sweep's routed row takes one draw per iteration
// (warm-up, timed and checked), up to MaxDraws, with draw=iter, the
// generator's iterations 0, 1, ... in turn, and one with draw=fixed, a
// matrix that does not change; a bad draw= is refused in one line.
func TestDrawnRows(t *testing.T) {
	for _, tc := range []struct {
		spec          string
		warmup, iters int
		want          int
	}{
		{"zipf:s=1.2,tokens=0,hidden=1024", 1, 3, 5}, // 1 + 3 + the checked one
		{"zipf:s=1.2,tokens=0,hidden=1024", 5, 100, MaxDraws},
		{"zipf:s=1.2,tokens=0,hidden=1024,draw=fixed", 5, 100, 1},
		{"spread", 5, 100, 1},
	} {
		t.Run(fmt.Sprintf("%s/%d+%d", tc.spec, tc.warmup, tc.iters), func(t *testing.T) {
			sp, err := traffic.ParseSpec(tc.spec)
			if err != nil {
				t.Fatal(err)
			}
			p := DefaultPlan()
			p.Ops, p.Traffic, p.Warmup, p.Iters, p.Check = []coll.Op{coll.AllToAllV}, sp, tc.warmup, tc.iters, true
			rows, draws, err := p.drawnRows(Row{Op: coll.AllToAllV, DType: dtype.FP32, Bytes: 64 << 10, Count: 1}, 4)
			if err != nil {
				t.Fatal(err)
			}
			if len(rows) != tc.want || len(draws) != tc.want {
				t.Fatalf("%d rows and %d draws, want %d", len(rows), len(draws), tc.want)
			}
			g, err := traffic.NewGenerator(sp, 4)
			if err != nil {
				t.Fatal(err)
			}
			digests := map[uint64]bool{}
			for i, row := range rows {
				m, err := g.Matrix(i, 64<<10)
				if err != nil {
					t.Fatal(err)
				}
				for s := range 4 {
					for d := range 4 {
						if got := int64(4 * row.Counts.At(s, d)); got != m.At(s, d) {
							t.Fatalf("draw %d: %d bytes from %d to %d, the generator's iteration %d has %d", i, got, s, d, i, m.At(s, d))
						}
					}
				}
				digests[row.Counts.Digest()] = true
			}
			if tc.want > 1 && len(digests) < 2 {
				t.Errorf("%d draws, all alike", tc.want)
			}
		})
	}
	if _, err := traffic.ParseSpec("zipf:draw=step"); err == nil || strings.Contains(err.Error(), "\n") {
		t.Errorf("draw=step: %v, want a one-line refusal", err)
	}
}
