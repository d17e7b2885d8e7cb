package predict

import (
	"math"
	"path/filepath"
	"slices"
	"testing"

	"github.com/montanaflynn/stats"

	"github.com/hccl-test/hccl-test/clustermodel"
	"github.com/hccl-test/hccl-test/coll"
)

// TestPredictPublicScales fits one public cluster's 2-server log
// (testdata/nt309) and predicts its 4- and 8-server runs, which the fit
// never saw: busbw of out-of-place rows of 32 MiB and more. The errors
// pinned are the ones measured when this was written (docs/predict.md),
// with a little room; a change to the fit or the cost model that makes
// prediction of real clusters worse fails here.
//
// The default 2-server run is NCCL's NVLS tree, "an aberration" of two
// servers by the maintainers' word in that thread, which runs above the
// network's rate: fitted on it, 4 and 8 servers are over-predicted by more
// than a third (and its single allreduce log cannot tell its link between
// servers from its reduction: near-equal optima of its rows predict them
// differently). Fitted on the same cluster's 2-server run with NCCL_ALGO=Ring, which the
// maintainers recommend as the fabric's figure, the prediction holds.
func TestPredictPublicScales(t *testing.T) {
	const nt309, cluster01 = "testdata/nt309", "../results/testdata/public"
	tests := []struct {
		dir           string
		fit           []string
		measured      string
		op            coll.Op
		servers       int
		median, worst float64 // percent, at most
		inBand        int     // measured rows inside the band, at least
	}{
		{nt309, []string{"gj-aion_all_reduce_perf_2nodes_ring_min_ctas24.log"}, "gj-aion_all_reduce_perf_4nodes.log", coll.AllReduce, 4, 5, 17, 9},
		{nt309, []string{"gj-aion_all_reduce_perf_2nodes_ring_min_ctas24.log"}, "gj-aion_all_reduce_perf_8nodes.log", coll.AllReduce, 8, 8, 18, 9},
		{nt309, []string{"gj-aion_all_reduce_perf_2nodes_ring_min_ctas24.log"}, "gj-aion_all_reduce_perf_8nodes_min_ctas24.log", coll.AllReduce, 8, 14, 32, 9},
		{nt309, []string{"gj-aion_all_reduce_perf_2nodes.log"}, "gj-aion_all_reduce_perf_4nodes.log", coll.AllReduce, 4, 39, 58, 1},
		{nt309, []string{"gj-aion_all_reduce_perf_2nodes.log"}, "gj-aion_all_reduce_perf_8nodes.log", coll.AllReduce, 8, 39, 50, 8},
		{nt309, []string{"qoofyk_all_reduce_perf_2nodes.log"}, "qoofyk_all_reduce_perf_4nodes.log", coll.AllReduce, 4, 20, 26, 10},
		// Another cluster's alltoall, fitted on 1 and 2 servers, predicted
		// at 10: five times the largest fitted node count. Its band held 1
		// of 9 when the growth of the error was measured by predicting 2
		// servers with the link between servers fitted on those very rows.
		{cluster01, []string{"cluster01-nccl_N1_G8_cnode3-002.log", "cluster01-nccl_N2_G8_cnode3-002_cnode3-003.log"},
			"cluster01-nccl_N10_G8.log", coll.AllToAll, 10, 9, 21, 9},
	}
	for _, tc := range tests {
		t.Run(tc.fit[0]+" to "+tc.measured, func(t *testing.T) {
			fit := fitLogs(t, tc.dir, tc.fit)
			m, err := ReadFile(filepath.Join(tc.dir, tc.measured), "", "")
			if err != nil {
				t.Fatal(err)
			}
			measured := map[int64]float64{}
			for _, s := range m.Samples { // out-of-place first, then in-place, per size
				if _, seen := measured[s.Bytes]; !seen && s.Bytes >= 32<<20 {
					measured[s.Bytes] = s.BusBW()
				}
			}
			if w := m.Samples[0].World; w != (clustermodel.World{Servers: tc.servers, PerServer: 8}) {
				t.Fatalf("measured log's world %v, want %d x 8", w, tc.servers)
			}
			sizes := make([]int64, 0, len(measured))
			for b := range measured {
				sizes = append(sizes, b)
			}
			slices.Sort(sizes)
			rows, err := Predict(fit.Model, Query{World: clustermodel.World{Servers: tc.servers, PerServer: 8}, Ops: []coll.Op{tc.op}, Sizes: sizes})
			if err != nil {
				t.Fatal(err)
			}
			var errs []float64
			inBand := 0
			for _, r := range rows {
				got := measured[r.Bytes]
				errs = append(errs, 100*math.Abs(r.BusBW-got)/got)
				if r.BusLow <= got && got <= r.BusHigh {
					inBand++
				}
			}
			med, _ := stats.Median(errs)
			worst := slices.Max(errs)
			t.Logf("%d sizes: median %.1f%%, worst %.1f%%, %d inside the band", len(errs), med, worst, inBand)
			if len(errs) < 6 || med > tc.median || worst > tc.worst || inBand < tc.inBand {
				t.Errorf("%d sizes: busbw median error %.1f%%, worst %.1f%%, %d inside the band; measured when written: at most %.0f%% and %.0f%%, at least %d inside",
					len(errs), med, worst, inBand, tc.median, tc.worst, tc.inBand)
			}
		})
	}
}
