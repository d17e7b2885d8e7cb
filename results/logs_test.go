package results

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// logRuns returns the runs of a test log, as compare and plot read it
// (LogRuns: a test whose collective is not known is kept).
func logRuns(t *testing.T, name string) []LogRun {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata/logs", name))
	if err != nil {
		t.Fatal(err)
	}
	runs, _ := LogRuns(name, data)
	if len(runs) == 0 {
		t.Fatalf("%s: no runs", name)
	}
	return runs
}

// TestLogRuns checks the runs and records made of logs: one run per test
// of the file, its header from what the log says, and the figures it does
// not give unknown.
func TestLogRuns(t *testing.T) {
	runs := logRuns(t, "nccl-tests-concatenated.log")
	if len(runs) != 3 {
		t.Fatalf("%d runs, want 3 (one per test)", len(runs))
	}
	for i, op := range []string{"allreduce", "allgather", "broadcast"} {
		h := runs[i].Header
		if !slices.Equal(h.Ops, []string{op}) || h.Source != "nccl-tests" || h.Backend != "nccl" || h.Ranks != 8 ||
			h.Host != "node01" || h.Placement != "both" || RunID(h) != "nccl-tests-concatenated.log#"+string(rune('1'+i)) {
			t.Errorf("run %d header %+v", i, h)
		}
	}
	r := runs[2].Records[1]
	if r.Root != 0 || !r.InPlace || r.Run != 1 || !math.IsNaN(r.Util) || !math.IsNaN(r.P50US) || r.Wrong != 0 {
		t.Errorf("broadcast record %+v", r)
	}

	// rccl-tests' second cycle measures every row again: run 2.
	cyc := logRuns(t, "rccl-tests-inplace.log")
	if len(cyc) != 1 || cyc[0].Header.Runs != 2 || cyc[0].Records[3].Run != 2 || cyc[0].Header.Placement != "in" {
		t.Errorf("cycles: %d runs, header %+v", len(cyc), cyc[0].Header)
	}

	// Its mpirun line says 8 ranks: busbw is algbw x 2(n-1)/n.
	hccl := logRuns(t, "hccl_test.log")[0]
	if r := hccl.Records[5]; math.Abs(r.BusBW-36.51743*2*7/8) > 1e-9 || r.Wrong != -1 || r.CheckNote != "failed" || r.Count != -1 || r.Iters != 20 {
		t.Errorf("hccl_test record %+v", r)
	}
	if _, err := ReadLog("testdata/logs/no-rows.log", LogOptions{}); err == nil || !strings.Contains(err.Error(), "no rows") {
		t.Errorf("a log without rows: %v", err)
	}
}

// TestLogCSV checks a converted log's CSV: the source column, and the
// columns only hccl-test measures empty.
func TestLogCSV(t *testing.T) {
	var buf bytes.Buffer
	c := NewCSV(&buf)
	for _, run := range logRuns(t, "nccl-tests-concatenated.log") {
		writeAll(t, c, run.Header, run.Records)
	}
	rows, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1+24 {
		t.Fatalf("%d rows, want the header once and 24 rows", len(rows))
	}
	col := func(name string) int { return slices.Index(rows[0], name) }
	for name, want := range map[string]string{"source": "nccl-tests", "iters": "20", "min_us": "", "slow_rank": "", "cache": "",
		"started": "", "run_id": "nccl-tests-concatenated.log#3", "op": "broadcast", "root": "0", "util_pct": "", "check_note": ""} {
		if got := rows[24][col(name)]; got != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
}

// TestCompareLogs checks that compare reads two nccl-tests logs, shows
// the change of their means, and says what one mean a side cannot decide.
func TestCompareLogs(t *testing.T) {
	// The logs themselves, and the CSV convert makes of them, compare the
	// same: one mean a side, marked and noted.
	asCSV := func(t *testing.T, name string) string {
		var buf bytes.Buffer
		c := NewCSV(&buf)
		for _, run := range logRuns(t, name) {
			writeAll(t, c, run.Header, run.Records)
		}
		path := filepath.Join(t.TempDir(), name+".csv")
		if err := os.WriteFile(path, buf.Bytes(), 0o666); err != nil {
			t.Fatal(err)
		}
		return path
	}
	for _, form := range []string{"log", "converted CSV"} {
		t.Run(form, func(t *testing.T) {
			before, after := "testdata/logs/before.log", "testdata/logs/after.log"
			if form != "log" {
				before, after = asCSV(t, "before.log"), asCSV(t, "after.log")
			}
			compareLogs(t, before, after)
		})
	}
}

func compareLogs(t *testing.T, before, after string) {
	old, err := ReadSamples(before)
	if err != nil {
		t.Fatal(err)
	}
	cur, err := ReadSamples(after)
	if err != nil {
		t.Fatal(err)
	}
	if old.Source != "nccl-tests" {
		t.Errorf("source %q", old.Source)
	}
	cs := Compare(old, cur, CompareOptions{})
	if len(cs) != 3*18 {
		t.Fatalf("%d comparisons, want 18 rows in 3 units", len(cs))
	}
	var out bytes.Buffer
	if err := WriteComparison(&out, cs, "before.log", "after.log"); err != nil {
		t.Fatal(err)
	}
	if err := WriteNotes(&out, old, cur, "before.log", "after.log"); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	for _, want := range []string{"AllReduce/backend=nccl/ranks=8/dtype=fp32/redop=sum/size=128MiB/inplace=true", "+25.00%? (p=1.000 n=1)",
		"note: before.log is a log of nccl-tests: one mean per row", "fewer than 4 measurements a side"} {
		if !strings.Contains(text, want) {
			t.Errorf("comparison lacks %q:\n%s", want, text)
		}
	}
	if und := Undecided(cs, 0.05, 0.05); len(und) == 0 {
		t.Error("a 25% slower time with one mean a side is not undecided")
	}
}

// TestReadSamplesBenchNotLog checks that a Go benchmark file is not taken
// for a log.
func TestReadSamplesBenchNotLog(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "x.txt")
	if err := os.WriteFile(path, []byte("BenchmarkAllReduce/size=1KiB 20 1000 ns/op\n"), 0o666); err != nil {
		t.Fatal(err)
	}
	s, err := ReadSamples(path)
	if err != nil || s.Source != "" {
		t.Errorf("source %q, %v", s.Source, err)
	}
}

// TestReadLogBoundsEveryLine: a line past MaxLineBytes anywhere in a log,
// not only the first, is refused naming its number, and reading stops
// there (it is not held, nor parsed).
func TestReadLogBoundsEveryLine(t *testing.T) {
	log, err := os.ReadFile("testdata/logs/nccl-tests-2.19.log")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(log), "\n")
	long := strings.Repeat("x", MaxLineBytes+1) + "\n"
	tests := []struct {
		name string
		at   int // the long line's number, from 1
		line string
		want string
	}{
		{"first line", 1, long, ":1: a line longer than 1 MiB"},
		{"in the header", 6, long, ":6: a line longer than 1 MiB"},
		{"after the rows", len(lines), long, fmt.Sprintf(":%d: a line longer than 1 MiB", len(lines))},
		{"at the bound is read", 6, strings.Repeat("x", MaxLineBytes) + "\n", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			content := strings.Join(lines[:tc.at-1], "") + tc.line + strings.Join(lines[tc.at-1:], "")
			path := filepath.Join(t.TempDir(), "all_reduce_perf.log")
			if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
			runs, err := ReadLog(path, LogOptions{})
			if tc.want == "" {
				if err != nil || len(runs) == 0 {
					t.Fatalf("a line of the most allowed: %v, %d runs", err, len(runs))
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), path+tc.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("got %v, want one line with %q", err, path+tc.want)
			}
		})
	}
}
