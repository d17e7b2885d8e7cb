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

// cluster01 holds one public cluster's nccl-tests runs of the five
// collectives on 1, 2 and 10 servers (testdata/cluster01/README.md).
const cluster01 = "testdata/cluster01"

// cluster01Fitted are its logs of one and two servers: the only ones fit
// sees.
var cluster01Fitted = []string{
	"nccl_N1_G4_cnode3-002.log", "nccl_N1_G8_cnode3-002.log",
	"nccl_N2_G1_cnode3-002_cnode3-003.log", "nccl_N2_G2_cnode3-002_cnode3-003.log",
	"nccl_N2_G4_cnode3-002_cnode3-003.log", "nccl_N2_G8_cnode3-002_cnode3-003.log",
	"nccl_smoke_N2_G1_cnode3-002_cnode3-003.log",
}

// scaleError is how a prediction of one collective on one world did
// against the measured log: the median and worst absolute error of busbw
// in percent over the out-of-place rows of 32 MiB and more, and how many
// of those rows fell inside the band.
type scaleError struct {
	sizes, inBand int
	median, worst float64
}

// predictAgainst predicts op on w with fit and compares it with the
// measured log's out-of-place rows of op of 32 MiB and more.
func predictAgainst(t *testing.T, fit *Fit, measured string, op coll.Op, w clustermodel.World) scaleError {
	t.Helper()
	m, err := ReadFile(measured, "", "")
	if err != nil {
		t.Fatal(err)
	}
	got := map[int64]float64{}
	for _, s := range m.Samples { // out-of-place first, then in-place, per size
		if s.Op != op {
			continue
		}
		if s.World != w {
			t.Fatalf("%s: %v's world %v, want %v", measured, op, s.World, w)
		}
		if _, seen := got[s.Bytes]; !seen && s.Bytes >= 32<<20 {
			got[s.Bytes] = s.BusBW()
		}
	}
	sizes := make([]int64, 0, len(got))
	for b := range got {
		sizes = append(sizes, b)
	}
	slices.Sort(sizes)
	rows, err := Predict(fit.Model, Query{World: w, Ops: []coll.Op{op}, Sizes: sizes})
	if err != nil {
		t.Fatal(err)
	}
	var e scaleError
	var errs []float64
	for _, r := range rows {
		g, ok := got[r.Bytes]
		if !ok {
			t.Fatalf("predicted %d bytes, measured none (a size rounded?)", r.Bytes)
		}
		errs = append(errs, 100*math.Abs(r.BusBW-g)/g)
		if r.BusLow <= g && g <= r.BusHigh {
			e.inBand++
		}
	}
	e.sizes = len(errs)
	e.median, _ = stats.Median(errs)
	e.worst, _ = stats.Max(errs)
	return e
}

// fitLogs fits the logs of dir named.
func fitLogs(t *testing.T, dir string, names []string) *Fit {
	t.Helper()
	var files []*File
	for _, name := range names {
		f, err := ReadFile(filepath.Join(dir, name), "", "")
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	fit, err := FitFiles(files, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return fit
}

// TestPredictClusterScales fits one public cluster's logs of one and two
// servers (testdata/cluster01: 1 x 4, 1 x 8, 2 x 1, 2 x 2, 2 x 4, 2 x 8,
// and the smoke run's 2 x 1)
// and predicts its runs of ten servers, five times the most the fit saw,
// for each of the five collectives and 1, 2, 4 and 8 ranks a server. The
// errors pinned are those measured when this was written
// (docs/predict.md), with a little room: a change to the fit, the band or
// the cost model that predicts this cluster worse fails here, and so does
// one that predicts it better without the table being updated (lo).
//
// The misses are pinned too, and said in docs/predict.md: the pairwise
// runs measured alltoall and sendrecv only, and the smoke run allreduce
// of one GPU a server, so allreduce, allgather and reducescatter across
// servers come from the fastest of ours on the links those showed: multiring (NCCL's rings over channels, one a rank of a
// server) at the large sizes, hier below them, where multiring's
// lock-stepped channels pay a latency a step (158 steps on 80 ranks)
// that NCCL's pipelined ones do not; and sendrecv at ten servers meets a
// fabric that two servers do not show (25 GB/s a pair where two servers
// gave 44).
func TestPredictClusterScales(t *testing.T) {
	fit := fitLogs(t, cluster01, cluster01Fitted)
	for _, o := range fit.Model.Ops {
		// allgather and reducescatter ran on one server only: their scales
		// say nothing of the link between servers. The others ran on one
		// and on two, and have scales of their own for each.
		one := o.Name == "allgather" || o.Name == "reducescatter"
		if o.OneServer != one || (o.InterBWScale > 0) == one {
			t.Errorf("%s: one_server %v, inter_bw_scale %v; want one_server %v", o.Name, o.OneServer, o.InterBWScale, one)
		}
	}
	// The other optima carry each op's scales between servers too.
	if len(fit.Model.Alternatives) == 0 {
		t.Error("no other optima: the band's widening below is of them")
	}
	for i, a := range fit.Model.Alternatives {
		for j, s := range a.Ops {
			if (s.InterBWScale > 0) != (fit.Model.Ops[j].InterBWScale > 0) {
				t.Errorf("optimum %d: %s inter_bw_scale %v, the model's %v", i+1, s.Name, s.InterBWScale, fit.Model.Ops[j].InterBWScale)
			}
		}
	}
	tests := []struct {
		per    int
		op     coll.Op
		lo, hi float64 // the median error, percent, measured when written: within lo..hi
		worst  float64 // percent, at most
		inBand int     // at least
	}{
		{1, coll.AllReduce, 8.5, 10.5, 11, 10},
		{1, coll.AllGather, 4, 6.5, 8, 9},
		{1, coll.ReduceScatter, 5, 7.5, 10, 9},
		{1, coll.AllToAll, 2.5, 5, 9, 9},
		{1, coll.SendRecv, 74, 81, 82, 1},
		{2, coll.AllReduce, 9, 11, 11.5, 10},
		{2, coll.AllGather, 6.5, 9, 10, 9},
		{2, coll.ReduceScatter, 6, 8.5, 10, 9},
		{2, coll.AllToAll, 2, 4.5, 11, 9},
		{2, coll.SendRecv, 72, 78, 80, 1},
		{4, coll.AllReduce, 9, 11.5, 32, 10},
		{4, coll.AllGather, 6.5, 9, 12, 9},
		{4, coll.ReduceScatter, 7, 9.5, 22, 9},
		{4, coll.AllToAll, 2, 4.5, 34, 9},
		{4, coll.SendRecv, 65, 71, 73, 1},
		{8, coll.AllReduce, 14.5, 17.5, 39, 9},
		{8, coll.AllGather, 11.5, 14.5, 93, 9},
		{8, coll.ReduceScatter, 10.5, 13.5, 143, 9},
		{8, coll.AllToAll, 0.5, 3, 29, 9},
		{8, coll.SendRecv, 185, 194, 197, 0},
	}
	for _, tc := range tests {
		w := clustermodel.World{Servers: 10, PerServer: tc.per}
		t.Run(tc.op.String()+" on "+w.String(), func(t *testing.T) {
			measured := filepath.Join(cluster01, "nccl_N10_G"+string(rune('0'+tc.per))+".log")
			e := predictAgainst(t, fit, measured, tc.op, w)
			t.Logf("%d sizes: median %.1f%%, worst %.1f%%, %d inside the band", e.sizes, e.median, e.worst, e.inBand)
			if e.sizes < 9 || e.median < tc.lo || e.median > tc.hi || e.worst > tc.worst || e.inBand < tc.inBand {
				t.Errorf("%d sizes: busbw median error %.1f%%, worst %.1f%%, %d inside the band; measured when written: median %.1f..%.1f%%, worst at most %.0f%%, at least %d inside",
					e.sizes, e.median, e.worst, e.inBand, tc.lo, tc.hi, tc.worst, tc.inBand)
			}
		})
	}
}
