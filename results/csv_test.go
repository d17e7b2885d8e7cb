package results

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// wantColumns is the column list of the brief, written out independently of
// csv.go.
var wantColumns = []string{
	"schema_version", "run_id", "started", "host", "tool_version", "backend", "ranks",
	"algo_requested", "placement_mode", "link_GBps", "link_source", "op", "dtype", "redop",
	"root", "algo", "in_place", "size_bytes", "count", "iters", "time_us", "min_us", "p50_us",
	"p99_us", "max_us", "stddev_us", "algbw_GBps", "busbw_GBps", "util_pct", "wrong", "run", "model_us", "slow_rank", "skew", "retries",
	"group", "group_size", "buckets", "fusion_speedup", "compute_us", "total_us", "overlap_eff",
	"topology", "link_inter_GBps", "faster_than_link", "cache", "timestamp", "source", "check_note",
	"average", "agg_iters", "blocking", "check_iters", "unalign", "cpu_us",
	"recv_min_bytes", "recv_mean_bytes", "recv_max_bytes", "imbalance", "hot_rank",
}

// linkSource has a comma and quotes, which a CSV field must quote.
const linkSource = `auto: each of the 8 ranks sends 32MiB to its right neighbour, all at once ("ring")`

// fmtHeader is the run the format tests write. It started at
// 2026-11-29 17:30:12.345 UTC, given in another zone.
func fmtHeader() Header {
	return Header{
		Version: "0.1.0", Backend: "shm", Ranks: 8, Algo: "auto", Placement: "both",
		Ops: []string{"allreduce", "broadcast", "reducescatter"}, DTypes: []string{"fp16"},
		RedOps: []string{"sum"}, Iters: 20, Warmup: 5, Check: true, Timeout: time.Minute,
		LinkGBps: 1.61, LinkSource: linkSource,
		Started: time.Date(2026, 11, 29, 18, 30, 12, 345e6, time.FixedZone("CET", 3600)),
		Host:    "node01",
	}
}

// fmtCase is one record and the fields every text format must show for it.
type fmtCase struct {
	name  string
	rec   Record
	want  []string // CSV fields of the row; "" is unknown
	bench string   // benchmark name
}

// fmtRun is the metadata every row of fmtHeader repeats, as CSV fields.
var fmtRun = []string{"1", "20261129T173012.345Z-node01", "2026-11-29T17:30:12Z", "node01", "0.1.0",
	"shm", "8", "auto", "both", "1.61", linkSource}

func fmtCases() []fmtCase {
	return []fmtCase{{
		name: "allreduce out of place, checked, link known",
		rec: Record{Op: "allreduce", DType: "fp16", RedOp: "sum", Root: -1, Algo: "ring",
			Bytes: 1 << 20, Count: 1 << 19, Iters: 20, TimeUS: 11185.6, MinUS: 10000, P50US: 11000.5,
			P99US: 13000, MaxUS: 14000, StdDevUS: 512.25, AlgBW: 0.09374, BusBW: 0.16405, Util: 0.1019, Wrong: 0,
			ModelUS: 9876.5, SlowRank: 5, Skew: 1.25, Retries: 3, Group: "tp", GroupSize: 4, Buckets: 4, FusionSpeedup: 2.5,
			ComputeUS: 100, TotalUS: 150, OverlapEff: 0.5,
			RecvMinBytes: 100, RecvMeanBytes: 200.5, RecvMaxBytes: 400, Imbalance: 1.995, HotRank: 3},
		want: []string{"allreduce", "fp16", "sum", "-1", "ring", "false", "1048576", "524288", "20",
			"11185.6", "10000", "11000.5", "13000", "14000", "512.25", "0.09374", "0.16405", "10.19", "0", "0", "9876.5", "5", "1.25", "3",
			"tp", "4", "4", "2.5", "100", "150", "0.5", "", "", "false", "warm", "", "hccl-test", "", "max", "1", "0", "1", "0", "",
			"100", "200.5", "400", "1.995", "3"},
		bench: "AllReduce/backend=shm/ranks=8/group=tp/dtype=fp16/redop=sum/size=1MiB/buckets=4",
	}, {
		name: "broadcast in place from root 3, unchecked, util unknown",
		rec: Record{Op: "broadcast", DType: "fp32", RedOp: "none", Root: 3, Algo: "tree", InPlace: true,
			Bytes: 6144, Count: 1536, Iters: 50, TimeUS: 84.25, MinUS: 80, P50US: 84, P99US: 90.5, MaxUS: 91,
			StdDevUS: 2.5, AlgBW: 0.07292, BusBW: 0.07292, Util: math.NaN(), Wrong: -1},
		want: []string{"broadcast", "fp32", "none", "3", "tree", "true", "6144", "1536", "50",
			"84.25", "80", "84", "90.5", "91", "2.5", "0.07292", "0.07292", "", "", "0", "", "0", "", "0", "", "0", "1", "", "", "", "", "", "", "false", "warm", "", "hccl-test", "", "max", "1", "0", "1", "0", "", "", "", "", "", ""},
		bench: "Broadcast/backend=shm/ranks=8/dtype=fp32/root=3/size=6KiB/inplace=true",
	}, {
		name: "reducescatter with wrong elements, odd size, NaN bandwidths",
		rec: Record{Op: "reducescatter", DType: "int32", RedOp: "max", Root: -1, Algo: "direct",
			Bytes: 1000, Count: 250, Iters: 1, TimeUS: 0, Util: math.NaN(), AlgBW: math.NaN(),
			BusBW: math.NaN(), Wrong: 7},
		want: []string{"reducescatter", "int32", "max", "-1", "direct", "false", "1000", "250", "1",
			"0", "0", "0", "0", "0", "0", "", "", "", "7", "0", "", "0", "", "0", "", "0", "1", "", "", "", "", "", "", "false", "warm", "", "hccl-test", "", "max", "1", "0", "1", "0", "", "", "", "", "", ""},
		bench: "ReduceScatter/backend=shm/ranks=8/dtype=int32/redop=max/size=1000B",
	}}
}

// sameField compares a written field with the expected one: numerically
// when both are numbers (util_pct is 100 x a fraction), else exactly.
func sameField(got, want string) bool {
	g, errG := strconv.ParseFloat(got, 64)
	w, errW := strconv.ParseFloat(want, 64)
	if errG == nil && errW == nil {
		return math.Abs(g-w) <= 1e-12*math.Max(1, math.Abs(w))
	}
	return got == want
}

// writeAll runs a sink through one run of recs.
func writeAll(t *testing.T, s Sink, h Header, recs []Record) {
	t.Helper()
	if err := s.Begin(h); err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if err := s.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.End(Summary{Rows: len(recs)}); err != nil {
		t.Fatal(err)
	}
}

func caseRecords() []Record {
	var recs []Record
	for _, c := range fmtCases() {
		recs = append(recs, c.rec)
	}
	return recs
}

func TestCSVRows(t *testing.T) {
	var buf bytes.Buffer
	writeAll(t, NewCSV(&buf), fmtHeader(), caseRecords())
	rows, err := csv.NewReader(bytes.NewReader(buf.Bytes())).ReadAll()
	if err != nil {
		t.Fatalf("written CSV does not parse: %v\n%s", err, buf.String())
	}
	if !slices.Equal(rows[0], wantColumns) {
		t.Fatalf("header\n%q\nwant\n%q", rows[0], wantColumns)
	}
	cases := fmtCases()
	if len(rows) != 1+len(cases) {
		t.Fatalf("%d rows, want header + %d", len(rows), len(cases))
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			want := append(slices.Clone(fmtRun), c.want...)
			for j, got := range rows[1+i] {
				if !sameField(got, want[j]) {
					t.Errorf("%s = %q, want %q", wantColumns[j], got, want[j])
				}
			}
		})
	}
	for _, l := range strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n") {
		if strings.TrimSpace(l) != l {
			t.Errorf("line with surrounding space: %q", l)
		}
	}
}

func TestCSVFilesConcatenate(t *testing.T) {
	var a, b bytes.Buffer
	writeAll(t, NewCSV(&a), fmtHeader(), caseRecords()[:1])
	h := fmtHeader()
	h.Started, h.Host, h.LinkGBps, h.LinkSource = h.Started.Add(time.Second), "node02", 0, ""
	writeAll(t, NewCSV(&b), h, caseRecords()[1:])
	_, second, _ := strings.Cut(b.String(), "\n") // the second file without its header
	rows, err := csv.NewReader(strings.NewReader(a.String() + second)).ReadAll()
	if err != nil {
		t.Fatalf("concatenation does not parse: %v", err)
	}
	if len(rows) != 4 {
		t.Fatalf("%d rows, want header + 3", len(rows))
	}
	for i, want := range []struct{ run, host, link string }{
		{"20261129T173012.345Z-node01", "node01", "1.61"},
		{"20261129T173013.345Z-node02", "node02", ""},
		{"20261129T173013.345Z-node02", "node02", ""},
	} {
		r := rows[1+i]
		if r[1] != want.run || r[3] != want.host || r[9] != want.link {
			t.Errorf("row %d: run_id %q host %q link_GBps %q, want %+v", i+1, r[1], r[3], r[9], want)
		}
	}
}

// TestSinksFlushEveryRow checks that a row is out of every buffer as soon as
// Write returns, before End: an interrupted run keeps it.
func TestSinksFlushEveryRow(t *testing.T) {
	for _, c := range []struct {
		name string
		new  func(*bufio.Writer) Sink
		want string
	}{
		{"csv", func(w *bufio.Writer) Sink { return NewCSV(w) }, "\n1,20261129T173012.345Z-node01,"},
		{"json", func(w *bufio.Writer) Sink { return NewJSONLines(w) }, `"size_bytes":1048576`},
		{"benchfmt", func(w *bufio.Writer) Sink { return NewBenchFmt(w) }, "BenchmarkAllReduce/"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var out bytes.Buffer
			s := c.new(bufio.NewWriterSize(&out, 1<<16))
			if err := s.Begin(fmtHeader()); err != nil {
				t.Fatal(err)
			}
			if err := s.Write(caseRecords()[0]); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(out.String(), c.want) {
				t.Errorf("after one Write the output is %q, lacks %q", out.String(), c.want)
			}
		})
	}
}

// TestCSVPython reads a file with Python's csv module, and with pandas when
// it is installed; it skips when python3 is not on PATH.
func TestCSVPython(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not on PATH")
	}
	path := filepath.Join(t.TempDir(), "run.csv")
	var buf bytes.Buffer
	writeAll(t, NewCSV(&buf), fmtHeader(), caseRecords())
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	script := `
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
assert len(rows) == 3, rows
assert rows[0]["link_source"].endswith('("ring")'), rows[0]["link_source"]
assert rows[1]["util_pct"] == "" and rows[1]["wrong"] == "", rows[1]
try:
    import pandas
except ImportError:
    print("pandas: not installed")
    sys.exit(0)
df = pandas.read_csv(sys.argv[1])
assert list(df["size_bytes"]) == [1048576, 6144, 1000], df["size_bytes"]
assert df["util_pct"].isna().tolist() == [False, True, True]
assert df["in_place"].tolist() == [False, True, False]
assert df["wrong"].isna().tolist() == [False, True, False]
assert abs(df["time_us"][0] - 11185.6) < 1e-9
print("pandas: ok")
`
	out, err := exec.Command(py, "-c", script, path).CombinedOutput()
	if err != nil {
		t.Fatalf("python3: %v\n%s", err, out)
	}
	t.Logf("%s", out)
}
