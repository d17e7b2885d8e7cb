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
// loaded 2-CPU host (testdata/onehost/README.md) as
// scripts/predict-validate.sh does, predicts 8 ranks, and pins each
// collective's median error of busbw from 32 MiB up where it was measured
// when written (docs/predict.md's table, plus 1 for rounding): these miss
// the 15% aimed at, and the test says by how much, so that a change of
// the model that moves them shows.
func TestPredictOneHost(t *testing.T) {
	tests := []struct {
		backend string
		want    map[coll.Op]float64 // the median error when written, %
	}{
		{"shm", map[coll.Op]float64{coll.AllReduce: 34.2, coll.AllGather: 31.0, coll.ReduceScatter: 11.6, coll.AllToAll: 61.9, coll.SendRecv: 13.6}},
		{"proc", map[coll.Op]float64{coll.AllReduce: 13.3, coll.AllGather: 59.5, coll.ReduceScatter: 31.2, coll.AllToAll: 26.1, coll.SendRecv: 16.4}},
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
			fit, err := FitFiles(files, Options{Cores: 2, MinBytes: 8 << 20})
			if err != nil {
				t.Fatal(err)
			}
			if len(fit.Cores) != 2 {
				t.Errorf("cores tried %+v: want 1 and 2", fit.Cores)
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
