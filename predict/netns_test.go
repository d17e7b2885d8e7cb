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

// TestPredictNetns fits the runs of proc ranks in network namespaces
// whose links a tc token bucket limits (testdata/netns/README.md: one
// host of 2 ranks, two hosts of 1 and of 2 ranks) and predicts four hosts
// of 2 ranks, each row on the algorithm that ran there. Each host has one
// veth: the fit must find its ranks share it, and with that every
// collective's median error of busbw (8 MiB and more) stays within the
// 15% the validation aims at; a link a rank, the model before, put
// sendrecv 29% off on these rows.
func TestPredictNetns(t *testing.T) {
	var files []*File
	for _, name := range []string{"fit-1.csv", "fit-2.csv", "fit-2x1.csv"} {
		f, err := ReadFile(filepath.Join("testdata", "netns", name), "", "p50")
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	fit, err := FitFiles(files, Options{Cores: 2})
	if err != nil {
		t.Fatal(err)
	}
	m := fit.Model
	if m.Inter == nil || !m.Inter.SharedNIC() || !fit.PortsTold {
		t.Fatalf("inter %+v, told %v (%+v): want one link a server, told by the rows", m.Inter, fit.PortsTold, fit.Ports)
	}
	errs := busbwErrors(t, m, filepath.Join("testdata", "netns", "measured-best.csv"), 8<<20, clustermodel.World{Servers: 4, PerServer: 2})
	ops := []coll.Op{coll.AllReduce, coll.AllGather, coll.ReduceScatter, coll.AllToAll, coll.SendRecv}
	for _, op := range ops {
		med, err := stats.Median(errs[op])
		t.Logf("%v: %d rows, busbw median error %.1f%%, worst %.1f%%", op, len(errs[op]), med, slices.Max(append(errs[op], 0)))
		if err != nil || len(errs[op]) != 3 || med > 15 {
			t.Errorf("%v: %d rows, median error %.1f%% (%v): want 3 rows within 15%%", op, len(errs[op]), med, err)
		}
	}
}

// busbwErrors predicts every row of the measured file at path of size
// minBytes or more, which must all be of world w, on the algorithm that
// ran, and returns per collective the absolute errors of busbw in
// percent.
func busbwErrors(t *testing.T, m *clustermodel.Model, path string, minBytes int64, w clustermodel.World) map[coll.Op][]float64 {
	t.Helper()
	measured, err := ReadFile(path, "", "p50")
	if err != nil {
		t.Fatal(err)
	}
	errs := map[coll.Op][]float64{}
	for _, s := range measured.Samples {
		if s.Bytes < minBytes {
			continue
		}
		if s.World != w {
			t.Fatalf("%s: world %v, want %v", s.Where, s.World, w)
		}
		rows, err := Predict(m, Query{World: s.World, Ops: []coll.Op{s.Op}, Sizes: []int64{s.Bytes}, Algo: s.Algo})
		if err != nil {
			t.Fatal(err)
		}
		errs[s.Op] = append(errs[s.Op], 100*math.Abs(rows[0].BusBW-s.BusBW())/s.BusBW())
	}
	return errs
}
