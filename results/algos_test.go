package results

import (
	"bytes"
	"encoding/csv"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// severalAlgos is a run of --algo auto,ring at both placements and two
// sizes, in the order the harness measures it: per size, auto's rows (it
// chose rd), then ring's.
func severalAlgos() (Header, []Record) {
	h := header("both", false)
	h.Algo = "auto,ring"
	var recs []Record
	for _, size := range []int64{1024, 2048} {
		for _, algo := range []string{"auto", "ring"} {
			for _, inPlace := range []bool{false, true} {
				r := record(size, inPlace)
				r.AlgoRequested = algo
				if algo == "auto" {
					r.Algo, r.TimeUS = "rd", 7.5
				}
				recs = append(recs, r)
			}
		}
	}
	return h, recs
}

// TestSeveralAlgosTable: one line per size and algorithm, each with its two
// placements, auto's saying what it chose.
func TestSeveralAlgosTable(t *testing.T) {
	h, recs := severalAlgos()
	out := render(t, h, recs, Summary{})
	rows := tableRows(out)
	if len(rows) != 4 {
		t.Fatalf("%d rows, want 4 (2 sizes x 2 algorithms):\n%s", len(rows), out)
	}
	for i, want := range []string{"auto:rd", "ring", "auto:rd", "ring"} {
		f := strings.Fields(rows[i])
		if len(f) != 6+2*7 || f[5] != want {
			t.Errorf("row %d: %d fields, algo %q, want %q: %q", i, len(f), f[5], want, rows[i])
		}
	}
	if !strings.Contains(out, "algo auto,ring") {
		t.Errorf("header does not list the algorithms:\n%s", out)
	}
}

// TestSeveralAlgosFiles: the CSV says per row which algorithm it asked
// for, the benchmark names carry it, and both files read back as the same
// rows, one per algorithm, for `hccl-test compare`.
func TestSeveralAlgosFiles(t *testing.T) {
	h, recs := severalAlgos()
	dir := t.TempDir()
	paths := map[string]string{}
	for ext, sink := range map[string]func(*bytes.Buffer) Sink{
		".csv": func(b *bytes.Buffer) Sink { return NewCSV(b) },
		".txt": func(b *bytes.Buffer) Sink { return NewBenchFmt(b) },
	} {
		var buf bytes.Buffer
		writeAll(t, sink(&buf), h, recs)
		paths[ext] = filepath.Join(dir, "run"+ext)
		if err := os.WriteFile(paths[ext], buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}

	data, err := os.ReadFile(paths[".csv"])
	if err != nil {
		t.Fatal(err)
	}
	table, err := csv.NewReader(bytes.NewReader(data)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := slices.Index(table[0], "algo_requested")
	for i, row := range table[1:] {
		if want := recs[i].AlgoRequested; row[col] != want {
			t.Errorf("CSV row %d: algo_requested %q, want %q", i, row[col], want)
		}
	}

	var names [2][]string
	for i, ext := range []string{".csv", ".txt"} {
		s, err := ReadSamples(paths[ext])
		if err != nil {
			t.Fatal(err)
		}
		for k := range s.values {
			if k.unit == "sec/op" {
				names[i] = append(names[i], k.name)
			}
		}
		slices.Sort(names[i])
	}
	if len(names[1]) != len(recs) || !slices.Equal(names[0], names[1]) {
		t.Fatalf("%d rows: names from CSV %q, from the benchmark file %q", len(recs), names[0], names[1])
	}
	for _, n := range names[1] {
		if !strings.HasSuffix(n, "/algo=auto") && !strings.HasSuffix(n, "/algo=ring") {
			t.Errorf("name %q does not say the algorithm asked for", n)
		}
	}
}

// TestSeveralAlgosMedian: with --runs, each algorithm's row is the median
// of its own runs.
func TestSeveralAlgosMedian(t *testing.T) {
	_, recs := severalAlgos()
	var c collect
	m := NewMedian(&c, 2)
	for run := 1; run <= 2; run++ {
		for _, r := range recs {
			r.Run = run
			if err := m.Write(r); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := m.End(Summary{}); err != nil {
		t.Fatal(err)
	}
	if len(c.recs) != len(recs) {
		t.Fatalf("%d rows from %d per run", len(c.recs), len(recs))
	}
	for i, r := range c.recs {
		if r.AlgoRequested != recs[i].AlgoRequested || r.TimeUS != recs[i].TimeUS {
			t.Errorf("row %d: %s %v us, want %s %v us", i, r.AlgoRequested, r.TimeUS, recs[i].AlgoRequested, recs[i].TimeUS)
		}
	}
}

// TestSeveralAlgosFooter: the footer's mean bus bandwidth is also given per
// algorithm asked for, in the order they ran.
func TestSeveralAlgosFooter(t *testing.T) {
	h, recs := severalAlgos()
	var s Summary
	for i := range recs {
		recs[i].Bytes <<= 10 // 1 and 2 MiB: rows the mean counts
		if recs[i].AlgoRequested == "auto" {
			recs[i].BusBW = 4
		}
		s.Add(recs[i])
	}
	out := render(t, h, recs, s)
	for _, want := range []string{
		"# avg bus bandwidth (rows >= 1 MiB): 3.3125 GB/s (mean over the 8 rows of at least 1 MiB)",
		"#   auto: 4.0000 GB/s over its 4 rows\n#   ring: 2.6250 GB/s over its 4 rows\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("footer lacks %q:\n%s", want, out)
		}
	}
}
