package results

import (
	"flag"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// updateGolden rewrites the golden files of the table from the code.
var updateGolden = flag.Bool("update", false, "rewrite testdata/table-*.golden")

// TestTableGolden pins the table byte for byte: its header, column
// headings and rows, with no optional column and with every one
// (-N, --group, --placement both, -C, --retry, --fusion, --overlap,
// --stats, -S, --traffic), over rows that show each cell's forms (unknown
// util, not checked, skew unread, a fusion and an overlap not measured, an
// imbalance not drawn, times of every width).
func TestTableGolden(t *testing.T) {
	ended := time.Date(2026, 3, 1, 12, 30, 45, 0, time.Local)
	rows := func(group bool) []Record {
		a := record(1024, false)
		a.SlowRank, a.Skew, a.Ended, a.CPUUS, a.ModelUS = 3, 1.25, ended, 7.5, 11
		b := a
		b.InPlace, b.TimeUS, b.Util, b.Wrong, b.Skew, b.Retries = true, 123456, math.NaN(), 2, 0.5, 1
		b.Buckets, b.FusionSpeedup, b.ComputeUS, b.TotalUS, b.OverlapEff = 4, 1.75, 50, 60.5, 0.8
		c := record(1<<30, false)
		c.Iters, c.Wrong, c.TimeUS, c.MinUS, c.P50US, c.P99US, c.MaxUS, c.StdDevUS = 0, -1, 3.2e8, 1e4, 2e6, 4e7, 5e9, 12.25
		c.AlgoRequested, c.Util, c.Ended, c.Run = "auto", 1.5, ended, 2
		c.ComputeUS, c.TotalUS, c.OverlapEff = 10, 12, math.NaN()
		a.Imbalance, a.HotRank = 2.5, 1 // c has none drawn: imbal and hot -
		b.Imbalance, b.HotRank = 1.125, 0
		recs := []Record{a, b, c}
		if group {
			for i := range recs {
				recs[i].Group, recs[i].GroupSize = "tp", 4
			}
		}
		return recs
	}
	all := header("both", true)
	all.Cycles, all.Runs, all.Group, all.Timestamps, all.CPUTime = true, 3, "tp", true, true
	all.Retry, all.Fusion, all.Overlap = "up to 3 times (--retry)", true, "each collective started without blocking"
	all.Traffic = "hot:hot=1,share=0.5"
	for _, tc := range []struct {
		name string
		h    Header
		recs []Record
	}{
		{"plain", header("out", false), rows(false)},
		{"every-column", all, rows(true)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := render(t, tc.h, tc.recs, Summary{Wrong: 2, Rows: 3})
			path := filepath.Join("testdata", "table-"+tc.name+".golden")
			if *updateGolden {
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if got != string(want) {
				t.Errorf("table differs from %s (go test -run TestTableGolden -update rewrites it):\ngot:\n%s\nwant:\n%s", path, got, want)
			}
		})
	}
}
