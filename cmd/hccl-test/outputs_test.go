package main

import (
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/perf/benchfmt"
)

// TestOutputFiles runs one sweep three times and writes CSV, JSON lines and
// Go benchmark format at once: every file holds every run's rows, and the
// table shows one median row per size.
func TestOutputFiles(t *testing.T) {
	bin := buildBinary(t)
	dir := t.TempDir()
	csvPath, jsonPath, benchPath := filepath.Join(dir, "r.csv"), filepath.Join(dir, "r.jsonl"), filepath.Join(dir, "r.txt")
	stdout, stderr, code := runBinary(t, bin, "-p", "3", "-b", "1K", "-e", "4K", "-n", "2", "-w", "1",
		"--runs", "3", "--link-bw", "10GB/s", "--csv", csvPath, "--json", jsonPath, "--bench", benchPath)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "median of its runs") {
		t.Errorf("table does not say it shows medians:\n%s", stdout)
	}
	var tableRows int
	for _, l := range strings.Split(stdout, "\n") {
		if l != "" && !strings.HasPrefix(l, "#") {
			tableRows++
		}
	}
	if tableRows != 3 {
		t.Errorf("table has %d rows, want 3 (one median per size)", tableRows)
	}

	recs := readCSVFile(t, csvPath)
	if len(recs) != 1+9 {
		t.Fatalf("CSV has %d lines, want a header and 9 rows (3 sizes x 3 runs)", len(recs))
	}
	col := map[string]int{}
	for i, name := range recs[0] {
		col[name] = i
	}
	for _, name := range []string{"time_us", "algbw_GBps", "busbw_GBps", "util_pct", "size_bytes", "run", "backend", "wrong"} {
		if _, ok := col[name]; !ok {
			t.Errorf("CSV lacks column %q", name)
		}
	}
	for _, r := range recs[1:] {
		if r[col["wrong"]] != "0" || r[col["backend"]] != "shm" {
			t.Errorf("CSV row %v", r)
		}
	}

	data, err := os.ReadFile(jsonPath)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(lines) != 9 {
		t.Fatalf("JSON lines: %d, want 9", len(lines))
	}
	for _, l := range lines {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("JSON line does not decode: %v: %s", err, l)
		}
		if m["op"] != "allreduce" || m["time_us"].(float64) <= 0 {
			t.Errorf("JSON line %v", m)
		}
	}

	bf, err := os.Open(benchPath)
	if err != nil {
		t.Fatal(err)
	}
	defer bf.Close()
	r := benchfmt.NewReader(bf, benchPath)
	names := map[string]int{}
	for r.Scan() {
		if res, ok := r.Result().(*benchfmt.Result); ok {
			names[string(res.Name.Full())]++
		}
	}
	if len(names) != 3 {
		t.Fatalf("benchmark names %v, want 3", names)
	}
	for n, c := range names {
		if c != 3 || !strings.HasPrefix(n, "AllReduce/backend=shm/ranks=3/dtype=fp32") {
			t.Errorf("benchmark %q: %d results, want 3", n, c)
		}
	}
}

// TestOutputToStdout: "-" writes a format to stdout in place of the table.
func TestOutputToStdout(t *testing.T) {
	bin := buildBinary(t)
	stdout, stderr, code := runBinary(t, bin, "-p", "2", "-b", "1K", "-e", "1K", "-n", "1", "-w", "0",
		"--link-bw", "10GB/s", "--csv", "-")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	recs, err := csv.NewReader(strings.NewReader(stdout)).ReadAll()
	if err != nil || len(recs) != 2 {
		t.Fatalf("stdout is not a CSV of one row: %v\n%s", err, stdout)
	}
	_, stderr, code = runBinary(t, bin, "--csv", "-", "--json", "-")
	if code != 2 || !strings.Contains(stderr, "stdout") {
		t.Errorf("two formats on stdout: exit %d, %q", code, stderr)
	}
	_, stderr, code = runBinary(t, bin, "--csv", filepath.Join(t.TempDir(), "no", "such", "dir.csv"))
	if code != 2 || !strings.Contains(stderr, "--csv") {
		t.Errorf("uncreatable --csv file: exit %d, %q", code, stderr)
	}
}

func TestDryRunRunsNothing(t *testing.T) {
	bin := buildBinary(t)
	// 32M: the plan must fit this machine even when other work holds
	// most of its memory (256M on 8 ranks needs 8.5 GiB, refused as such).
	stdout, stderr, code := runBinary(t, bin, "--op", "all", "-d", "fp16,fp32", "-b", "1K", "-e", "32M", "--dry-run")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"dry run", "rows:", "memory:", "estimated time:"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("dry run lacks %q:\n%s", want, stdout)
		}
	}
	if strings.Contains(stdout, "wrong elements") {
		t.Errorf("dry run ran something:\n%s", stdout)
	}
}

// readCSVFile reads a whole CSV file written by --csv.
func readCSVFile(t *testing.T, path string) [][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatalf("CSV %s does not parse: %v", path, err)
	}
	return recs
}
