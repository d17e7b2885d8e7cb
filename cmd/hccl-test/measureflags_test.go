package main

import (
	"encoding/csv"
	"io"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/hccl-test/hccl-test/bench"
)

// TestMeasureFlags: nccl-tests' -a -m -z -C -c -u, short and long (with
// their underscores), set the plan's Method as nccl-tests means them.
func TestMeasureFlags(t *testing.T) {
	for _, tc := range []struct {
		args  []string
		want  bench.Method
		check bool
	}{
		{nil, bench.Method{AggIters: 1, CheckIters: 1}, true},
		{[]string{"-a", "0"}, bench.Method{Average: bench.AverageRank0, AggIters: 1, CheckIters: 1}, true},
		{[]string{"--average", "1"}, bench.Method{Average: bench.AverageMean, AggIters: 1, CheckIters: 1}, true},
		{[]string{"-a", "2"}, bench.Method{Average: bench.AverageMin, AggIters: 1, CheckIters: 1}, true},
		{[]string{"-a", "3"}, bench.Method{Average: bench.AverageMax, AggIters: 1, CheckIters: 1}, true},
		{[]string{"-m", "4", "-z", "3"}, bench.Method{AggIters: 4, Blocking: bench.BlockingIterBarrier, CheckIters: 1}, true},
		{[]string{"--agg_iters", "8", "--blocking", "1"}, bench.Method{AggIters: 8, Blocking: bench.BlockingOpBarrier, CheckIters: 1}, true},
		{[]string{"-C", "1", "-u", "3"}, bench.Method{AggIters: 1, CPUTime: true, CheckIters: 1, Unalign: 3}, true},
		{[]string{"--report_cputime", "0", "--unalign", "0"}, bench.Method{AggIters: 1, CheckIters: 1}, true},
		{[]string{"-c", "5"}, bench.Method{AggIters: 1, CheckIters: 5}, true},
		{[]string{"-c", "0"}, bench.Method{AggIters: 1}, false},
		{[]string{"--check", "1"}, bench.Method{AggIters: 1, CheckIters: 1}, true},
	} {
		p, _, err := parseFlags(tc.args, io.Discard)
		if err != nil {
			t.Errorf("%v: %v", tc.args, err)
			continue
		}
		if p.Method != tc.want || p.Check != tc.check {
			t.Errorf("%v: %+v check %v, want %+v check %v", tc.args, p.Method, p.Check, tc.want, tc.check)
		}
	}
}

// TestAverageEndToEnd runs one sweep on the sim backend, whose virtual
// times repeat exactly, under -a 2 and -a 3: every row's time under -a 2
// is no larger than under -a 3 (smaller for some), the CSV's average
// column and the table's header say which.
func TestAverageEndToEnd(t *testing.T) {
	bin := buildBinary(t)
	times := map[string][]float64{}
	for _, a := range []string{"2", "3"} {
		args := []string{"--backend", "sim", "-p", "5", "--algo", "ring", "--op", "allreduce,broadcast", "-b", "1K", "-e", "1M", "-f", "32", "-n", "4", "-w", "1", "-a", a}
		out, stderr, code := runBinary(t, bin, append(args, "--csv", "-")...)
		if code != 0 {
			t.Fatalf("-a %s: exit %d: %s", a, code, stderr)
		}
		rows, err := csv.NewReader(strings.NewReader(out)).ReadAll()
		if err != nil || len(rows) < 2 {
			t.Fatalf("-a %s: CSV %v:\n%s", a, err, out)
		}
		tc, ac := slices.Index(rows[0], "time_us"), slices.Index(rows[0], "average")
		for _, r := range rows[1:] {
			want := map[string]string{"2": "min", "3": "max"}[a]
			if r[ac] != want {
				t.Errorf("-a %s: average column %q, want %q", a, r[ac], want)
			}
			v, err := strconv.ParseFloat(r[tc], 64)
			if err != nil {
				t.Fatal(err)
			}
			times[a] = append(times[a], v)
		}
		table, _, _ := runBinary(t, bin, args...)
		if want := "(-a " + a + ")"; !strings.Contains(table, "# measured: time is ") || !strings.Contains(table, want) {
			t.Errorf("-a %s: the header does not say %s:\n%s", a, want, table)
		}
	}
	less := 0
	for i, lo := range times["2"] {
		if hi := times["3"][i]; lo > hi {
			t.Errorf("row %d: -a 2 time %v above -a 3's %v", i, lo, hi)
		} else if lo < hi {
			less++
		}
	}
	if less == 0 {
		t.Errorf("-a 2 and -a 3 gave the same times: %v", times)
	}
}

// TestMeasureFlagsEndToEnd runs every measurement flag at once on shm
// with its checks on: every row is right, has a CPU time, and the table
// shows the cputime column and says how the rows were measured.
func TestMeasureFlagsEndToEnd(t *testing.T) {
	bin := buildBinary(t)
	out, stderr, code := runBinary(t, bin, "-p", "3", "--op", "allreduce,allgather,alltoall", "-d", "fp16", "-b", "1K", "-e", "64K", "-f", "8",
		"-n", "3", "-w", "1", "--placement", "both", "--link-bw", "10GB/s", "-a", "1", "-m", "3", "-z", "1", "-C", "1", "-c", "3", "-u", "5", "--csv", "-")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	rows, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil || len(rows) < 2 {
		t.Fatalf("CSV %v:\n%s", err, out)
	}
	col := func(name string) int { return slices.Index(rows[0], name) }
	for _, r := range rows[1:] {
		cpu, err := strconv.ParseFloat(r[col("cpu_us")], 64)
		if r[col("wrong")] != "0" || err != nil || !(cpu > 0) {
			t.Errorf("%s %s B: wrong %q, cpu_us %q", r[col("op")], r[col("size_bytes")], r[col("wrong")], r[col("cpu_us")])
		}
		got := []string{r[col("average")], r[col("agg_iters")], r[col("blocking")], r[col("check_iters")], r[col("unalign")]}
		if want := []string{"mean", "3", "1", "3", "5"}; !slices.Equal(got, want) {
			t.Errorf("method columns %v, want %v", got, want)
		}
	}
}
