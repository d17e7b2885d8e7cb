package predict

import (
	"os"
	"strings"
	"testing"

	"github.com/hccl-test/hccl-test/clustermodel"
	"github.com/hccl-test/hccl-test/coll"
)

// TestOptimaUnderdetermined fits one allreduce log of 2 servers of 8
// ranks, whose times the reduction rate and the link between servers
// trade against each other: the fit records other optima, the printout
// lists them, and predict's band at 8 servers covers the true time,
// which the band of the model's own figures alone need not.
func TestOptimaUnderdetermined(t *testing.T) {
	fit := fitSynthetic(t, &truth, []coll.Op{coll.AllReduce}, []clustermodel.World{{Servers: 2, PerServer: 8}})
	m := fit.Model
	if len(m.Alternatives) == 0 {
		t.Fatalf("no other optimum recorded from one 2 x 8 allreduce log (model %+v, inter %+v)", m, *m.Inter)
	}
	var b strings.Builder
	if err := fit.WriteReport(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "the rows cannot tell them apart") || !strings.Contains(b.String(), "optimum 1: error") {
		t.Errorf("the printout does not list the other optima:\n%s", b.String())
	}
	big := clustermodel.World{Servers: 8, PerServer: 8}
	sizes := []int64{32 << 20, 128 << 20, 1 << 30}
	rows, err := Predict(m, Query{World: big, Ops: []coll.Op{coll.AllReduce}, Sizes: sizes})
	if err != nil {
		t.Fatal(err)
	}
	own := *m
	own.Alternatives = nil
	narrow, err := Predict(&own, Query{World: big, Ops: []coll.Op{coll.AllReduce}, Sizes: sizes})
	if err != nil {
		t.Fatal(err)
	}
	o := clustermodel.Op{Name: "allreduce", BWScale: 1, LatScale: 1}
	for i, r := range rows {
		sec, _ := predictSample(&truth, o, Sample{Op: r.Op, World: big, Bytes: r.Bytes})
		want := sec * 1e6
		t.Logf("%d B: true %.1f us, predicted %.1f us, band %.1f..%.1f us (own figures' %.1f..%.1f)", r.Bytes, want, r.TimeUS, r.LowUS, r.HighUS, narrow[i].LowUS, narrow[i].HighUS)
		if want < r.LowUS || want > r.HighUS {
			t.Errorf("%d B: the true time %.1f us lies outside the band %.1f..%.1f us", r.Bytes, want, r.LowUS, r.HighUS)
		}
		for j, a := range m.Alternatives {
			alt := m.With(a)
			ao, _ := alt.Op("allreduce")
			n := big.Ranks()
			sec, _ := fastest(alt, r.Op, n, int(r.Bytes/int64(r.Op.Blocks(n))), alt.Coll(ao, big))
			if at := sec * 1e6; at < r.LowUS*(1-1e-9) || at > r.HighUS*(1+1e-9) {
				t.Errorf("%d B: optimum %d predicts %.1f us, outside the band %.1f..%.1f us", r.Bytes, j+1, at, r.LowUS, r.HighUS)
			}
		}
		if r.LowUS > narrow[i].LowUS || r.HighUS < narrow[i].HighUS || r.TimeUS != narrow[i].TimeUS {
			t.Errorf("%d B: band %.1f..%.1f us around %.1f, without the other optima %.1f..%.1f around %.1f: it must only widen",
				r.Bytes, r.LowUS, r.HighUS, r.TimeUS, narrow[i].LowUS, narrow[i].HighUS, narrow[i].TimeUS)
		}
	}
	var tb strings.Builder
	if err := WriteTable(&tb, "model.json", m, rows); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(tb.String(), "# band also covers") {
		t.Errorf("the table's header does not say the band covers the other optima:\n%s", tb.String())
	}
}

// TestOptimaOldModel loads a model file written before fit recorded other
// optima: it predicts as before, its band the fit's own.
func TestOptimaOldModel(t *testing.T) {
	data, err := os.ReadFile("testdata/model.json")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), "alternatives") {
		t.Fatal("testdata/model.json should be a file of before the field")
	}
	m, err := clustermodel.Load("testdata/model.json")
	if err != nil {
		t.Fatal(err)
	}
	w := clustermodel.World{Servers: 4, PerServer: 4}
	rows, err := Predict(m, Query{World: w, Ops: []coll.Op{coll.AllReduce}, Sizes: []int64{1 << 20, 64 << 20}})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		o, _ := m.Op(r.Op.String())
		want := bandRow(m, o, Row{Op: r.Op, World: w, Bytes: r.Bytes, Algo: r.Algo, TimeUS: r.TimeUS})
		if r != want {
			t.Errorf("%d B: %+v, want bandRow's %+v", r.Bytes, r, want)
		}
	}
}

// TestOptimaRefused refuses a model file whose other optimum was
// hand-edited into nonsense, in one line that names the figure.
func TestOptimaRefused(t *testing.T) {
	_, err := clustermodel.Load("testdata/model-optima.json")
	want := "testdata/model-optima.json: invalid model: alternatives[0].inter.bw_GBps -3"
	if err == nil || !strings.HasPrefix(err.Error(), want) || strings.Contains(err.Error(), "\n") {
		t.Errorf("Load: %v, want one line beginning %q", err, want)
	}
}

// TestOptimaWidenCoversTruth fits one 2 x 8 allreduce log of a cluster
// whose reduction (25 GB/s) is slower than its link between servers (50
// GB/s): the rows' own start ends at other figures (the link inside and
// between servers about 34 and 24 GB/s), whose band at 4 x 8 and 16 MiB
// misses the true time; the other optima's widening covers it. (At 128
// MiB and more the true time lies outside both: no start reaches the true
// figures; docs/predict.md says so.)
func TestOptimaWidenCoversTruth(t *testing.T) {
	tr := truth
	tr.Intra.GBps, tr.ReduceGBps = 120, 25
	tr.Inter = &clustermodel.Level{AlphaUS: truth.Inter.AlphaUS, GBps: 50}
	m := fitSynthetic(t, &tr, []coll.Op{coll.AllReduce}, []clustermodel.World{{Servers: 2, PerServer: 8}}).Model
	w := clustermodel.World{Servers: 4, PerServer: 8}
	q := Query{World: w, Ops: []coll.Op{coll.AllReduce}, Sizes: []int64{16 << 20}}
	rows, err := Predict(m, q)
	if err != nil {
		t.Fatal(err)
	}
	own := *m
	own.Alternatives = nil
	narrow, err := Predict(&own, q)
	if err != nil {
		t.Fatal(err)
	}
	sec, _ := predictSample(&tr, clustermodel.Op{Name: "allreduce", BWScale: 1, LatScale: 1}, Sample{Op: coll.AllReduce, World: w, Bytes: rows[0].Bytes})
	want, r, n := sec*1e6, rows[0], narrow[0]
	t.Logf("true %.0f us; band %.0f..%.0f us, of the model's own figures %.0f..%.0f; %d other optima", want, r.LowUS, r.HighUS, n.LowUS, n.HighUS, len(m.Alternatives))
	if want >= n.LowUS && want <= n.HighUS {
		t.Errorf("the own figures' band %.0f..%.0f us holds the true %.0f us: the case no longer shows the widening", n.LowUS, n.HighUS, want)
	}
	if want < r.LowUS || want > r.HighUS {
		t.Errorf("the band %.0f..%.0f us misses the true %.0f us", r.LowUS, r.HighUS, want)
	}
}
