package plot

import (
	"bufio"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hccl-test/hccl-test/results"
)

// testHeader is the run the tests write: shm, 8 ranks, algo auto.
func testHeader(link float64) results.Header {
	return results.Header{
		Version: "0.1.0", Backend: "shm", Ranks: 8, Algo: "auto", Placement: "out",
		Ops: []string{"allreduce", "allgather"}, DTypes: []string{"fp32"}, RedOps: []string{"sum"},
		Iters: 5, Warmup: 1, LinkGBps: link, LinkSource: "test", Runs: 3,
		Started: time.Date(2026, 11, 29, 17, 0, 0, 0, time.UTC), Host: "node01",
	}
}

// Sizes, and the times and bus bandwidths of the three runs of each row.
// Run 2 is slowest and run 1 fastest, so the median time is run 3's; the
// bandwidths are chosen apart from the times, so that their median (run
// 2's) is told from the bandwidth of the median-time run. Every value has
// at most four significant digits, so the Go benchmark format keeps it.
var (
	testSizes = []int64{1 << 10, 4 << 10, 1 << 20}
	testTimes = []float64{100, 400, 200} // times 1, 2, 4 for the sizes
	testBusBW = []float64{0.5, 2, 1}     // times 1, 2, 4 for the sizes
	// Each op scales times and bandwidths by its factor, so that the
	// lines of the two differ.
	testOps = []struct {
		op, redop string
		factor    float64
	}{{"allreduce", "sum", 1}, {"allgather", "none", 3}}
)

// testRecords returns the rows of runs (1-based, in testTimes) for every
// op and size, plus a 0-byte row that Load must leave out.
func testRecords(runs ...int) []results.Record {
	var recs []results.Record
	for _, run := range runs {
		for _, o := range testOps {
			for i, b := range append([]int64{0}, testSizes...) {
				scale := math.Exp2(float64(i-1)) * o.factor
				recs = append(recs, results.Record{
					Op: o.op, DType: "fp32", RedOp: o.redop, Root: -1, Algo: "ring",
					Bytes: b, Count: b / 4, Iters: 5, TimeUS: testTimes[run-1] * scale,
					AlgBW: testBusBW[run-1] * scale / 2, BusBW: testBusBW[run-1] * scale,
					Util: math.NaN(), Wrong: -1, Run: run,
				})
			}
		}
	}
	return recs
}

// writeFile writes a run through sink to a new file in dir.
func writeFile(t testing.TB, name string, sink func(*bufio.Writer) results.Sink, h results.Header, recs []results.Record) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w := bufio.NewWriter(f)
	s := sink(w)
	if err := s.Begin(h); err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if err := s.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.End(results.Summary{Rows: len(recs)}); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return path
}

func csvSink(w *bufio.Writer) results.Sink   { return results.NewCSV(w) }
func benchSink(w *bufio.Writer) results.Sink { return results.NewBenchFmt(w) }

// wantPoints returns the points of the series of testRecords with factor
// 1 when the median time is medTime and the median bandwidth medBW at 1
// KiB, over rows runs each.
func wantPoints(medTime, medBW float64, rows int) []Point {
	var ps []Point
	for i, b := range testSizes {
		scale := math.Exp2(float64(i))
		ps = append(ps, Point{Bytes: b, TimeUS: medTime * scale, BusBW: medBW * scale, Rows: rows})
	}
	return ps
}

func checkData(t *testing.T, d *Data, wantLink float64, want []Point) {
	t.Helper()
	if d.Title != "fp32, shm, 8 ranks, algo auto" {
		t.Errorf("title %q", d.Title)
	}
	if d.LinkGBps != wantLink {
		t.Errorf("link %v GB/s, want %v", d.LinkGBps, wantLink)
	}
	if len(d.Series) != len(testOps) {
		t.Fatalf("%d series, want %d: %+v", len(d.Series), len(testOps), d.Series)
	}
	for i, o := range testOps {
		s := d.Series[i]
		wantKey := Key{Op: o.op, DType: "fp32", RedOp: o.redop, Backend: "shm", Ranks: 8, Algo: "auto"}
		if s.Key != wantKey {
			t.Errorf("series %d key %+v, want %+v", i, s.Key, wantKey)
		}
		if s.Label != o.op {
			t.Errorf("series %d label %q, want %q", i, s.Label, o.op)
		}
		if len(s.Points) != len(want) {
			t.Errorf("%s: points %+v, want %+v", o.op, s.Points, want)
			continue
		}
		for j, p := range s.Points {
			w := want[j]
			w.TimeUS *= o.factor
			w.BusBW *= o.factor
			if p.Bytes != w.Bytes || p.Rows != w.Rows ||
				math.Abs(p.TimeUS-w.TimeUS) > 1e-9*w.TimeUS || math.Abs(p.BusBW-w.BusBW) > 1e-9*w.BusBW {
				t.Errorf("%s point %d = %+v, want %+v", o.op, j, p, w)
			}
		}
	}
}

func TestLoad(t *testing.T) {
	three := testRecords(1, 2, 3)
	for _, c := range []struct {
		name  string
		files func(t *testing.T) []string
		link  float64
		want  []Point
	}{{
		name: "CSV, three runs: each median is the middle run's",
		files: func(t *testing.T) []string {
			return []string{writeFile(t, "a.csv", csvSink, testHeader(12.5), three)}
		},
		link: 12.5, want: wantPoints(200, 1, 3),
	}, {
		name: "Go benchmark format, three runs",
		files: func(t *testing.T) []string {
			return []string{writeFile(t, "a.txt", benchSink, testHeader(12.5), three)}
		},
		link: 12.5, want: wantPoints(200, 1, 3), // from the comment line
	}, {
		name: "CSV files concatenated, one without a link",
		files: func(t *testing.T) []string {
			a, err := os.ReadFile(writeFile(t, "a.csv", csvSink, testHeader(0), testRecords(1)))
			if err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(writeFile(t, "b.csv", csvSink, testHeader(25), testRecords(2, 3)))
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(t.TempDir(), "ab.csv")
			if err := os.WriteFile(path, append(a, b...), 0o644); err != nil {
				t.Fatal(err)
			}
			return []string{path}
		},
		link: 25, want: wantPoints(200, 1, 3),
	}} {
		t.Run(c.name, func(t *testing.T) {
			d, err := Load(c.files(t)...)
			if err != nil {
				t.Fatal(err)
			}
			checkData(t, d, c.link, c.want)
		})
	}
}

func TestLoadErrors(t *testing.T) {
	dir := t.TempDir()
	file := func(name, content string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	header := "schema_version,op,dtype,size_bytes,time_us,busbw_GBps\n"
	for _, c := range []struct {
		name   string
		paths  []string
		is     error    // errors.Is, if not nil
		saying []string // the message says all of these
	}{
		{"no files", nil, nil, []string{"no files"}},
		{"empty file", []string{file("empty.csv", "")}, ErrNoData, []string{"empty.csv", "empty"}},
		{"blank lines", []string{file("blank.txt", "\n  \n")}, ErrNoData, []string{"empty"}},
		{"CSV header only", []string{file("header.csv", header)}, ErrNoData, []string{"without rows"}},
		{"text", []string{file("notes.txt", "hello\nworld\n")}, ErrNoData, []string{"notes.txt", "no hccl-test rows"}},
		{"JSON lines", []string{file("r.jsonl", `{"op":"allreduce"}`+"\n")}, nil, []string{"JSON lines", "--csv or --bench"}},
		{"missing file", []string{filepath.Join(dir, "nope.csv")}, os.ErrNotExist, []string{"nope.csv"}},
		{"bad size", []string{file("bad.csv", header+"1,allreduce,fp32,lots,1,1\n")}, nil, []string{"line 2", "size_bytes"}},
		{"CSV without busbw", []string{file("old.csv", "schema_version,op,size_bytes,time_us\n")}, nil, []string{"busbw_GBps"}},
		{"bad benchmark size", []string{file("bad.txt", "BenchmarkAllReduce/size=12XB 1 100 ns/op\n")}, nil, []string{"bad.txt: line 1", "12XB"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			d, err := Load(c.paths...)
			if err == nil {
				t.Fatalf("no error; data %+v", d)
			}
			if c.is != nil && !errors.Is(err, c.is) {
				t.Errorf("error %q is not %v", err, c.is)
			}
			for _, s := range c.saying {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not say %q", err, s)
				}
			}
		})
	}
}

func TestParseBinarySize(t *testing.T) {
	for _, b := range []int64{1, 1000, 1 << 10, 1536, 3 << 20, 5 << 29, 2 << 40, 1<<20 + 1} {
		got, err := parseBinarySize(results.FormatBinarySize(b))
		if err != nil || got != b {
			t.Errorf("parseBinarySize(%q) = %d, %v; want %d", results.FormatBinarySize(b), got, err, b)
		}
	}
	for _, s := range []string{"", "KiB", "1KB", "-1B", "1.5", "1e30TiB", "NaNB"} {
		if _, err := parseBinarySize(s); err == nil {
			t.Errorf("parseBinarySize(%q): no error", s)
		}
	}
}

func TestLabels(t *testing.T) {
	k := Key{Op: "allreduce", DType: "fp16", RedOp: "sum", Backend: "shm", Ranks: 8, Algo: "auto"}
	with := func(f func(*Key)) Key { k := k; f(&k); return k }
	for _, c := range []struct {
		name   string
		keys   []Key
		title  string
		labels []string
	}{
		{"one series", []Key{k}, "fp16, shm, 8 ranks, algo auto", []string{"allreduce"}},
		{"backends and an op", []Key{k, with(func(k *Key) { k.Backend = "tcp" }), with(func(k *Key) { k.Op, k.RedOp = "allgather", "none" })},
			"fp16, 8 ranks, algo auto", []string{"allreduce shm", "allreduce tcp", "allgather shm"}},
		{"in-place and out-of-place", []Key{k, with(func(k *Key) { k.InPlace = true })},
			"fp16, shm, 8 ranks, algo auto", []string{"allreduce out-of-place", "allreduce in-place"}},
		{"all in-place", []Key{with(func(k *Key) { k.InPlace = true })},
			"fp16, shm, 8 ranks, algo auto, in-place", []string{"allreduce"}},
		{"redops: sum is unsaid", []Key{k, with(func(k *Key) { k.RedOp = "max" })},
			"fp16, shm, 8 ranks, algo auto", []string{"allreduce", "allreduce max"}},
		{"algorithms and ranks", []Key{with(func(k *Key) { k.Algo = "ring" }), with(func(k *Key) { k.Algo, k.Ranks = "rd", 4 })},
			"fp16, shm", []string{"allreduce 8 ranks algo ring", "allreduce 4 ranks algo rd"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := &Data{}
			for _, k := range c.keys {
				d.Series = append(d.Series, Series{Key: k})
			}
			d.label()
			if d.Title != c.title {
				t.Errorf("title %q, want %q", d.Title, c.title)
			}
			for i, s := range d.Series {
				if s.Label != c.labels[i] {
					t.Errorf("label %d %q, want %q", i, s.Label, c.labels[i])
				}
			}
		})
	}
}

// TestLoadSeveralAlgos: a run of --algo auto,ring gives one series per
// algorithm, from its CSV and from its Go benchmark file alike.
func TestLoadSeveralAlgos(t *testing.T) {
	h := testHeader(12.5)
	h.Algo = "auto,ring"
	var recs []results.Record
	for _, r := range testRecords(1) {
		for _, algo := range []string{"auto", "ring"} {
			r.AlgoRequested = algo
			recs = append(recs, r)
		}
	}
	for _, file := range []string{
		writeFile(t, "a.csv", csvSink, h, recs),
		writeFile(t, "a.txt", benchSink, h, recs),
	} {
		d, err := Load(file)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, s := range d.Series {
			got = append(got, s.Key.Op+" "+s.Key.Algo)
		}
		if len(got) != 2*len(testOps) || got[0] != testOps[0].op+" auto" || got[1] != testOps[0].op+" ring" {
			t.Errorf("%s: series %q, want each op once per algorithm", filepath.Base(file), got)
		}
	}
}

// TestLoadBounded loads files no reader could hold: a Go benchmark line
// too long for the scanner (named by its own number), /dev/zero and a
// sparse file of 1 TiB (a first line longer than results.MaxLineBytes),
// and a directory.
func TestLoadBounded(t *testing.T) {
	dir := t.TempDir()
	long := filepath.Join(dir, "long.txt")
	data := "goos: linux\n\nBenchmarkAllReduce/size=1KiB 20 " + strings.Repeat("1", 70<<10) + " ns/op\n"
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
		{long, long + ": line 3: line too long: a Go benchmark line holds at most 64 KiB"},
		{"/dev/zero", "/dev/zero:1: a line longer than 1 MiB: no line of an hccl-test CSV or Go benchmark file"},
		{sparse, sparse + ":1: a line longer than 1 MiB: no line of an hccl-test CSV or Go benchmark file"},
		{dir, dir + ": is a directory, not a file"},
	} {
		t.Run(tc.path, func(t *testing.T) {
			_, err := Load(tc.path)
			if err == nil || err.Error() != tc.wantErr && !strings.HasPrefix(err.Error(), tc.wantErr) {
				t.Fatalf("error %v, want %q", err, tc.wantErr)
			}
		})
	}
}

// TestLoadLogs checks that plot reads other tools' logs: each test of a
// log, each placement, its own series, size-0 rows left out.
func TestLoadLogs(t *testing.T) {
	for _, tc := range []struct {
		files  []string
		series int
		points int // of the first series
		label  string
	}{
		{[]string{"nccl-tests-concatenated.log"}, 6, 4, "allreduce run nccl-tests-concatenated.log#1 out-of-place"},
		{[]string{"nccl-tests-mpirun.log"}, 2, 4, "reducescatter out-of-place"},
		{[]string{"hccl_test.log"}, 1, 7, "allreduce"},
		{[]string{"before.log", "after.log"}, 4, 9, "allreduce before.log out-of-place"},
	} {
		t.Run(strings.Join(tc.files, "+"), func(t *testing.T) {
			var paths []string
			for _, f := range tc.files {
				paths = append(paths, filepath.Join("../testdata/logs", f))
			}
			d, err := Load(paths...)
			if err != nil {
				t.Fatal(err)
			}
			if len(d.Series) != tc.series || len(d.Series[0].Points) != tc.points || d.Series[0].Label != tc.label {
				t.Errorf("%d series, the first %q with %d points; want %d, %q with %d", len(d.Series), d.Series[0].Label,
					len(d.Series[0].Points), tc.series, tc.label, tc.points)
			}
		})
	}
	if _, err := Load("../testdata/logs/no-rows.log"); !errors.Is(err, ErrNoData) {
		t.Errorf("a log without rows: %v", err)
	}
	// hccl_test prints no busbw; its mpirun line says 8 ranks, so its rows
	// get ours and are plotted by busbw too.
	d, err := Load("../testdata/logs/hccl_test.log", "../testdata/logs/all_gather_test-16p.log")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range d.Series {
		for _, p := range s.Points {
			if math.IsNaN(p.BusBW) || !(p.BusBW > 0) {
				t.Fatalf("%s: %d bytes without busbw", s.Label, p.Bytes)
			}
		}
	}
}
