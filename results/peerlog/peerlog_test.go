package peerlog

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// logsDir holds the test logs, written from each tool's output format
// (its printf formats and JSON writers), one per variant and mess.
const logsDir = "../testdata/logs"

func readLog(t *testing.T, name string) Log {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(logsDir, name))
	if err != nil {
		t.Fatal(err)
	}
	return Parse(data)
}

// TestParseLogs reads every test log and checks what it says: how many
// rows, from which tool, and the rows that carry each variant's point.
func TestParseLogs(t *testing.T) {
	for _, tc := range []struct {
		file  string
		rows  int
		tool  string
		ops   []string // per segment, in order
		check func(t *testing.T, rows []Row)
	}{
		{file: "nccl-tests-2.19.log", rows: 18, tool: NCCLTests, ops: []string{"allreduce"}, check: func(t *testing.T, rows []Row) {
			want := Row{Tool: NCCLTests, Segment: 1, Line: 26, Op: "allreduce", DType: "fp32", RedOp: "sum", Root: -1,
				Bytes: 134217728, Count: 33554432, InPlace: true, TimeUS: 2721.30, AlgBW: 49.32, BusBW: 86.31, Ranks: 8, Host: "node01",
				Iters: 20, Known: KnowTime | KnowAlgBW | KnowBusBW | KnowCount | KnowRoot | KnowPlace}
			if got := rows[17]; got != want {
				t.Errorf("last row\n%+v\nwant\n%+v", got, want)
			}
		}},
		{file: "nccl-tests-error-column.log", rows: 18, tool: NCCLTests, ops: []string{""}, check: func(t *testing.T, rows []Row) {
			if r := rows[0]; r.Wrong != 0 || r.Check != "" || r.Ranks != 4 || r.Known&KnowRoot != 0 {
				t.Errorf("error 0e+00: wrong %d check %q ranks %d known %b; want 0 wrong, 4 ranks, no root", r.Wrong, r.Check, r.Ranks, r.Known)
			}
			if r := rows[17]; r.Wrong != -1 || r.Check != "max error 5e-07" {
				t.Errorf("error 5e-07: wrong %d check %q; want no count and the error", r.Wrong, r.Check)
			}
		}},
		{file: "nccl1.log", rows: 8, tool: NCCLTests, check: func(t *testing.T, rows []Row) {
			// 20000000 bytes at 7.50 GB/s: 2.667 ms, printed in ms.
			if r := rows[0]; math.Abs(r.TimeUS-2667) > 1 || r.DType != "int8" || r.Ranks != 3 {
				t.Errorf("NCCL 1 row: time %v us type %q ranks %d; want 2667 us (2.667 ms), int8, 3 ranks", r.TimeUS, r.DType, r.Ranks)
			}
			if r := rows[4]; r.DType != "fp16" || r.Check != "max error 4e-03" {
				t.Errorf("half row: type %q check %q", r.DType, r.Check)
			}
		}},
		{file: "nccl-tests-mpirun.log", rows: 10, tool: NCCLTests, ops: []string{"reducescatter"}, check: func(t *testing.T, rows []Row) {
			if r := rows[0]; r.Bytes != 0 || r.Known&KnowTime == 0 {
				t.Errorf("size-0 row: %+v", r)
			}
			if r := rows[9]; r.Bytes != 17179869184 || r.Count != 4294967296 || r.Wrong != -1 || r.Check != "not checked" || !r.InPlace {
				t.Errorf("11-digit row with N/A: %+v", r)
			}
		}},
		{file: "nccl-tests-concatenated.log", rows: 24, tool: NCCLTests, ops: []string{"allreduce", "allgather", "broadcast"}, check: func(t *testing.T, rows []Row) {
			if r := rows[16]; r.Op != "broadcast" || r.Root != 0 || r.RedOp != "none" {
				t.Errorf("broadcast row: %+v", r)
			}
		}},
		{file: "nccl-tests-truncated.log", rows: 7, tool: NCCLTests, check: func(t *testing.T, rows []Row) {
			// The last row is cut by an error in its in-place half.
			if r := rows[6]; r.Bytes != 67108864 || r.InPlace || r.BusBW != 86.85 {
				t.Errorf("cut row: %+v; want its out-of-place half", r)
			}
		}},
		{file: "nccl-tests-J.json", rows: 6, tool: NCCLTests, ops: []string{"allreduce"}, check: func(t *testing.T, rows []Row) {
			if r := rows[5]; r.Ranks != 8 || r.Host != "node07" || !r.InPlace || r.Root != -1 || r.Wrong != 0 {
				t.Errorf("-J row: %+v", r)
			}
		}},
		{file: "nccl-tests-J-cut.json", rows: 4, tool: NCCLTests},
		{file: "rccl-tests-inplace.log", rows: 6, tool: RCCLTests, check: func(t *testing.T, rows []Row) {
			for _, r := range rows {
				if !r.InPlace || r.Known&KnowPlace == 0 || r.DType != "bf16" || r.Host != "gpu-host" {
					t.Fatalf("in-place-only row: %+v", r)
				}
			}
		}},
		{file: "rccl-tests.jsonl", rows: 4, tool: RCCLTests, ops: []string{"allreduce"}},
		{file: "rccl-tests-list-cut.json", rows: 2, tool: RCCLTests, check: func(t *testing.T, rows []Row) {
			if r := rows[0]; r.Ranks != 16 || r.DType != "fp16" || r.Wrong != -1 {
				t.Errorf("list row: ranks %d type %q wrong %d; want 2 x 8 ranks, fp16, N/A", r.Ranks, r.DType, r.Wrong)
			}
		}},
		{file: "rccl-tests.csv", rows: 2, tool: RCCLTests, check: func(t *testing.T, rows []Row) {
			if r := rows[1]; r.Op != "reducescatter" || r.Ranks != 8 || r.Bytes != 8388608 {
				t.Errorf("CSV row with the nodes column unnamed: %+v", r)
			}
		}},
		{file: "hccl_test.log", rows: 7, tool: HCCLTest, ops: []string{"allreduce"}, check: func(t *testing.T, rows []Row) {
			if r := rows[0]; r.DType != "fp32" || r.RedOp != "sum" || r.Ranks != 8 || r.Wrong != 0 || r.Known&KnowBusBW != 0 {
				t.Errorf("hccl_test row: %+v", r)
			}
			if rows[5].Check != "failed" || rows[6].Check != "not checked" {
				t.Errorf("checks %q, %q; want failed, not checked", rows[5].Check, rows[6].Check)
			}
		}},
		{file: "nccom-test.log", rows: 5, tool: NccomTest, ops: []string{"allgather"}, check: func(t *testing.T, rows []Row) {
			if r := rows[4]; r.Ranks != 32 || r.Bytes != 1073741824 || r.TimeUS != 10777 {
				t.Errorf("nccom-test row: %+v", r)
			}
		}},
		{file: "no-rows.log", rows: 0},
	} {
		t.Run(tc.file, func(t *testing.T) {
			l := readLog(t, tc.file)
			if len(l.Rows) != tc.rows {
				t.Fatalf("%d rows, want %d", len(l.Rows), tc.rows)
			}
			var ops []string
			for i, r := range l.Rows {
				if r.Tool != tc.tool {
					t.Errorf("row %d: tool %q, want %q", i, r.Tool, tc.tool)
				}
				if r.Segment > len(ops) {
					ops = append(ops, r.Op)
				}
			}
			if tc.ops != nil && strings.Join(ops, ",") != strings.Join(tc.ops, ",") {
				t.Errorf("ops by test %q, want %q", ops, tc.ops)
			}
			if tc.check != nil {
				tc.check(t, l.Rows)
			}
		})
	}
}

// TestLines checks single lines: data, not data, and the headerless
// shapes that are read or refused.
func TestLines(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		rows       int
	}{
		{"NCCL INFO line", "node01:4000:4000 [0] NCCL INFO Channel 00/02 : 0 1 2 3", 0},
		{"MPI warning", "[node02:01234] 7 more processes have sent help message", 0},
		{"elided rows", "         ...", 0},
		{"footer", "# Avg bus bandwidth    : 95.3006", 0},
		{"modern row without header", "  1024  256  float  sum  -1  10.2  0.10  0.18  0  10.3  0.10  0.17  0", 2},
		{"srun-labelled row", "0:   1024  256  float  sum  -1  10.2  0.10  0.18  0  10.3  0.10  0.17  0", 2},
		{"error-column row in us", "1048576 262144 float sum 30.97 33.86 59.25 0e+00 31.28 33.52 58.66 0e+00", 2},
		{"error-column row whose unit it does not tell", "8 2 float sum 10.00 0.00 0.00 0e+00 10.10 0.00 0.00 0e+00", 0},
		{"hccl_test row without header", "8192              | 25.31          | 0.32367              | success", 1},
		{"rccl JSON line cut in half", `{"name":"AllReduce", "gpus":4, "size":1024, "type":"float", "redop":"sum", "inPl`, 0},
		{"rccl JSON line", `{"name":"AllReduce", "gpus":4, "size":1024, "type":"float", "redop":"sum", "inPlace":1, "time":10.5, "algBw":0.1, "busBw":0.15, "wrong":"0"},`, 1},
		{"negative time", "  1024  256  float  sum  -1  -10.2  0.10  0.18  0  10.3  0.10  0.17  0", 2},
		{"garbage type", "  1024  256  fl/at  sum  -1  10.2  0.10  0.18  0  10.3  0.10  0.17  0", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := len(Parse([]byte(tc.text + "\n")).Rows); got != tc.rows {
				t.Errorf("%d rows, want %d", got, tc.rows)
			}
		})
	}
	// The negative time is not a figure: its half has no time.
	if r := Parse([]byte("  1024  256  float  sum  -1  -10.2  0.10  0.18  0  10.3  0.10  0.17  0\n")).Rows[0]; r.Known&KnowTime != 0 {
		t.Errorf("negative time read as %v", r.TimeUS)
	}
}

// checkRows fails if a row has a figure that is not a measurement.
func checkRows(t *testing.T, rows []Row) {
	t.Helper()
	for _, r := range rows {
		for _, f := range []struct {
			name  string
			known int
			v     float64
		}{{"time", KnowTime, r.TimeUS}, {"algbw", KnowAlgBW, r.AlgBW}, {"busbw", KnowBusBW, r.BusBW},
			{"min", KnowMin, r.MinUS}, {"max", KnowMax, r.MaxUS}, {"p99", KnowP99, r.P99US}} {
			if math.IsNaN(f.v) || math.IsInf(f.v, 0) || f.v < 0 || (r.Known&f.known == 0 && f.v != 0) {
				t.Fatalf("row %+v: %s %v", r, f.name, f.v)
			}
		}
		if r.Known&KnowTime != 0 && !(r.TimeUS > 0) {
			t.Fatalf("row %+v: time %v", r, r.TimeUS)
		}
		if r.Bytes < 0 || r.Count < 0 || r.Wrong < -1 || r.Ranks < 0 || r.Root < -1 || r.Segment < 1 {
			t.Fatalf("row %+v: a negative count", r)
		}
	}
}

// FuzzParse checks that no input makes Parse panic or return a figure
// that is not a measurement. The seeds are the test logs.
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join(logsDir, "*"))
	for _, name := range files {
		if data, err := os.ReadFile(name); err == nil {
			f.Add(data)
		}
	}
	f.Add([]byte("8 2 float sum -1 1e308 1e308 1e308 1e+300 NaN -0 inf 9999999999999999999999\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		checkRows(t, Parse(data).Rows)
	})
}

func TestLogsRowsAreMeasurements(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(logsDir, "*"))
	if len(files) < 10 {
		t.Fatalf("%d test logs", len(files))
	}
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		checkRows(t, Parse(data).Rows)
	}
}

// TestHeaderVariants reads nccl-tests' tables with -C (cputime), -S (a
// timestamp of two fields after each line) and -I (per-iteration
// columns), each from its header.
func TestHeaderVariants(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		want       []Row // the fields checked: Bytes, InPlace, TimeUS, BusBW, MinUS, MaxUS, P99US
	}{
		{"cputime and timestamp", `#       size         count      type   redop    root  cputime   algbw   busbw  #wrong  cputime   algbw   busbw  #wrong           timestamp
#        (B)    (elements)                               (us)  (GB/s)  (GB/s)             (us)  (GB/s)  (GB/s)          %Y-%m-%d %H:%M:%S
        1024           256     float     sum      -1     5.10    0.20    0.35       0     5.20    0.20    0.34       0 2026-11-30 10:00:01
`, []Row{{Bytes: 1024, TimeUS: 5.1, BusBW: 0.35}, {Bytes: 1024, InPlace: true, TimeUS: 5.2, BusBW: 0.34}}},
		{"per-iteration columns", `#       size         count      type   redop    root     time   algbw   busbw  #wrong    i_min    i_max    i_p99    i_cv%     time   algbw   busbw  #wrong    i_min    i_max    i_p99    i_cv%
#        (B)    (elements)                               (us)  (GB/s)  (GB/s)             (us)     (us)     (us)      (%)     (us)  (GB/s)  (GB/s)             (us)     (us)     (us)      (%)
        1024           256     float     sum      -1    10.00    0.10    0.18       0     9.50    12.00    11.50     3.20    10.10    0.10    0.18       0     9.60    12.10    11.60     3.30
`, []Row{{Bytes: 1024, TimeUS: 10, BusBW: 0.18, MinUS: 9.5, MaxUS: 12, P99US: 11.5}, {Bytes: 1024, InPlace: true, TimeUS: 10.1, BusBW: 0.18, MinUS: 9.6, MaxUS: 12.1, P99US: 11.6}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rows := Parse([]byte(tc.text)).Rows
			if len(rows) != len(tc.want) {
				t.Fatalf("%d rows, want %d", len(rows), len(tc.want))
			}
			for i, w := range tc.want {
				r := rows[i]
				got := Row{Bytes: r.Bytes, InPlace: r.InPlace, TimeUS: r.TimeUS, BusBW: r.BusBW, MinUS: r.MinUS, MaxUS: r.MaxUS, P99US: r.P99US}
				if got != w {
					t.Errorf("row %d %+v, want %+v", i, got, w)
				}
			}
		})
	}
}
