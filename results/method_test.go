package results

import (
	"bytes"
	"encoding/csv"
	"slices"
	"strings"
	"testing"
)

// TestMethodOutputs: how the rows were measured (-a, -m, -z, -C, -c N,
// -u) shows in the table's header and columns, in CSV's columns and, where
// not the default, in the Go benchmark format's configuration, with -C's
// CPU time as a value of its own.
func TestMethodOutputs(t *testing.T) {
	h := fmtHeader()
	h.Method, h.Average, h.AggIters, h.Blocking, h.CPUTime, h.CheckIters, h.Unalign =
		"time is the fastest rank's (-a 2)", "min", 4, 3, true, 2, 5
	rec := fmtCases()[0].rec
	rec.CPUUS = 12.5

	var table bytes.Buffer
	writeAll(t, NewTable(&table), h, []Record{rec})
	for _, want := range []string{"# measured: time is the fastest rank's (-a 2)\n", "   cputime", "   12.50", "the fastest rank (whose timed iterations took least in all), each iteration divided by the 4 ops"} {
		if !strings.Contains(table.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, table.String())
		}
	}

	var c bytes.Buffer
	writeAll(t, NewCSV(&c), h, []Record{rec})
	rows, err := csv.NewReader(&c).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, name := range []string{"average", "agg_iters", "blocking", "check_iters", "unalign", "cpu_us"} {
		got = append(got, rows[1][slices.Index(rows[0], name)])
	}
	if want := []string{"min", "4", "3", "2", "5", "12.5"}; !slices.Equal(got, want) {
		t.Errorf("CSV method columns %v, want %v", got, want)
	}

	var b bytes.Buffer
	writeAll(t, NewBenchFmt(&b), h, []Record{rec})
	for _, want := range []string{"average: min\n", "agg_iters: 4\n", "blocking: 3\n", "unalign: 5\n", " 12500 cpu-ns/op"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("benchmark format lacks %q:\n%s", want, b.String())
		}
	}
	var plain bytes.Buffer
	writeAll(t, NewBenchFmt(&plain), fmtHeader(), []Record{rec})
	for _, key := range []string{"average:", "agg_iters:", "blocking:", "unalign:", "cpu-ns/op"} {
		if strings.Contains(plain.String(), key) {
			t.Errorf("default measurement writes %q:\n%s", key, plain.String())
		}
	}
}
