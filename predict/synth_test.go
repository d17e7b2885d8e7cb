package predict

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hccl-test/hccl-test/clustermodel"
	"github.com/hccl-test/hccl-test/coll"
)

// truth is the cluster the synthetic logs are made of.
var truth = clustermodel.Model{
	Version: clustermodel.Version, Kind: clustermodel.Kind, Source: "nccl-tests",
	Intra:      clustermodel.Level{AlphaUS: 3, GBps: 120},
	Inter:      &clustermodel.Level{AlphaUS: 14, GBps: 22},
	ReduceGBps: 60,
}

// nccltestsNames are the programs of nccl-tests by collective.
var nccltestsNames = map[coll.Op]string{
	coll.AllReduce: "all_reduce_perf", coll.AllGather: "all_gather_perf", coll.ReduceScatter: "reduce_scatter_perf",
	coll.AllToAll: "alltoall_perf", coll.SendRecv: "sendrecv_perf", coll.Broadcast: "broadcast_perf",
}

// fitSynthetic fits the logs synthLog makes of m for every op on every
// world.
func fitSynthetic(t *testing.T, m *clustermodel.Model, ops []coll.Op, worlds []clustermodel.World) *Fit {
	t.Helper()
	dir := t.TempDir()
	var names []string
	for _, op := range ops {
		for _, w := range worlds {
			names = append(names, filepath.Base(synthLog(t, dir, m, op, w, "Example Accelerator X1")))
		}
	}
	return fitLogs(t, dir, names)
}

// synthLog writes an nccl-tests log of op on w whose times are those of
// m (every op at scale 1, the fastest algorithm of ours), from 1 KiB to
// 128 MiB by 8, with rank lines on hosts node01... and device dev.
func synthLog(t *testing.T, dir string, m *clustermodel.Model, op coll.Op, w clustermodel.World, dev string) string {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "# nccl-tests version 2.19.6 nccl-headers=22905 nccl-library=22905\n# Collective test starting: %s\n", nccltestsNames[op])
	b.WriteString("# nThread 1 nGpus 1 minBytes 1024 maxBytes 268435456 step: 4(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0\n#\n# Using devices\n")
	for r := range w.Ranks() {
		fmt.Fprintf(&b, "#  Rank %2d Group  0 Pid %6d on %10s device %2d [0000:%02x:00] %s\n", r, 4000+r, fmt.Sprintf("node%02d", r/w.PerServer+1), r%w.PerServer, r, dev)
	}
	b.WriteString("#\n#                                                              out-of-place                       in-place\n")
	b.WriteString("#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw   busbw  #wrong\n")
	b.WriteString("#        (B)    (elements)                               (us)  (GB/s)  (GB/s)             (us)  (GB/s)  (GB/s)\n")
	redop := "none"
	if op.Reduces() {
		redop = "sum"
	}
	o := clustermodel.Op{Name: op.String(), BWScale: 1, LatScale: 1}
	n := w.Ranks()
	for size := int64(1024); size <= 128<<20; size *= 8 {
		s := Sample{Op: op, World: w, Bytes: size}
		sec, _ := predictSample(m, o, s)
		us := sec * 1e6
		alg := float64(size) / us / 1e3
		bus := alg * op.BusFactor(n)
		fmt.Fprintf(&b, "%12d  %12d     float  %6s      -1  %9.3f  %6.2f  %6.2f       0  %9.3f  %6.2f  %6.2f       0\n",
			size, size/4, redop, us, alg, bus, us, alg, bus)
	}
	b.WriteString("# Out of bounds values : 0 OK\n#\n")
	path := filepath.Join(dir, fmt.Sprintf("%s-%dx%d.log", op, w.Servers, w.PerServer))
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// within reports whether got is within frac of want.
func within(got, want, frac float64) bool { return math.Abs(got-want) <= frac*math.Abs(want) }

// TestFitRecoversSynthetic fits logs made from known figures (one server
// of 2, 4 and 8 ranks, two servers of 4 and 8) and checks that every
// figure comes back within 2%, every op at scale 1, and that the model
// predicts a world it did not see (8 servers of 8) as the true figures do.
func TestFitRecoversSynthetic(t *testing.T) {
	ops := []coll.Op{coll.AllReduce, coll.AllGather, coll.ReduceScatter, coll.AllToAll, coll.SendRecv}
	worlds := []clustermodel.World{{Servers: 1, PerServer: 2}, {Servers: 1, PerServer: 4}, {Servers: 1, PerServer: 8}, {Servers: 2, PerServer: 4}, {Servers: 2, PerServer: 8}}
	m := fitSynthetic(t, &truth, ops, worlds).Model
	checks := []struct {
		name      string
		got, want float64
	}{
		{"intra alpha", m.Intra.AlphaUS, truth.Intra.AlphaUS},
		{"intra bw", m.Intra.GBps, truth.Intra.GBps},
		{"reduce", m.ReduceGBps, truth.ReduceGBps},
	}
	if m.Inter == nil {
		t.Fatal("no inter level fitted from logs of two servers")
	}
	checks = append(checks, []struct {
		name      string
		got, want float64
	}{{"inter alpha", m.Inter.AlphaUS, truth.Inter.AlphaUS}, {"inter bw", m.Inter.GBps, truth.Inter.GBps}}...)
	for _, o := range m.Ops {
		checks = append(checks, struct {
			name      string
			got, want float64
		}{o.Name + " bw_scale", o.BWScale, 1}, struct {
			name      string
			got, want float64
		}{o.Name + " lat_scale", o.LatScale, 1})
	}
	for _, c := range checks {
		if !within(c.got, c.want, 0.02) {
			t.Errorf("%s: fitted %.4g, true %.4g (more than 2%% off)", c.name, c.got, c.want)
		}
	}
	// Logs that identify every figure: every start of the search ends
	// at the same predictions (findOptima records none).
	if len(m.Alternatives) != 0 {
		t.Errorf("%d other optima recorded from logs that identify the figures: %+v", len(m.Alternatives), m.Alternatives)
	}
	if m.Device != "Example Accelerator X1" || m.Source != "nccl-tests" {
		t.Errorf("cluster %q on %q", m.Source, m.Device)
	}
	// A world of 64 ranks, none fitted: the prediction is the true
	// model's, and the band is wider than at a fitted world.
	big := clustermodel.World{Servers: 8, PerServer: 8}
	rows, err := Predict(m, Query{World: big, Ops: ops, Sizes: []int64{64 << 20}})
	if err != nil {
		t.Fatal(err)
	}
	fitted, err := Predict(m, Query{World: worlds[4], Ops: ops, Sizes: []int64{64 << 20}})
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range rows {
		o := clustermodel.Op{Name: r.Op.String(), BWScale: 1, LatScale: 1}
		want, _ := predictSample(&truth, o, Sample{Op: r.Op, World: big, Bytes: r.Bytes})
		if !within(r.TimeUS, want*1e6, 0.02) {
			t.Errorf("%v on %v: predicted %.2f us, the true figures give %.2f", r.Op, big, r.TimeUS, want*1e6)
		}
		if !(r.LowUS < r.TimeUS && r.TimeUS < r.HighUS) || !(r.BandPct > fitted[i].BandPct) {
			t.Errorf("%v: band %.2f..%.2f around %.2f (%.1f%%), at a fitted world %.1f%%: want it around the time and wider farther out",
				r.Op, r.LowUS, r.HighUS, r.TimeUS, r.BandPct, fitted[i].BandPct)
		}
	}
}

// TestFitPublicLog fits a public nccl-tests log (testdata/README.md): its
// topology and device come from its rank lines, every row is fitted, and
// the fit's median error stays where it was measured (18%).
func TestFitPublicLog(t *testing.T) {
	f, err := ReadFile("testdata/a3mega-h100-2x8.log", "", "")
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Samples) != 62 || f.Samples[0].World != (clustermodel.World{Servers: 2, PerServer: 8}) ||
		f.Cluster != (Cluster{Source: "nccl-tests", Device: "NVIDIA H100 80GB HBM3"}) {
		t.Fatalf("%d rows, world %v, cluster %v: want 62 rows of 2 x 8 of nccl-tests on H100", len(f.Samples), f.Samples[0].World, f.Cluster)
	}
	fit, err := FitFiles([]*File{f}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	o, ok := fit.Model.Op("allreduce")
	if !ok || o.MedianPct > 25 || len(fit.Rows) != 62 {
		t.Errorf("allreduce fitted %v (%+v), %d rows: want a median error under 25%% over 62 rows", ok, o, len(fit.Rows))
	}
}

// TestPredictAlgo checks that a named algorithm is costed as coll costs
// it under the model, and that the fastest is never slower.
func TestPredictAlgo(t *testing.T) {
	w := clustermodel.World{Servers: 4, PerServer: 8}
	m := truth
	m.Ops = []clustermodel.Op{{Name: "allreduce", BWScale: 1, LatScale: 1, Rows: 1}}
	m.Fitted = clustermodel.Span{Worlds: []clustermodel.World{{Servers: 2, PerServer: 8}}, MinBytes: 1024, MaxBytes: 1 << 30}
	for _, algo := range coll.Names(coll.AllReduce) {
		rows, err := Predict(&m, Query{World: w, Ops: []coll.Op{coll.AllReduce}, Sizes: []int64{64 << 20}, Algo: algo})
		if err != nil {
			t.Fatal(err)
		}
		cm := m.Coll(m.Ops[0], w)
		if algo == "multiring" {
			cm.Gap = ChannelGap // truth is of devices: multiring's channels issue apart
		}
		want := coll.Predict(coll.AllReduce, algo, w.Ranks(), 64<<20, cm) * 1e6
		best, _ := Predict(&m, Query{World: w, Ops: []coll.Op{coll.AllReduce}, Sizes: []int64{64 << 20}})
		if rows[0].Algo != algo || !within(rows[0].TimeUS, want, 1e-12) || best[0].TimeUS > rows[0].TimeUS {
			t.Errorf("%s: %s %.2f us, coll says %.2f, the fastest (%s) %.2f", algo, rows[0].Algo, rows[0].TimeUS, want, best[0].Algo, best[0].TimeUS)
		}
	}
}

// TestUnseenServers checks the band's term for servers beyond the fitted
// ones: it applies only where no two fitted worlds of several servers
// differ in their servers, and counts the doublings beyond the most.
func TestUnseenServers(t *testing.T) {
	w := func(s, g int) clustermodel.World { return clustermodel.World{Servers: s, PerServer: g} }
	tests := []struct {
		fitted []clustermodel.World
		at     clustermodel.World
		want   float64
	}{
		{[]clustermodel.World{w(1, 8), w(2, 8)}, w(8, 8), 2},
		{[]clustermodel.World{w(2, 1), w(2, 8)}, w(8, 1), 2},
		{[]clustermodel.World{w(2, 8)}, w(2, 8), 0},
		{[]clustermodel.World{w(2, 8), w(4, 8)}, w(16, 8), 0}, // the growth was measured across servers
		{[]clustermodel.World{w(1, 8)}, w(1, 16), 0},
	}
	for _, tc := range tests {
		if got := unseenServers(clustermodel.Span{Worlds: tc.fitted}, tc.at); math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("fitted %v, predicting %v: %v doublings, want %v", tc.fitted, tc.at, got, tc.want)
		}
	}
}

// TestNCCLAlgo checks the NCCL algorithm each of ours exports as: the
// ring-like ones (multiring, NCCL's rings over channels, too) as ring,
// the others as tree where NCCL has one, an in-network reduction as nvls.
func TestNCCLAlgo(t *testing.T) {
	tests := []struct {
		op        coll.Op
		algo      string
		inNetwork bool
		want      string
	}{
		{coll.AllReduce, "ring", false, "ring"},
		{coll.AllReduce, "multiring", false, "ring"},
		{coll.AllGather, "multiring", false, "ring"},
		{coll.AllReduce, "hier", false, "tree"},
		{coll.AllGather, "rd", false, "ring"},
		{coll.AllReduce, "multiring", true, "nvls"},
	}
	for _, tc := range tests {
		if got := ncclAlgo(tc.op, tc.algo, tc.inNetwork); got != tc.want {
			t.Errorf("%v %s (in network %v): %s, want %s", tc.op, tc.algo, tc.inNetwork, got, tc.want)
		}
	}
}
