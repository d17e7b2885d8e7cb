package predict

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/montanaflynn/stats"

	"github.com/hccl-test/hccl-test/clustermodel"
	"github.com/hccl-test/hccl-test/coll"
)

// TestPredictOneHost fits the runs of 2 and 4 shm or proc ranks on one
// 2-CPU host (testdata/onehost/README.md) as scripts/predict-validate.sh
// does (rows of 32 MiB and more, which do not run from its 32 MiB L3),
// predicts 8 ranks, and pins each collective's median error of busbw from
// 32 MiB up where it was measured when written (docs/predict.md's table,
// plus 1 for rounding), and whether the fit kept a host's rate shared by
// the ranks (HostGBps): shm's rows call for one (without it allgather and
// alltoall missed by 30%), proc's do not. Some of these miss the 15% aimed
// at, and the test says by how much, so that a change of the model that
// moves them shows.
func TestPredictOneHost(t *testing.T) {
	tests := []struct {
		backend string
		host    bool                // whether the fit keeps a host's rate
		want    map[coll.Op]float64 // the median error when written, %
	}{
		{"shm", true, map[coll.Op]float64{coll.AllReduce: 13.6, coll.AllGather: 6.0, coll.ReduceScatter: 15.6, coll.AllToAll: 3.0, coll.SendRecv: 5.1}},
		{"proc", false, map[coll.Op]float64{coll.AllReduce: 34.5, coll.AllGather: 12.3, coll.ReduceScatter: 18.1, coll.AllToAll: 12.0, coll.SendRecv: 6.6}},
	}
	for _, tc := range tests {
		t.Run(tc.backend, func(t *testing.T) {
			var files []*File
			for _, n := range []int{2, 4} {
				f, err := ReadFile(filepath.Join("testdata", "onehost", fmt.Sprintf("%s-%d-best.csv", tc.backend, n)), "", "p50")
				if err != nil {
					t.Fatal(err)
				}
				files = append(files, f)
			}
			fit, err := FitFiles(files, Options{Cores: 2, MinBytes: 32 << 20})
			if err != nil {
				t.Fatal(err)
			}
			if len(fit.Cores) != 2 {
				t.Errorf("cores tried %+v: want 1 and 2", fit.Cores)
			}
			if fit.Host.Told != tc.host || (fit.Model.HostGBps > 0) != tc.host {
				t.Errorf("host tried %+v, the model's %v GB/s: want it kept %v", fit.Host, fit.Model.HostGBps, tc.host)
			}
			errs := busbwErrors(t, fit.Model, filepath.Join("testdata", "onehost", tc.backend+"-8-best.csv"), 32<<20, clustermodel.World{Servers: 1, PerServer: 8})
			for op, want := range tc.want {
				med, err := stats.Median(errs[op])
				t.Logf("%v: median error %.1f%% of %d rows", op, med, len(errs[op]))
				if err != nil || len(errs[op]) != 3 || med > want+1 {
					t.Errorf("%v: median error %.1f%% of %d rows (%v): measured %.1f%% when written", op, med, len(errs[op]), err, want)
				}
			}
		})
	}
}
