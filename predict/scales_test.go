package predict

import (
	"slices"
	"testing"

	"github.com/hccl-test/hccl-test/clustermodel"
	"github.com/hccl-test/hccl-test/coll"
)

// TestFitScalesPerLevel makes an allreduce that moves data faster than
// the links inside a server (a reduction in its switches) and slower
// than them between servers, with the levels known, and checks that the
// fit recovers each level's scales within 2% from rows of one server and
// of two, and then predicts a world of eight servers as the truth does;
// and that rows of one kind only (one server, or two) give one pair.
func TestFitScalesPerLevel(t *testing.T) {
	truthOp := clustermodel.Op{Name: "allreduce", BWScale: 1.3, LatScale: 0.7, InterBWScale: 0.8, InterLatScale: 1.6}
	// truthOf is the truth for rows of worlds: where they are all of
	// several servers, one pair of scales for both levels.
	truthOf := func(worlds []clustermodel.World) clustermodel.Op {
		if !slices.ContainsFunc(worlds, func(w clustermodel.World) bool { return w.Servers == 1 }) {
			return clustermodel.Op{Name: "allreduce", BWScale: truthOp.BWScale, LatScale: truthOp.LatScale}
		}
		return truthOp
	}
	rowsOf := func(worlds ...clustermodel.World) []Sample {
		var rows []Sample
		for _, w := range worlds {
			for size := int64(1024); size <= 128<<20; size *= 8 {
				s := Sample{Op: coll.AllReduce, World: w, Bytes: size}
				sec, _ := predictSample(&truth, truthOf(worlds), s)
				s.TimeUS = sec * 1e6
				rows = append(rows, s)
			}
		}
		return rows
	}
	one := []clustermodel.World{{Servers: 1, PerServer: 4}, {Servers: 1, PerServer: 8}}
	two := []clustermodel.World{{Servers: 2, PerServer: 4}, {Servers: 2, PerServer: 8}}
	tests := []struct {
		name   string
		worlds []clustermodel.World
		want   clustermodel.Op // the scales and OneServer to recover
	}{
		{"one server and two", append(one, two...), truthOp},
		{"one server only", one, clustermodel.Op{BWScale: 1.3, LatScale: 0.7, OneServer: true}},
		// Rows of two servers only cannot tell the levels' scales apart:
		// one pair fits them, here a truth with the same scales at both.
		{"two servers only", two, clustermodel.Op{BWScale: 1.3, LatScale: 0.7}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := truth
			m.Ops = []clustermodel.Op{{Name: "allreduce", BWScale: 1, LatScale: 1}}
			fitScales(&m, &m.Ops[0], rowsOf(tc.worlds...))
			got := m.Ops[0]
			for _, c := range []struct {
				name      string
				got, want float64
			}{
				{"bw_scale", got.BWScale, tc.want.BWScale}, {"lat_scale", got.LatScale, tc.want.LatScale},
				{"inter_bw_scale", got.InterBWScale, tc.want.InterBWScale}, {"inter_lat_scale", got.InterLatScale, tc.want.InterLatScale},
			} {
				if !within(c.got, c.want, 0.02) {
					t.Errorf("%s: fitted %.4g, true %.4g (more than 2%% off)", c.name, c.got, c.want)
				}
			}
			if got.OneServer != tc.want.OneServer {
				t.Errorf("one_server %v, want %v", got.OneServer, tc.want.OneServer)
			}
			if tc.want.OneServer {
				return
			}
			big := clustermodel.World{Servers: 8, PerServer: 8}
			rows, err := Predict(&m, Query{World: big, Ops: []coll.Op{coll.AllReduce}, Sizes: []int64{1 << 20, 256 << 20}})
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range rows {
				want, _ := predictSample(&truth, truthOf(tc.worlds), Sample{Op: coll.AllReduce, World: big, Bytes: r.Bytes})
				if !within(r.TimeUS, want*1e6, 0.02) {
					t.Errorf("%d bytes on %v: predicted %.2f us, the truth %.2f", r.Bytes, big, r.TimeUS, want*1e6)
				}
			}
		})
	}
}
