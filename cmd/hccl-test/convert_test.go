package main

import (
	"bytes"
	"encoding/csv"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hccl-test/hccl-test/internal/wallbound"
)

// logPath returns the path of a test log of results' testdata.
func logPath(t *testing.T, name string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("../../results/testdata/logs", name))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestConvertSubcommand converts logs to CSV on stdout and to files, and
// checks the refusals: a log without rows, an output that is an input.
func TestConvertSubcommand(t *testing.T) {
	bin := buildBinary(t)
	stdout, stderr, code := runBinary(t, bin, "convert", logPath(t, "nccl-tests-concatenated.log"), logPath(t, "hccl_test.log"))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	rows, err := csv.NewReader(strings.NewReader(stdout)).ReadAll()
	if err != nil {
		t.Fatalf("CSV on stdout does not parse: %v\n%s", err, stdout)
	}
	if len(rows) != 1+24+7 {
		t.Fatalf("%d CSV rows, want a header and 24 + 7 rows", len(rows))
	}
	col := func(name string) int { return slices.Index(rows[0], name) }
	// Its mpirun line says 8 ranks: busbw is algbw 39.06853 x 2(8-1)/8.
	if got := rows[len(rows)-1]; got[col("source")] != "hccl_test" || got[col("busbw_GBps")] != "68.3699275" || got[col("check_note")] != "not checked" ||
		got[col("op")] != "allreduce" || got[col("size_bytes")] != "33554432" {
		t.Errorf("last row (hccl_test) %q", got)
	}

	dir := t.TempDir()
	benchOut, jsonOut := filepath.Join(dir, "x.txt"), filepath.Join(dir, "x.json")
	if _, stderr, code := runBinary(t, bin, "convert", "--bench", benchOut, "--json", jsonOut, logPath(t, "nccl-tests-J.json")); code != 0 {
		t.Fatalf("--bench --json: exit %d: %s", code, stderr)
	}
	bench, _ := os.ReadFile(benchOut)
	json, _ := os.ReadFile(jsonOut)
	if !strings.Contains(string(bench), "BenchmarkAllReduce/backend=nccl/ranks=8/dtype=fp32/redop=sum/size=128MiB/inplace=true ") ||
		!strings.Contains(string(bench), "source: nccl-tests") || strings.Count(string(json), "\n") != 6 {
		t.Errorf("bench:\n%s\njson:\n%s", bench, json)
	}

	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no rows", []string{logPath(t, "no-rows.log")}, "no-rows.log: no rows of nccl-tests, rccl-tests, hccl_test or nccom-test output in its 5 lines"},
		{"no log", nil, "want at least one log"},
		{"output is the log", []string{"--csv", logPath(t, "before.log"), logPath(t, "before.log")}, "the output would replace it"},
		{"two outputs on one file", []string{"--csv", "-", "--json", "-", logPath(t, "before.log")}, "are one file"},
		{"collective not known", []string{logPath(t, "nccl-plain-no-op.log")}, "give it with --op (--op allreduce)"},
		{"--op a reduction", []string{"--op", "sum", logPath(t, "nccl-plain-no-op.log")}, `--op: "sum" is a reduction, not a collective`},
		{"--op unknown", []string{"--op", "allreduse", logPath(t, "nccl-plain-no-op.log")}, `--op: unknown collective "allreduse"`},
		{"--op against the log", []string{"--op", "allgather", logPath(t, "nccl-tests-2.19.log")}, "--op allgather: the log says its test is allreduce"},
		{"--ranks 0", []string{"--ranks", "0", "--op", "allreduce", logPath(t, "hccl_test-no-launch.log")}, "--ranks 0: want the ranks of the run"},
		{"--ranks huge", []string{"--ranks", "99999999999999999999", logPath(t, "hccl_test-no-launch.log")}, "--ranks"},
		{"--ranks against the log", []string{"--ranks", "4", logPath(t, "hccl_test.log")}, "--ranks 4: the log says its test ran on 8"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stdout, stderr, code := runBinary(t, bin, append([]string{"convert"}, tc.args...)...)
			if code != exitUsage || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, tc.want) || stdout != "" {
				t.Errorf("exit %d, stdout %q, stderr %q; want 2 and one line saying %q", code, stdout, stderr, tc.want)
			}
		})
	}
	// A plain log takes its collective from its name, or from --op; its
	// --bench says its hosts, not this machine's goos.
	for _, args := range [][]string{{logPath(t, "all_reduce_perf.log")}, {"--op", "all_reduce", logPath(t, "nccl-plain-no-op.log")},
		{"--op", "allreduce", "--ranks", "16", logPath(t, "hccl_test-no-launch.log")}} {
		stdout, stderr, code := runBinary(t, bin, append([]string{"convert", "--bench", "-"}, args...)...)
		if code != 0 || !strings.Contains(stdout, "BenchmarkAllReduce/") || strings.Contains(stdout, "goos:") || !strings.Contains(stdout, "busbw-GB/s") {
			t.Errorf("%q: exit %d %s\n%s", args, code, stderr, stdout)
		}
	}
	if stdout, _, _ := runBinary(t, bin, "convert", "--bench", "-", logPath(t, "all_reduce_perf.log")); !strings.Contains(stdout, "hosts: gpu-a01,gpu-a02\nservers: 2 servers x 4 ranks\n") {
		t.Errorf("--bench of a log on two hosts:\n%s", stdout)
	}
	if st, err := os.Stat(logPath(t, "before.log")); err != nil || st.Size() == 0 {
		t.Errorf("the refused output touched its log: %v", err)
	}
}

// TestCompareAndPlotLogs runs compare on two all_reduce_perf logs (one
// mean a side: the change shown, marked undecided, and the note saying
// why; --threshold exits 5, undecided) and plot on them.
func TestCompareAndPlotLogs(t *testing.T) {
	bin := buildBinary(t)
	before, after := logPath(t, "before.log"), logPath(t, "after.log")
	stdout, stderr, code := runBinary(t, bin, "compare", before, after)
	if code != 0 || !strings.Contains(stdout, "+25.00%? (p=1.000 n=1)") || !strings.Contains(stdout, "is a log of nccl-tests: one mean per row") {
		t.Errorf("compare: exit %d, stderr %s\n%s", code, stderr, stdout)
	}
	_, stderr, code = runBinary(t, bin, "compare", "--threshold", "5%", before, after)
	// --runs is no flag of nccl-tests': the message says its -N.
	if code != exitUndecided || !strings.Contains(stderr, "too few measurements to decide") ||
		!strings.Contains(stderr, "with 4 measurements of each row a side (nccl-tests' -N 4 measures each row 4 times in one log)") || strings.Contains(stderr, "--runs") {
		t.Errorf("compare --threshold 5%%: exit %d, want %d: %s", code, exitUndecided, stderr)
	}
	img := filepath.Join(t.TempDir(), "p.svg")
	if _, stderr, code := runBinary(t, bin, "plot", "-o", img, before, after); code != 0 {
		t.Errorf("plot: exit %d: %s", code, stderr)
	}
	if st, err := os.Stat(img); err != nil || st.Size() == 0 {
		t.Errorf("plot wrote no image: %v", err)
	}
}

// TestConvertLongLine: a line of 60 MB past a log's header (its first line
// is short) is refused in one line naming its number, exit 2, and at once:
// within the slack of converting the log without it, measured now
// (wallbound); reading it whole took 11 s and ended in "no rows".
func TestConvertLongLine(t *testing.T) {
	bin := buildBinary(t)
	good := logPath(t, "nccl-tests-2.19.log")
	log, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(log), "\n")
	path := filepath.Join(t.TempDir(), "long.log")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	long := bytes.Repeat([]byte("x"), 1<<20)
	_, err = f.WriteString(strings.Join(lines[:5], ""))
	for range 60 {
		if err == nil {
			_, err = f.Write(long)
		}
	}
	if err == nil {
		_, err = f.WriteString("\n" + strings.Join(lines[5:], ""))
	}
	if err := errors.Join(err, f.Close()); err != nil {
		t.Fatal(err)
	}
	base := wallbound.Baseline(func() {
		if _, stderr, code := runBinary(t, bin, "convert", good); code != 0 {
			t.Fatalf("convert %s: exit %d: %s", good, code, stderr)
		}
	})
	stdout, stderr, code := runBounded(t, wallbound.Bound(0, base), bin, "convert", path)
	want := path + ":6: a line longer than 1 MiB"
	if code != exitUsage || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, want) || stdout != "" {
		t.Errorf("exit %d, stdout %q, stderr %q; want 2 and one line saying %q", code, stdout, stderr, want)
	}
}
