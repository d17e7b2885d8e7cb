package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestBenchTimeRows runs --benchtime 50ms on shm at 1 KiB: the row runs
// many more iterations than -n and at least 50ms of work, the CSV's iters
// and the Go benchmark format's count are that count, and the table's
// header names --benchtime.
func TestBenchTimeRows(t *testing.T) {
	bin := buildBinary(t)
	dir := t.TempDir()
	csvPath, benchPath := filepath.Join(dir, "r.csv"), filepath.Join(dir, "r.txt")
	stdout, stderr, code := runBinary(t, bin, "-p", "2", "-b", "1K", "-e", "1K", "-n", "2", "-w", "1",
		"--link-bw", "10GB/s", "--benchtime", "50ms", "--csv", csvPath, "--bench", benchPath)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "--benchtime 50ms") {
		t.Errorf("the table's header does not name --benchtime:\n%s", stdout)
	}
	recs := readCSVFile(t, csvPath)
	if len(recs) != 2 {
		t.Fatalf("want one row, got %d lines", len(recs))
	}
	col := map[string]string{}
	for i, name := range recs[0] {
		col[name] = recs[1][i]
	}
	iters, _ := strconv.Atoi(col["iters"])
	timeUS, _ := strconv.ParseFloat(col["time_us"], 64)
	if iters <= 20 || float64(iters)*timeUS < 0.99*50e3 {
		t.Errorf("CSV iters %d of %v us: want more than 20 iterations and at least 50ms of work", iters, timeUS)
	}
	b, err := os.ReadFile(benchPath)
	if err != nil {
		t.Fatal(err)
	}
	var benchIters string
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) > 1 && strings.HasPrefix(f[0], "Benchmark") {
			benchIters = f[1]
		}
	}
	if benchIters != col["iters"] {
		t.Errorf("the Go benchmark format's count %q, the CSV's iters %q: want the same", benchIters, col["iters"])
	}
}
