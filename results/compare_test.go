package results

import (
	"bytes"
	"cmp"
	"context"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// cmpRow is one row of the sweeps the compare tests write, with its
// benchmark name written out independently of the name function.
type cmpRow struct {
	op, redop string
	root      int
	bytes     int64
	us        float64 // time of one op in µs, before jitter
	bus       float64 // bus factor with 8 ranks
	name      string
}

var cmpRows = []cmpRow{
	{"allreduce", "sum", -1, 1 << 10, 84.2, 1.75, "AllReduce/backend=shm/ranks=8/dtype=fp16/redop=sum/size=1KiB"},
	{"allreduce", "sum", -1, 1 << 20, 412, 1.75, "AllReduce/backend=shm/ranks=8/dtype=fp16/redop=sum/size=1MiB"},
	{"allreduce", "sum", -1, 64 << 20, 24000, 1.75, "AllReduce/backend=shm/ranks=8/dtype=fp16/redop=sum/size=64MiB"},
	{"broadcast", "none", 0, 1 << 20, 300, 1, "Broadcast/backend=shm/ranks=8/dtype=fp16/root=0/size=1MiB"},
}

// cmpUnits are the units of every row, in the order Compare sorts them.
var cmpUnits = []string{"sec/op", "busbw-GB/s", "algbw-GB/s"}

// sweep is a run repeated runs times (--runs). Row i of run k takes
// us * slow[i] * (1 + 0.01*(7k mod 10 + shift)): ten runs visit jitters of
// 0% to 9% once each, out of order; a shift of 0.5 puts them between those of
// shift 0. Records come run after run, as hccl-test writes them.
func sweep(runs int, shift float64, slow map[int]float64) []Record {
	var recs []Record
	for k := range runs {
		for i, r := range cmpRows {
			us := r.us * cmp.Or(slow[i], 1) * (1 + 0.01*(float64(7*k%10)+shift))
			algbw := float64(r.bytes) / (us * 1e3)
			recs = append(recs, Record{Op: r.op, DType: "fp16", RedOp: r.redop, Root: r.root, Algo: "ring",
				Bytes: r.bytes, Count: r.bytes / 2, Iters: 20, TimeUS: us, AlgBW: algbw, BusBW: algbw * r.bus,
				Util: math.NaN(), Run: k + 1})
		}
	}
	return recs
}

// cmpValue returns what rec measures in unit.
func cmpValue(rec Record, unit string) float64 {
	return map[string]float64{"sec/op": rec.TimeUS * 1e-6, "busbw-GB/s": rec.BusBW, "algbw-GB/s": rec.AlgBW}[unit]
}

// medianOf returns the median of xs, computed here rather than by benchmath.
func medianOf(xs []float64) float64 {
	s := slices.Sorted(slices.Values(xs))
	return (s[(len(s)-1)/2] + s[len(s)/2]) / 2
}

// writeSweep writes recs to dir/file through the sink newSink makes.
func writeSweep(t *testing.T, dir, file string, newSink func(io.Writer) Sink, recs []Record) string {
	t.Helper()
	var buf bytes.Buffer
	h := Header{Version: "0.1.0", Backend: "shm", Ranks: 8, Algo: "auto", Placement: "out", Check: true,
		Started: time.Date(2026, 11, 29, 17, 30, 0, 0, time.UTC), Host: "node01"}
	writeAll(t, newSink(&buf), h, recs)
	path := filepath.Join(dir, file)
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func benchSink(w io.Writer) Sink { return NewBenchFmt(w) }
func csvSink(w io.Writer) Sink   { return NewCSV(w) }

// readPair writes old and new with newSink and reads them back.
func readPair(t *testing.T, newSink func(io.Writer) Sink, ext string, old, new []Record) (*Samples, *Samples) {
	t.Helper()
	dir := t.TempDir()
	var s [2]*Samples
	for i, recs := range [][]Record{old, new} {
		var err error
		if s[i], err = ReadSamples(writeSweep(t, dir, []string{"old", "new"}[i]+ext, newSink, recs)); err != nil {
			t.Fatal(err)
		}
		if len(s[i].Warnings) > 0 {
			t.Errorf("warnings reading %s: %v", s[i].Path, s[i].Warnings)
		}
	}
	return s[0], s[1]
}

type compareCase struct {
	name          string
	runs          int
	shift         float64         // of the new jitters
	slow          map[int]float64 // new time / old time, by row
	wantSignif    []int           // rows that differ significantly
	wantRegressed []int           // rows that regress by more than 5% in every unit
	wantWarning   string
}

var compareCases = []compareCase{
	{name: "identical runs", runs: 10},
	{name: "noise only", runs: 10, shift: 0.5},
	{name: "30% slower at 1MiB", runs: 10, shift: 0.5, slow: map[int]float64{1: 1.3},
		wantSignif: []int{1}, wantRegressed: []int{1}},
	{name: "30% faster at 1MiB", runs: 10, shift: 0.5, slow: map[int]float64{1: 1 / 1.3}, wantSignif: []int{1}},
	{name: "slower everywhere, two runs", runs: 2, shift: 0.5, slow: map[int]float64{0: 1.3, 1: 1.3, 2: 1.3, 3: 1.3},
		wantWarning: "need >= 4 samples to detect a difference at alpha level 0.05"},
}

func TestCompare(t *testing.T) {
	for _, tc := range compareCases {
		t.Run(tc.name, func(t *testing.T) {
			oldRecs, newRecs := sweep(tc.runs, 0, nil), sweep(tc.runs, tc.shift, tc.slow)
			old, new := readPair(t, benchSink, ".txt", oldRecs, newRecs)
			cs := Compare(old, new, CompareOptions{})
			if len(cs) != len(cmpUnits)*len(cmpRows) {
				t.Fatalf("%d comparisons, want %d", len(cs), len(cmpUnits)*len(cmpRows))
			}
			for j, c := range cs {
				i, unit := j%len(cmpRows), cmpUnits[j/len(cmpRows)]
				if c.Name != cmpRows[i].name || c.Unit != unit {
					t.Fatalf("comparison %d is %s in %s, want %s in %s", j, c.Name, c.Unit, cmpRows[i].name, unit)
				}
				var ov, nv []float64
				for k := range tc.runs {
					ov = append(ov, cmpValue(oldRecs[k*len(cmpRows)+i], unit))
					nv = append(nv, cmpValue(newRecs[k*len(cmpRows)+i], unit))
				}
				// The file rounds times to 5 digits and bandwidths to 4.
				wantDelta := medianOf(nv)/medianOf(ov) - 1
				wantSignif := slices.Contains(tc.wantSignif, i)
				wantWorse := (unit == "sec/op") == (wantDelta > 0) && wantDelta != 0
				if math.Abs(c.Delta-wantDelta) > 1e-3 || c.Significant != wantSignif ||
					(c.Worse != wantWorse && wantSignif) || c.OldN != tc.runs || c.NewN != tc.runs {
					t.Errorf("%s %s: delta %.4f significant %v worse %v n %d+%d (p=%.4f), want %.4f %v %v n %d",
						c.Name, c.Unit, c.Delta, c.Significant, c.Worse, c.OldN, c.NewN, c.P,
						wantDelta, wantSignif, wantWorse, tc.runs)
				}
				if math.Abs(medianOf(ov)-c.Old.Center) > 5e-4*medianOf(ov) {
					t.Errorf("%s %s: old median %v, want %v", c.Name, c.Unit, c.Old.Center, medianOf(ov))
				}
				if slices.Contains(tc.wantRegressed, i) && math.Abs(c.Delta-map[bool]float64{true: 0.30, false: -0.23}[unit == "sec/op"]) > 0.01 {
					t.Errorf("%s %s: delta %.4f, want about +0.30 for time, -0.23 for bandwidth", c.Name, c.Unit, c.Delta)
				}
				hasWarning := slices.ContainsFunc(c.Warnings, func(e error) bool { return e.Error() == tc.wantWarning })
				if tc.wantWarning != "" && !hasWarning || tc.wantWarning == "" && len(c.Warnings) > 0 {
					t.Errorf("%s %s: warnings %v, want %q", c.Name, c.Unit, c.Warnings, tc.wantWarning)
				}
			}
			var want []string
			for _, unit := range cmpUnits {
				for _, i := range tc.wantRegressed {
					want = append(want, cmpRows[i].name+" "+unit)
				}
			}
			for _, th := range []float64{0.05, 0.5} {
				var got []string
				for _, c := range Regressions(cs, th) {
					got = append(got, c.Name+" "+c.Unit)
				}
				if th == 0.5 {
					want = nil // a 30% slowdown is below a 50% threshold
				}
				if !slices.Equal(got, want) {
					t.Errorf("Regressions(%v) = %q, want %q", th, got, want)
				}
			}
		})
	}
}

// TestCompareCSVLikeBench checks that the CSV files of two runs compare as
// their Go benchmark files do.
func TestCompareCSVLikeBench(t *testing.T) {
	tc := compareCases[2]
	oldRecs, newRecs := sweep(tc.runs, 0, nil), sweep(tc.runs, tc.shift, tc.slow)
	oldB, newB := readPair(t, benchSink, ".txt", oldRecs, newRecs)
	oldC, newC := readPair(t, csvSink, ".csv", oldRecs, newRecs)
	bench, csv := Compare(oldB, newB, CompareOptions{}), Compare(oldC, newC, CompareOptions{})
	if len(csv) != len(bench) {
		t.Fatalf("%d comparisons from CSV, %d from benchmark files", len(csv), len(bench))
	}
	for i, b := range bench {
		c := csv[i]
		if c.Name != b.Name || c.Unit != b.Unit || c.Significant != b.Significant || c.Worse != b.Worse ||
			c.OldN != b.OldN || c.NewN != b.NewN || c.P != b.P || math.Abs(c.Delta-b.Delta) > 1e-3 {
			t.Errorf("CSV gives %+v\nbenchmark format gives %+v", c, b)
		}
	}
}

// TestWriteComparison checks the table against benchstat's, cell by cell,
// when benchstat is installed, and its marks and warnings in any case.
func TestWriteComparison(t *testing.T) {
	benchstat, _ := exec.LookPath("benchstat")
	for _, tc := range compareCases {
		t.Run(tc.name, func(t *testing.T) {
			old, new := readPair(t, benchSink, ".txt", sweep(tc.runs, 0, nil), sweep(tc.runs, tc.shift, tc.slow))
			var out bytes.Buffer
			if err := WriteComparison(&out, Compare(old, new, CompareOptions{}), "old.txt", "new.txt"); err != nil {
				t.Fatal(err)
			}
			tables := strings.Split(out.String(), "\n\n")
			if len(tables) != len(cmpUnits) {
				t.Fatalf("%d tables, want %d:\n%s", len(tables), len(cmpUnits), out.String())
			}
			for u, table := range tables {
				lines := strings.Split(strings.TrimSuffix(table, "\n"), "\n")
				if !strings.HasPrefix(lines[0], cmpUnits[u]+" ") {
					t.Errorf("table %d starts %q, want unit %s", u, lines[0], cmpUnits[u])
				}
				ours := rowCells(table)
				for i, r := range cmpRows {
					want := `~ \(p=[0-9.]+ n=` + strconv.Itoa(tc.runs) + `\)`
					if slices.Contains(tc.wantSignif, i) {
						want = `[-+][0-9]+\.[0-9]{2}% \(p=0\.000 n=10\)`
					}
					if slices.Contains(tc.wantRegressed, i) {
						want += " worse"
					}
					if cells := ours[r.name]; !regexp.MustCompile(`^\S+ ± \S+ \S+ ± \S+ ` + want + `$`).MatchString(cells) {
						t.Errorf("%s row %q, want it to end in %s", cmpUnits[u], cells, want)
					}
				}
				if tc.wantWarning != "" && !strings.Contains(table, "\nwarning: "+tc.wantWarning+" (4 of 4 rows)") {
					t.Errorf("%s table lacks the warning %q:\n%s", cmpUnits[u], tc.wantWarning, table)
				}
				if benchstat == "" || tc.runs < 10 {
					continue
				}
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				defer cancel()
				bs, err := exec.CommandContext(ctx, benchstat, "-filter", ".unit:"+cmpUnits[u], old.Path, new.Path).CombinedOutput()
				if err != nil {
					t.Fatalf("benchstat: %v\n%s", err, bs)
				}
				theirs := rowCells(string(bs))
				for _, r := range cmpRows {
					if got := strings.TrimSuffix(ours[r.name], " worse"); got != theirs[r.name] {
						t.Errorf("%s %s:\nours       %q\nbenchstat  %q", cmpUnits[u], r.name, got, theirs[r.name])
					}
				}
			}
		})
	}
}

// rowCells returns the cells of each row of a comparison table, by name,
// with spaces between cells collapsed to one.
func rowCells(table string) map[string]string {
	cells := map[string]string{}
	for _, l := range strings.Split(table, "\n") {
		if f := strings.Fields(l); len(f) > 1 && strings.Contains(f[0], "/backend=") {
			cells[f[0]] = strings.Join(f[1:], " ")
		}
	}
	return cells
}

// TestReadSamples reads the files of testdata/compare.
func TestReadSamples(t *testing.T) {
	const kib = "AllReduce/backend=shm/ranks=8/dtype=fp16/redop=sum/size=1KiB"
	for _, tc := range []struct {
		file        string
		wantErr     string // after the path; "" for none
		wantWarning string // after the path
		want        map[string][]float64
	}{
		{"bad-line.txt", "", ":3: parsing measurement",
			map[string][]float64{"AllReduce/size=1KiB sec/op": {1e-6, 2e-6}, "AllReduce/size=1KiB algbw-GB/s": {1.5, 2}}},
		{"concatenated.csv", "", "", // an empty field is left out
			map[string][]float64{kib + " sec/op": {84.2e-6, 85e-6}, kib + " algbw-GB/s": {0.01216, 0.01205}, kib + " busbw-GB/s": {0.02108}}},
		// Columns found by name: in any order, after a byte-order mark,
		// with one this reader does not know, lines ending in CRLF.
		{"reordered-bom.csv", "", "",
			map[string][]float64{kib + " sec/op": {84.2e-6}, kib + " algbw-GB/s": {0.01216}, kib + " busbw-GB/s": {0.02108}}},
		{"missing-columns.csv", ":1: the CSV header has no dtype, redop, root, in_place, algbw_GBps, busbw_GBps columns", "", nil},
		{"no-good-line.txt", ":1: parsing measurement", "", nil},
		{"empty.txt", ": no measurements", "", nil},
		{"not-results.txt", ": no measurements", "", nil},
		{"missing.txt", ": no such file", "", nil},
		{"short-row.csv", ":3: 3 fields, the header has 12", "", nil},
		{"bad-time.csv", `:2: time_us "8x4.2" is not a number`, "", nil},
		{"bad-size.csv", `:2: size_bytes "1K" is not an integer`, "", nil},
		{"bad-quote.csv", `:3: extraneous or missing " in quoted-field`, "", nil},
		{"no-busbw-column.csv", ":1: the CSV header has no busbw_GBps column", "", nil},
		{"schema-2.csv", `:2: schema_version "2": this hccl-test reads version 1`, "", nil},
		// Values that cannot be times or bandwidths are refused, not dropped.
		{"nan-time.txt", ":3: NaN ns/op: not a time (want a positive number)", "", nil},
		{"negative-time.txt", ":2: -1000 ns/op: not a time", "", nil},
		{"zero-time.txt", ":1: 0 ns/op: not a time", "", nil},
		{"inf-busbw.txt", ":1: +Inf busbw-GB/s: not a bandwidth (want a number of at least 0)", "", nil},
		{"nan-time.csv", ":3: time_us NaN: not a time", "", nil},
		{"negative-time.csv", ":2: time_us -84.2: not a time", "", nil},
		{"negative-busbw.csv", ":2: busbw_GBps -0.02: not a bandwidth", "", nil},
	} {
		t.Run(tc.file, func(t *testing.T) {
			path := filepath.Join("testdata", "compare", tc.file)
			s, err := ReadSamples(path)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), path+tc.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, path+tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(s.Warnings) != min(len(tc.wantWarning), 1) ||
				tc.wantWarning != "" && !strings.Contains(s.Warnings[0].Error(), path+tc.wantWarning) {
				t.Errorf("warnings %v, want %q", s.Warnings, tc.wantWarning)
			}
			got := map[string][]float64{}
			for k, v := range s.values {
				got[k.name+" "+k.unit] = v
			}
			if len(got) != len(tc.want) {
				t.Errorf("read %v, want %v", got, tc.want)
			}
			for k, want := range tc.want {
				if !slices.EqualFunc(got[k], want, func(g, w float64) bool { return math.Abs(g-w) <= 1e-12*w }) {
					t.Errorf("%s = %v, want %v", k, got[k], want)
				}
			}
		})
	}
}

// TestUnpairedRows checks that rows in one file only are noted, not compared.
func TestUnpairedRows(t *testing.T) {
	oldRecs, newRecs := sweep(10, 0, nil), sweep(10, 0.5, nil)
	newRecs = slices.DeleteFunc(newRecs, func(r Record) bool { return r.Op == "broadcast" })
	for i := range newRecs {
		if newRecs[i].Bytes == 64<<20 {
			newRecs[i].Bytes = 128 << 20
		}
	}
	old, new := readPair(t, benchSink, ".txt", oldRecs, newRecs)
	cs := Compare(old, new, CompareOptions{})
	if len(cs) != 3*2 {
		t.Errorf("%d comparisons, want 2 rows in 3 units", len(cs))
	}
	var out bytes.Buffer
	if err := WriteNotes(&out, old, new, "old.txt", "new.txt"); err != nil {
		t.Fatal(err)
	}
	want := "only in old.txt, not compared: 2 rows: " + cmpRows[2].name + ", " + cmpRows[3].name + "\n" +
		"only in new.txt, not compared: 1 row: " + strings.Replace(cmpRows[2].name, "64MiB", "128MiB", 1) + "\n"
	if out.String() != want {
		t.Errorf("notes\n%s\nwant\n%s", out.String(), want)
	}
}

func TestCompareOptionsValidate(t *testing.T) {
	for _, tc := range []struct {
		opt  CompareOptions
		want string // in the error; "" for none
	}{
		{CompareOptions{Alpha: 0.05}, ""},
		{CompareOptions{}, "alpha 0"},
		{CompareOptions{Alpha: 0.01, Threshold: 0.05}, ""},
		{CompareOptions{Alpha: 1}, "alpha 1"},
		{CompareOptions{Alpha: -0.1}, "alpha -0.1"},
		{CompareOptions{Alpha: math.NaN()}, "alpha NaN"},
		{CompareOptions{Alpha: 0.05, Threshold: -0.05}, "threshold -0.05"},
		{CompareOptions{Alpha: 0.05, Threshold: math.Inf(1)}, "threshold +Inf"},
	} {
		err := tc.opt.Validate()
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%+v: %v, want %q", tc.opt, err, tc.want)
		}
	}
}

// TestReadSamplesBounded reads files no parser could hold: a line longer
// than benchfmt's scanner takes (named by its own number), a sparse file
// of 1 TiB and /dev/zero (a first line longer than MaxLineBytes, refused
// after 1 MiB) and a directory.
func TestReadSamplesBounded(t *testing.T) {
	dir := t.TempDir()
	long := filepath.Join(dir, "long.txt")
	data := "goos: linux\nBenchmarkAllReduce/size=1KiB 20 1000 ns/op\n\nBenchmarkAllReduce/size=1KiB 20 " +
		strings.Repeat("1", 100<<10) + " ns/op\n"
	if err := os.WriteFile(long, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	sparse := filepath.Join(dir, "sparse.csv")
	if err := os.WriteFile(sparse, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(sparse, 1<<40); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ path, wantErr string }{
		{long, long + ":4: line too long: a Go benchmark line holds at most 64 KiB"},
		{sparse, sparse + ":1: a line longer than 1 MiB: no line of an hccl-test CSV or Go benchmark file"},
		{"/dev/zero", "/dev/zero:1: a line longer than 1 MiB"},
		{dir, dir + ": is a directory, not a file"},
	} {
		t.Run(tc.path, func(t *testing.T) {
			_, err := ReadSamples(tc.path)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
}

// TestDetectable checks the sample sizes at which the U test can reach
// alpha at all: 4 a side at 0.05 (benchstat's own warning), 5 at 0.01,
// and fewer on one side with more on the other (the smallest two-sided
// p-value is 2 over n1+n2 choose n1).
func TestDetectable(t *testing.T) {
	for _, tc := range []struct {
		n1, n2 int
		alpha  float64
		want   bool
	}{
		{1, 1, 0, false}, {3, 3, 0.05, false}, {4, 4, 0.05, true}, {4, 4, 0, true},
		{3, 4, 0.05, false}, {3, 5, 0.05, true}, {2, 10, 0.05, true}, {1, 10, 0.05, false},
		{4, 4, 0.01, false}, {5, 5, 0.01, true}, {0, 8, 0.05, false},
	} {
		if got := Detectable(tc.n1, tc.n2, tc.alpha); got != tc.want {
			t.Errorf("Detectable(%d, %d, %v) = %v, want %v", tc.n1, tc.n2, tc.alpha, got, tc.want)
		}
	}
}
