package peerlog

import (
	"slices"
	"strings"
	"testing"
)

// TestOpFromName checks the collective read from a file's name, as people
// name their logs.
func TestOpFromName(t *testing.T) {
	for _, tc := range []struct{ name, want string }{
		{"all_reduce_perf.log", "allreduce"},
		{"nccl_allreduce_8g.txt", "allreduce"},
		{"alltoall.out", "alltoall"},
		{"results/2026-11/AllGather-2nodes.log", "allgather"},
		{"reduce_scatter_test_16p.txt", "reducescatter"},
		{"all2all_64.log", "alltoall"},
		{"sendrecv_perf_mpi.log", "sendrecv"},
		{"alltoallv.log", "alltoallv"},
		{"bcast-8g.out", "broadcast"},
		{`C:\logs\reduce_perf.log`, "reduce"},
		{"allreduce16nodes.log", "allreduce"},
		{"nccl.log", ""},
		{"hccl_test-no-launch.log", ""},
		{"all_reduce_vs_all_gather.log", ""}, // two collectives: neither
		{"allreduce_and_allreduce_again.log", "allreduce"},
		{"", ""},
	} {
		if got := OpFromName(tc.name); got != tc.want {
			t.Errorf("OpFromName(%q) = %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestHeaderFacts checks what the headers of a test say beyond its rows:
// the timed iterations and every rank's host.
func TestHeaderFacts(t *testing.T) {
	two := []string{"gpu-a01", "gpu-a01", "gpu-a01", "gpu-a01", "gpu-a02", "gpu-a02", "gpu-a02", "gpu-a02"}
	for _, tc := range []struct {
		file  string
		iters int
		hosts []string // of the first test
	}{
		{"all_reduce_perf.log", 20, two},
		{"nccl-plain-no-op.log", 50, []string{"cn001", "cn002", "cn001", "cn002"}},
		{"nccl-tests-2.19.log", 20, []string{"node01", "node01", "node01", "node01", "node02", "node02", "node02", "node02"}},
		{"nccl-tests-J.json", 20, []string{"node07", "node07", "node07", "node07", "node08", "node08", "node08", "node08"}},
		{"hccl-test-J.json", 5, []string{"vm", "vm", "vm", "vm"}},
		{"all_gather_test-16p.log", 20, nil},
		{"hccl_test-no-launch.log", 30, nil},
	} {
		t.Run(tc.file, func(t *testing.T) {
			l := readLog(t, tc.file)
			if len(l.Rows) == 0 || len(l.Segments) < l.Rows[len(l.Rows)-1].Segment {
				t.Fatalf("%d rows, %d segments", len(l.Rows), len(l.Segments))
			}
			if r := l.Rows[0]; r.Iters != tc.iters {
				t.Errorf("iters %d, want %d", r.Iters, tc.iters)
			}
			if got := l.Segments[0].Hosts; !slices.Equal(got, tc.hosts) {
				t.Errorf("hosts %q, want %q", got, tc.hosts)
			}
		})
	}
}

// TestRankLines checks the rank-to-host lines that do not make a list of
// every rank's host, and the lines around them.
func TestRankLines(t *testing.T) {
	row := "        1024           256     float     sum      -1    12.03    0.09    0.15       0    12.15    0.08    0.15       0\n"
	rank := func(r int, host string) string {
		return "#  Rank " + string(rune('0'+r)) + " Group  0 Pid  1234 on " + host + " device  0 [0x1b] NVIDIA H100\n"
	}
	for _, tc := range []struct {
		name, text string
		hosts      []string
	}{
		{"every rank", rank(0, "a") + rank(1, "b") + row, []string{"a", "b"}},
		{"a rank missing", rank(0, "a") + rank(2, "b") + row, nil},
		{"old form without group", "#   Rank  0 Pid  1234 on   a device  0 [0x1b] Tesla V100\n" + "#   Rank  1 Pid  1235 on   a device  1 [0x1c] Tesla V100\n" + row, []string{"a", "a"}},
		{"no rank lines", row, nil},
		{"a rank of a later test", rank(0, "a") + row + rank(0, "b") + rank(1, "c") + row, []string{"a"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := Parse([]byte(tc.text))
			if len(l.Segments) == 0 {
				t.Fatal("no segments")
			}
			if !slices.Equal(l.Segments[0].Hosts, tc.hosts) {
				t.Errorf("hosts %q, want %q", l.Segments[0].Hosts, tc.hosts)
			}
		})
	}
	// The second test's ranks are its own.
	l := Parse([]byte(rank(0, "a") + row + rank(0, "b") + rank(1, "c") + row))
	if len(l.Segments) != 2 || !slices.Equal(l.Segments[1].Hosts, []string{"b", "c"}) {
		t.Errorf("segments %+v", l.Segments)
	}
}

// TestLaunchLines checks hccl_test's launch line as pasted: after a
// shell's prompt, piped to tee.
func TestLaunchLines(t *testing.T) {
	table := "data_size(Bytes): | aveg_time(us): | alg_bandwidth(GB/s): | check_result:\n8192              | 25.31          | 0.32367              | success\n"
	for _, line := range []string{
		"[root@node-1 hccl_test]# mpirun -n 16 ./bin/reduce_scatter_test -p 8 -b 8K -e 8K -d fp16",
		"mpirun -n 16 ./bin/reduce_scatter_test -p 8 -b 8K -e 8K -d fp16 | tee rs.log",
		"$ mpirun --allow-run-as-root -np 16 reduce_scatter_test -p 8 -d fp16 2>&1 | tee -a rs.log",
	} {
		rows := Parse([]byte(line + "\n" + table)).Rows
		if len(rows) != 1 || rows[0].Op != "reducescatter" || rows[0].Ranks != 16 || rows[0].Tool != HCCLTest || rows[0].DType != "fp16" {
			t.Errorf("%s: rows %+v", strings.Fields(line)[0], rows)
		}
	}
}
